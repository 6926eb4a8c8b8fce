package sim

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// The simulated fabric honours NCCL_TUNER_PLUGIN and
// NCCL_TUNER_CONFIG_FILE the way NCCL and NVIDIA's example tuner plugin
// do, so that the tuner CSV's path runs without a GPU. NCCL_TUNER_PLUGIN
// names a simulated plugin, a text file (TunerPluginFile) saying which
// NCCL source the example plugin was built from. That decides what it
// exports (2.27.5–2.27.x: v4; 2.28–2.29: v5; 2.30+: v6 and v5) and whether
// it crashes: sources before 2.30.3 index NCCL's cost table as float**
// where NCCL passes a 2-D array, and every rank dies with SIGSEGV at the
// first call a row matches. The profile's NCCL version decides what NCCL
// loads. A missing path is NCCL's "Could not find" (its own tuner runs); a
// file that is not a simulated plugin is refused (exit 2): a real library
// cannot be simulated. The loaded plugin reads the CSV and picks rows as
// the example does (loadConfig, tunerCall).

// TunerPluginHeader is the first line of a simulated tuner plugin file.
const TunerPluginHeader = "# nccltune simulated tuner plugin"

// TunerPluginFile is a simulated tuner plugin: NVIDIA's example plugin
// built from NCCL source version source ("2.28.3" crashes, "2.30.7" works).
func TunerPluginFile(source string) []byte {
	return []byte(TunerPluginHeader + " (SIMULATED: not a library; read by nccltune's simulated fabric)\nsource " + source + "\n")
}

// tunerPlugin is a simulated example plugin as NCCL loaded it: loaded is
// false when NCCL runs its own tuner, iface the interface it loaded, buggy
// a source older than 2.30.3, initLines what NCCL and the plugin log at
// init.
type tunerPlugin struct {
	requested string
	loaded    bool
	iface     int
	buggy     bool
	rows      []tunerRow
	initLines []tunerLine
}

type tunerLine struct {
	flags int
	text  string
}

// tunerRow is one config the plugin read.
type tunerRow struct {
	coll, algo, proto                        string // the plugin's names, after its defaults
	min, max                                 uint64
	channels, nodes, ranks, pipeOps, regBuff int
}

