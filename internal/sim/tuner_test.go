package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// tunerCSV is the CSV nccltune exported from a real 4-rank study
// (../../shared/fixtures/tuner-plugin/tuner.csv): one channel in 512K-4M.
const tunerCSV = `# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
allreduce,0,98304,ring,ll,2,4,4,-1,-1
allreduce,98305,524287,ring,simple,2,4,4,-1,-1
allreduce,524288,4194304,ring,simple,1,4,4,-1,-1
allreduce,4194305,18446744073709551615,ring,simple,2,4,4,-1,-1
`

// tunerFiles writes a simulated plugin built from source and the CSV.
func tunerFiles(t *testing.T, source string) (plugin, csv string) {
	dir := t.TempDir()
	plugin, csv = filepath.Join(dir, "libnccl-tuner-example.so"), filepath.Join(dir, "tuner.csv")
	if err := os.WriteFile(plugin, TunerPluginFile(source), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csv, []byte(tunerCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	return plugin, csv
}

var tunerDebug = []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,TUNING"}

// The real loopback's three runs, simulated: the 2.30.7-source plugin
// applies every row (one channel in the band, two outside), the
// 2.28.3-source one kills the ranks at the first all-reduce, and an
// all-gather no row matches runs on one channel with either.
func TestTunerPluginAsTheLoopbackRan(t *testing.T) {
	args := []string{"--profile", "h200-loopback", "--ranks", "4", "--noise", "0", "-b", "512K", "-e", "8M", "-f", "2", "-n", "5", "-w", "1"}
	tests := []struct {
		name, source, op string
		debug            bool
		code             int
		// channels are NCCL's channels per size (512K … 8M) from the log.
		channels []int
		applied  bool
		crash    bool
	}{
		{name: "2.30.7 source, all-reduce", source: "2.30.7", debug: true, channels: []int{1, 1, 1, 1, 2}, applied: true},
		{name: "2.28.3 source, all-reduce", source: "2.28.3", debug: true, code: 139, crash: true},
		{name: "2.28.3 source, all-reduce, no debug log", source: "2.28.3", code: 139, crash: true},
		{name: "2.28.3 source, all-gather", source: "2.28.3", op: "all_gather", debug: true, channels: []int{1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plugin, csv := tunerFiles(t, tt.source)
			env := []string{"NCCL_TUNER_PLUGIN=" + plugin, "NCCL_TUNER_CONFIG_FILE=" + csv}
			if tt.debug {
				env = append(env, tunerDebug...)
			}
			a := append([]string{}, args...)
			if tt.op != "" {
				a = append(a, "--collective", tt.op)
			}
			r := runMain(t, env, a...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stdout, SimulatedHeaderPrefix) {
				t.Errorf("the output does not say it is simulated")
			}
			res, _ := benchfmt.Parse([]byte(r.stdout + r.stderr))
			if tt.crash {
				if !strings.Contains(r.stderr, "Segmentation fault (11)") || !strings.Contains(r.stderr, plugin+"(+0x") {
					t.Errorf("no SIGSEGV report with the plugin's frame:\n%s", r.stderr)
				}
				if tt.debug && (res.Facts == nil || res.Facts.Tuner == nil || !strings.HasSuffix(res.Facts.Tuner.Crash, "libnccl-tuner-example.so(+0x2569)")) {
					t.Errorf("benchfmt does not read the crash: %+v", res.Facts)
				}
				return
			}
			tp := res.Facts.Tuner
			if tp == nil || !tp.Loaded || tp.Interface != 5 || tp.Configs != 4 {
				t.Fatalf("tuner plugin %+v, want Example v5 with 4 configs", tp)
			}
			if tt.applied != (tp.Applied > 0) || tt.applied == (tp.NoMatch > 0) {
				t.Errorf("applied %d, no match %d", tp.Applied, tp.NoMatch)
			}
			var got []int
			for _, c := range res.Facts.Choices {
				got = append(got, c.Channels)
			}
			if len(got) != len(tt.channels) {
				t.Fatalf("channels %v, want %v", got, tt.channels)
			}
			for i := range got {
				if got[i] != tt.channels[i] {
					t.Errorf("channels %v, want %v", got, tt.channels)
					break
				}
			}
		})
	}
}

// What NCCL loads, by its version and the plugin's source; a path that
// is not there runs NCCL's own tuner; a real library is refused.
func TestTunerPluginLoading(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2307 := write("v2307.so", TunerPluginFile("2.30.7"))
	v2283 := write("v2283.so", TunerPluginFile("2.28.3"))
	v2277 := write("v2277.so", TunerPluginFile("2.27.7"))
	elf := write("real.so", []byte("\x7fELF\x02\x01\x01"))
	tests := []struct {
		nccl, plugin string
		loaded       bool
		iface        int
		line         string // a line NCCL logs
		err          string
	}{
		{"2.30.7", v2307, true, 6, "TUNER/Plugin: Using Example (v6)", ""},
		{"2.28.3", v2307, true, 5, "TUNER/Plugin: Using Example (v5)", ""},
		{"2.28.3", v2283, true, 5, "Successfully loaded external tuner plugin " + v2283, ""},
		{"2.27.7", v2307, false, 0, "TUNER/Plugin: Failed to find ncclTunerPlugin_v4 symbol.", ""},
		{"2.27.7", v2277, true, 4, "TUNER/Plugin: Using tuner plugin Example", ""},
		{"2.30.7", v2277, true, 4, "TUNER/Plugin: Using Example (v4)", ""},
		{"2.28.3", filepath.Join(dir, "missing.so"), false, 0, "TUNER/Plugin: Could not find: " + filepath.Join(dir, "missing.so"), ""},
		{"2.28.3", elf, false, 0, "", "cannot load a library"},
	}
	for _, tt := range tests {
		t.Run(tt.nccl+" "+filepath.Base(tt.plugin), func(t *testing.T) {
			tp, err := loadTunerPlugin(map[string]string{"NCCL_TUNER_PLUGIN": tt.plugin, "NCCL_TUNER_CONFIG_FILE": filepath.Join(dir, "none.csv")}, tt.nccl, 4, 4)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tp.loaded != tt.loaded || tp.iface != tt.iface {
				t.Errorf("loaded %v as v%d, want %v v%d", tp.loaded, tp.iface, tt.loaded, tt.iface)
			}
			var lines []string
			for _, l := range tp.initLines {
				lines = append(lines, l.text)
			}
			if !strings.Contains(strings.Join(lines, "\n"), tt.line) {
				t.Errorf("lines lack %q:\n%s", tt.line, strings.Join(lines, "\n"))
			}
			if tt.loaded && !strings.Contains(strings.Join(lines, "\n"), "Config file "+filepath.Join(dir, "none.csv")+" not found, using defaults") {
				t.Errorf("a missing CSV is not said:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

// The plugin reads lines as fgets into 256 bytes and fields as strtok:
// a long line goes on as another, empty fields merge, unknown names take
// the plugin's defaults, and -1 wraps in strtoull.
func TestTunerPluginCSVRules(t *testing.T) {
	long := "# " + strings.Repeat("x", 300) + "\n"
	csv := long + "allreduce,,0,-1,tree,ll,4,1,2\nfoo,1,2,bogus,LL,3,-1,-1,7,0\n\n#c\nshort,1\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	tp := &tunerPlugin{}
	tp.loadConfig(map[string]string{"NCCL_TUNER_CONFIG_FILE": path})
	// The comment's rest (past 255 bytes) is read as a line; it has one
	// field, so it is counted but not loaded.
	want := []tunerRow{
		{coll: "allreduce", min: 0, max: 1<<64 - 1, algo: "tree", proto: "ll", channels: 4, nodes: 1, ranks: 2, pipeOps: -1, regBuff: -1},
		{coll: "allreduce", min: 1, max: 2, algo: "ring", proto: "simple", channels: 3, nodes: -1, ranks: -1, pipeOps: 7, regBuff: 0},
	}
	if len(tp.rows) != len(want) {
		t.Fatalf("rows %+v, want %+v", tp.rows, want)
	}
	for i := range want {
		if tp.rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, tp.rows[i], want[i])
		}
	}
	if !strings.Contains(tp.initLines[0].text, "Allocated memory for 4 configurations") {
		t.Errorf("first line %q: the plugin counts every non-comment line", tp.initLines[0].text)
	}
}

// What a row's channels field does, as NVIDIA's example plugin (NCCL
// 2.30.7's plugins/tuner/example/plugin.c) and NCCL do it: the plugin
// sets *nChannels = 1 before it looks (plugin.c:361) and writes a row's
// count only when it is not -1 (plugin.c:407-409), and NCCL keeps its own
// count only when the plugin left 0 (src/enqueue.cc, ncclGetAlgoInfo:
// "nMaxChannels == 0 ? info->nMaxChannels : nMaxChannels"). So -1 runs
// ONE channel, 0 NCCL's own count, and a count that count.
func TestTunerPluginRowChannels(t *testing.T) {
	csv := "allreduce,0,1048575,ring,simple,-1,-1,-1,-1,-1\n" +
		"allreduce,1048576,4194303,ring,simple,0,-1,-1,-1,-1\n" +
		"allreduce,4194304,18446744073709551615,ring,simple,3,-1,-1,-1,-1\n"
	dir := t.TempDir()
	plugin, path := filepath.Join(dir, "libnccl-tuner-example.so"), filepath.Join(dir, "tuner.csv")
	if err := os.WriteFile(plugin, TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--profile", "spark4", "--noise", "0", "-b", "512K", "-e", "8M", "-f", "2", "-n", "1", "-w", "0"}
	// NCCL's own count for ring/simple, from the simulated NCCL itself:
	// more than one at 1M and 2M, so that 0 and -1 differ there.
	f := mustProfile(t, "spark4").resolve(nil)
	f.n = 4
	want := map[int64]int{512 << 10: 1, 1 << 20: f.channelsFor(protoSimple, 1<<20), 2 << 20: f.channelsFor(protoSimple, 2<<20), 4 << 20: 3, 8 << 20: 3}
	if want[1<<20] < 2 {
		t.Fatalf("NCCL's own count at 1M is %d: the test cannot tell 0 from -1", want[1<<20])
	}
	r := runMain(t, append([]string{"NCCL_TUNER_PLUGIN=" + plugin, "NCCL_TUNER_CONFIG_FILE=" + path}, tunerDebug...), args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res, _ := benchfmt.Parse([]byte(r.stdout + r.stderr))
	if res.Facts == nil || len(res.Facts.Choices) != len(want) {
		t.Fatalf("choices %+v, want one per size of %v", res.Facts, want)
	}
	for _, c := range res.Facts.Choices {
		if c.Channels != want[c.Bytes] || !strings.EqualFold(c.Algo, "ring") || !strings.EqualFold(c.Proto, "simple") {
			t.Errorf("%d bytes: %s/%s %d channels, want Ring/Simple %d", c.Bytes, c.Algo, c.Proto, c.Channels, want[c.Bytes])
		}
	}
}

// The example plugin's pluginInit caps NCCL's per-channel Tree and Ring
// LL128 bandwidths for Blackwell at 3 or more nodes (plugin.c:304, 307 in
// NCCL 2.30.7), whatever its CSV holds: with an empty CSV, NCCL's own
// algorithm and protocol change on spark4 (four GB10 nodes), where Ring
// LL128 loses half its predicted bandwidth and is never chosen, and on no
// other profile (two GB10 nodes; H200).
func TestTunerPluginInitRetunes(t *testing.T) {
	dir := t.TempDir()
	plugin, empty := filepath.Join(dir, "libnccl-tuner-example.so"), filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(plugin, TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("# no rows\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		profile string
		retunes bool
	}{{"spark4", true}, {"spark2", false}, {"h200-loopback", false}} {
		t.Run(tt.profile, func(t *testing.T) {
			args := []string{"--profile", tt.profile, "--noise", "0", "-b", "8K", "-e", "64M", "-f", "2", "-n", "1", "-w", "0"}
			choices := func(env ...string) map[int64]string {
				r := runMain(t, append(env, tunerDebug...), args...)
				if r.code != 0 {
					t.Fatalf("exit %d\n%s", r.code, r.stderr)
				}
				res, _ := benchfmt.Parse([]byte(r.stdout + r.stderr))
				out := map[int64]string{}
				for _, c := range res.Facts.Choices {
					out[c.Bytes] = strings.ToUpper(c.Algo + "/" + c.Proto)
				}
				return out
			}
			own, alone := choices(), choices("NCCL_TUNER_PLUGIN="+plugin, "NCCL_TUNER_CONFIG_FILE="+empty)
			changed, ll128 := 0, 0
			for b, c := range own {
				if alone[b] != c {
					changed++
				}
				if alone[b] == "RING/LL128" {
					ll128++
				}
			}
			if len(own) == 0 || (changed > 0) != tt.retunes || tt.retunes && ll128 > 0 {
				t.Errorf("NCCL's own %v, with the plugin and an empty CSV %v: %d sizes changed, %d on Ring LL128; retunes %v", own, alone, changed, ll128, tt.retunes)
			}
		})
	}
}