// loadTunerPlugin is NCCL's tuner plugin loading under cfg on an NCCL of
// version ver; nil when no plugin is asked for. The error is a file that
// is not a simulated plugin.
func loadTunerPlugin(cfg map[string]string, ver string, nodes, ranks int) (*tunerPlugin, error) {
	path := strings.TrimSpace(cfg["NCCL_TUNER_PLUGIN"])
	if path == "" || strings.EqualFold(path, "none") {
		return nil, nil
	}
	code := nccl.VersionCode(ver)
	t := &tunerPlugin{requested: path}
	if code >= 22800 {
		t.log(subEnv|subTuning, "NCCL_TUNER_PLUGIN set by environment to %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.log(subInit|subTuning, "TUNER/Plugin: Could not find: %s. Using internal tuner plugin.", path)
		return t, nil
	}
	source, ok := simulatedPluginSource(data)
	if !ok {
		return nil, fmt.Errorf("NCCL_TUNER_PLUGIN=%s is not a simulated tuner plugin: the SIMULATED fabric cannot load a library; "+
			"give it a file whose first line is %q and second \"source 2.30.7\" (the NCCL source the example plugin was built from; docs/SIMULATOR.md)", path, TunerPluginHeader)
	}
	src := nccl.VersionCode(source)
	if src < 22705 {
		return nil, fmt.Errorf("NCCL_TUNER_PLUGIN=%s: source %s: the example plugin reads a CSV from NCCL 2.27.5's source on", path, source)
	}
	t.buggy = src < 23003
	exports, newest := []int{4}, 4 // what the plugin exports, the newest NCCL tries
	switch {
	case src >= 23000:
		exports = []int{6, 5}
	case src >= 22800:
		exports = []int{5}
	}
	switch {
	case code >= 23000:
		newest = 6
	case code >= 22800:
		newest = 5
	}
	for v := newest; v >= 2; v-- {
		if !t.loaded && slices.Contains(exports, v) {
			t.loaded, t.iface = true, v
		}
		if !t.loaded && code < 22800 {
			suffix := "."
			if v == 2 {
				suffix = ", using internal tuner instead."
			}
			t.log(subEnv|subTuning, "TUNER/Plugin: Failed to find ncclTunerPlugin_v%d symbol%s", v, suffix)
		}
	}
	switch {
	case !t.loaded && code >= 22800:
		t.log(subInit|subTuning, "External tuner plugin %s is unsupported", path)
		return t, nil
	case !t.loaded:
		return t, nil
	case code >= 22800:
		t.log(subInit|subTuning, "TUNER/Plugin: Using Example (v%d)", t.iface)
		t.log(subInit|subTuning, "Successfully loaded external tuner plugin %s", path)
	default:
		t.log(subEnv|subTuning, "TUNER/Plugin: Using tuner plugin Example")
	}
	if src >= 22800 {
		t.log(subTuning, "TUNER/ExamplePlugin: Initializing tuner for %d nodes, %d ranks, %d NVL domains", nodes, ranks, nodes)
	} else {
		t.log(subTuning, "TUNER/ExamplePlugin: Initializing tuner for %d nodes, %d ranks", nodes, ranks)
	}
	t.loadConfig(cfg)
	return t, nil
}

func (t *tunerPlugin) log(flags int, format string, args ...any) {
	t.initLines = append(t.initLines, tunerLine{flags, fmt.Sprintf(format, args...)})
}

// retunes reports whether the plugin's pluginInit retuned NCCL's cost
// model (ncclState.pluginCap): it writes the constants NCCL hands it from
// the v5 interface on, and NCCL reads them per nccl.ExamplePluginRetunes.
func (t *tunerPlugin) retunes(gpu string, nodes int) bool {
	retunes, _ := nccl.ExamplePluginRetunes(gpu, nodes)
	return t != nil && t.loaded && t.iface >= 5 && retunes
}

// simulatedPluginSource reads a simulated plugin file's source version.
func simulatedPluginSource(data []byte) (string, bool) {
	text := string(data)
	if !strings.HasPrefix(text, TunerPluginHeader) {
		return "", false
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "source "); ok {
			return strings.TrimSpace(v), nccl.VersionCode(strings.TrimSpace(v)) > 0
		}
	}
	return "", false
}

// loadConfig is the example plugin's loadConfig: NCCL_TUNER_CONFIG_FILE,
// else nccl_tuner.conf in the working directory.
func (t *tunerPlugin) loadConfig(cfg map[string]string) {
	file, ok := cfg["NCCL_TUNER_CONFIG_FILE"]
	if !ok {
		file = "nccl_tuner.conf"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.log(subTuning, "TUNER/ExamplePlugin: Config file %s not found, using defaults", file)
		return
	}
	lines := pluginLines(data)
	if len(lines) == 0 {
		t.log(subTuning, "TUNER/ExamplePlugin: No valid configurations found in %s", file)
		return
	}
	t.log(subTuning, "TUNER/ExamplePlugin: Allocated memory for %d configurations", len(lines))
	any := func(n int) string {
		if n == -1 {
			return "any"
		}
		return fmt.Sprint(n)
	}
	for _, l := range lines {
		tok := pluginTokens(l)
		if len(tok) < 8 {
			continue
		}
		opt := func(i int) int { // the optional fields: -1 when absent
			if i < len(tok) {
				return atoi(tok[i])
			}
			return -1
		}
		r := tunerRow{coll: pluginName(tok[0], nccl.PerFunctionNames(), "allreduce"), min: strtoull(tok[1]), max: strtoull(tok[2]),
			algo: pluginName(tok[3], nccl.ExamplePluginAlgos, "ring"), proto: pluginName(tok[4], nccl.ExamplePluginProtos, "simple"),
			channels: atoi(tok[5]), nodes: atoi(tok[6]), ranks: atoi(tok[7]), pipeOps: opt(8), regBuff: opt(9)}
		t.rows = append(t.rows, r)
		t.log(subTuning, "TUNER/ExamplePlugin: Loaded config: %s [%d-%d] %s/%s channels=%d nodes=%d ranks=%d pipeOps=%s regBuff=%s",
			tok[0], r.min, r.max, tok[3], tok[4], r.channels, r.nodes, r.ranks, any(r.pipeOps), any(r.regBuff))
	}
	t.log(subTuning, "TUNER/ExamplePlugin: Loaded %d tuning configurations from %s", len(t.rows), file)
}

// pluginLines are the config lines as fgets into a 256-byte buffer reads
// them (a longer line goes on as another), without comments ('#' first),
// empty lines and the newline.
func pluginLines(data []byte) []string {
	var out []string
	text := string(data)
	for len(text) > 0 {
		n := strings.IndexByte(text, '\n') + 1
		if n == 0 || n > 255 {
			n = min(len(text), 255)
		}
		chunk := text[:n]
		text = text[n:]
		if chunk[0] != '#' && chunk[0] != '\n' {
			out = append(out, strings.TrimSuffix(chunk, "\n"))
		}
	}
	return out
}

// pluginTokens splits a line as strtok(",") does (empty fields merge),
// trims spaces and tabs, and keeps at most 10.
func pluginTokens(line string) []string {
	var out []string
	for _, f := range strings.Split(line, ",") {
		if f == "" {
			continue
		}
		out = append(out, strings.Trim(f, " \t"))
		if len(out) == 10 {
			break
		}
	}
	return out
}

// pluginName is the plugin's strcmp lookup: an unknown name reads as def.
func pluginName(s string, names []string, def string) string {
	if slices.Contains(names, s) {
		return s
	}
	return def
}

// strtoull reads a leading decimal number as C's strtoull: leading
// spaces, a sign (a negative value wraps), saturating at the maximum.
func strtoull(s string) uint64 {
	s, neg := cSign(s, " \t")
	v, err := strconv.ParseUint(digitRun(s, "0123456789"), 10, 64)
	if err != nil || !neg {
		return v // 0 without digits, the maximum when saturated
	}
	return -v
}

// atoi reads a leading decimal int as C's atoi (clamped instead of
// undefined on overflow).
func atoi(s string) int {
	s, neg := cSign(s, " \t")
	v, _ := strconv.ParseInt(digitRun(s, "0123456789"), 10, 64)
	v = min(v, math.MaxInt32)
	if neg {
		return -int(v)
	}
	return int(v)
}

// tunerInit logs rank r's plugin loading.
func (l *launch) tunerInit(r int) {
	if l.tuner == nil {
		return
	}
	for _, line := range l.tuner.initLines {
		l.log.info(l.ids[r], line.flags, "%s", line.text)
	}
}

// tunerCrash unwinds a launch whose ranks died inside the plugin.
type tunerCrash struct{ exit int }

// runCatchingCrash is run, returning the exit of a rank that died inside
// the tuner plugin (the real process is killed by SIGSEGV there).
func (l *launch) runCatchingCrash() (code int) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(tunerCrash)
			if !ok {
				panic(r)
			}
			code = c.exit
		}
	}()
	return l.run()
}

// tunerChoose is the plugin's getCollInfo for one size, on every rank: c is
// NCCL's own choice.
func (l *launch) tunerChoose(c Choice, bytes int64) Choice {
	t := l.tuner
	if t == nil || !t.loaded || l.replay != nil {
		return c
	}
	coll, ok := l.o.collective.PerFunction()
	if !ok {
		return c // sends and receives: NCCL asks no tuner
	}
	out := c
	for r := range l.nprocs {
		out = l.tunerCall(r, coll, c, bytes)
	}
	return out
}

// tunerCall is rank r's call of the plugin's getCollInfo: the first row
// that matches and that NCCL has enabled wins (a row NCCL disabled is
// "marked as IGNORE"); no row is "No matching config found" and ONE
// channel; a buggy plugin kills every rank at the first match.
func (l *launch) tunerCall(r int, coll string, c Choice, bytes int64) Choice {
	t, id := l.tuner, l.ids[r]
	nodes, ranks := l.nprocs, l.n
	b := uint64(bytes)
	for _, row := range t.rows {
		m := [6]bool{row.coll == coll, b >= row.min && b <= row.max, row.nodes == -1 || row.nodes == nodes,
			row.ranks == -1 || row.ranks == ranks, row.pipeOps == -1 || row.pipeOps == 1, row.regBuff == -1 || row.regBuff == 0}
		if !(m[0] && m[1] && m[2] && m[3] && m[4] && m[5]) {
			l.log.info(id, subTuning, "TUNER/ExamplePlugin: Config does not match - collType match=%d, size match=%d, nodes match=%d, ranks match=%d, pipeOps match=%d, regBuff match=%d",
				b2i(m[0]), b2i(m[1]), b2i(m[2]), b2i(m[3]), b2i(m[4]), b2i(m[5]))
			continue
		}
		if t.buggy {
			l.tunerSegfault() // reading the cost table as float** faults here
		}
		algo := algoNames[slices.Index(nccl.ExamplePluginAlgos, row.algo)]
		proto := protoNames[slices.Index(nccl.ExamplePluginProtos, row.proto)]
		if !l.f.algoOn[algo] || !l.f.protoOn[proto] {
			l.log.info(id, subTuning, "TUNER/ExamplePlugin: Algorithm/protocol combination [%s][%s] is marked as IGNORE", row.algo, row.proto)
			continue
		}
		ch := "default"
		if row.channels != -1 {
			ch = fmt.Sprint(row.channels)
		}
		l.log.info(id, subTuning, "TUNER/ExamplePlugin: Applied config for collType=%s, bytes=%d, pipeOps=1, regBuff=0: algo=%s, proto=%s, channels=%s (nodes=%d, ranks=%d)",
			coll, bytes, row.algo, row.proto, ch, row.nodes, row.ranks)
		return Choice{Algo: algo, Proto: proto, Channels: pluginChannels(row.channels, l.f.channelsFor(proto, bytes), l.f.commChannels)}
	}
	l.log.info(id, subTuning, "TUNER/ExamplePlugin: No matching config found")
	c.Channels = 1
	return c
}

// pluginChannels is the channel count NCCL runs a call with when the
// example plugin applied a row of rowChannels, NCCL's own count being own.
// The plugin starts from *nChannels = 1 (plugin.c:361 in NCCL 2.30.7) and
// overwrites it unless the row says -1, so -1 leaves ONE channel (not
// NCCL's count, as the README says); NCCL keeps its own only for 0
// (ncclGetAlgoInfo, src/enqueue.cc).
func pluginChannels(rowChannels, own, commChannels int) int {
	switch {
	case rowChannels == -1:
		return 1
	case rowChannels == 0:
		return own
	}
	return min(max(rowChannels, 1), commChannels)
}

// tunerSegfault is every rank dying inside the plugin: Open MPI's signal
// report with the plugin's frame, and mpirun's exit 139.
func (l *launch) tunerSegfault() {
	l.jsonPartial()
	l.out.Flush()
	for r := range l.nprocs {
		id := l.ids[r]
		tag := fmt.Sprintf("[%s:%05d]", id.host, id.pid)
		fmt.Fprintf(l.errw, "%s *** Process received signal ***\n%s Signal: Segmentation fault (11)\n%s Signal code:  (128)\n%s Failing at address: (nil)\n", tag, tag, tag, tag)
		fmt.Fprintf(l.errw, "%s [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x45330)[0x7fda6ae45330]\n", tag)
		fmt.Fprintf(l.errw, "%s [ 1] %s(+0x2569)[0x7fda6ac99569]\n", tag, l.tuner.requested)
		fmt.Fprintf(l.errw, "%s [ 2] /lib/x86_64-linux-gnu/libnccl.so.2(+0x722df)[0x7fda6b2722df]\n", tag)
		fmt.Fprintf(l.errw, "%s *** End of error message ***\n", tag)
	}
	fmt.Fprintf(l.errw, "mpirun noticed that process rank 0 with PID 0 on node %s exited on signal 11 (Segmentation fault).\n", l.ids[0].host)
	panic(tunerCrash{exit: 139})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
