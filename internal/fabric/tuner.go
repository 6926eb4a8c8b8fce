package fabric

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// Warning codes of a tuner plugin (NCCL_TUNER_PLUGIN).
const (
	CodeTunerPluginCrash = "tuner-plugin-crash"      // a rank died inside the tuner plugin
	CodeTunerFallback    = "tuner-fallback"          // calls no CSV row matched got one channel
	CodeTunerNotLoaded   = "tuner-plugin-not-loaded" // NCCL_TUNER_PLUGIN set, NCCL ran its own tuner
	// CodeTunerExampleConstants: NVIDIA's example plugin rewrites NCCL's
	// cost-model constants on Blackwell at 3+ nodes whatever its CSV holds.
	CodeTunerExampleConstants = "tuner-example-constants"
)

// TunerRun is what the tuner warnings read of the run besides the
// plugin's lines.
type TunerRun struct {
	// Version is the NCCL that ran it ("" when unknown).
	Version string
	// GPU is the first device's name as nccl-tests prints it.
	GPU string
	// NNodes is NCCL's node count (0 when unknown).
	NNodes int
}

// TunerRunOf is the TunerRun of a parsed output.
func TunerRunOf(res *benchfmt.Result) TunerRun {
	var r TunerRun
	if res == nil {
		return r
	}
	r.Version = res.NCCLVersion
	if len(res.Devices) > 0 {
		r.GPU = res.Devices[0].Name
	}
	if res.Facts != nil {
		r.NNodes = res.Facts.NNodes
		r.Version = cmp.Or(r.Version, res.Facts.NCCLVersion)
	}
	return r
}

// TunerPluginFix is what to build instead of a plugin that crashes, for
// NCCL version ("" when unknown).
func TunerPluginFix(version string) string {
	if version != "" && versionLess(version, "2.28.0") {
		return "NCCL " + version + " loads only the v2-v4 tuner interfaces, and no example plugin that exports them works " +
			"as shipped (2.27.5-2.27.7's source has the same float** indexing; 2.30's exports v5 and v6): use the env export " +
			"(nccltune export STUDY --format env) on this NCCL, or the tuner CSV after upgrading NCCL to 2.28 or newer"
	}
	return "build the plugin from NCCL 2.30.3 or newer source, which exports the v6 and v5 interfaces NCCL 2.28 and newer " +
		"load: git clone -b v2.30.7-1 https://github.com/NVIDIA/nccl; cd nccl/plugins/tuner/example && gcc -Inccl -fPIC " +
		"-shared -o libnccl-tuner-example.so plugin.c; point NCCL_TUNER_PLUGIN at that file on every node"
}

// TunerCrashWarning is the warning of a launch whose ranks died inside
// the tuner plugin (evidence: the backtrace frame or the signal).
func TunerCrashWarning(evidence, version string) Warning {
	return Warning{Code: CodeTunerPluginCrash, Fix: TunerPluginFix(version),
		Message: "the ranks died with SIGSEGV inside the tuner plugin (" + evidence + "): the likely cause is NCCL's example " +
			"plugin built from NCCL 2.27.5-2.29.x source (NCCL < 2.30.3), which indexes NCCL's cost table as float** where NCCL " +
			"passes a 2-D array, and crashes at the first call a CSV row matches; a server started with it dies at its first all-reduce"}
}

// TunerWarnings are the traps a tuner plugin's lines show.
func TunerWarnings(tp *benchfmt.TunerPlugin, run TunerRun) []Warning {
	if tp == nil {
		return nil
	}
	var out []Warning
	if tp.Crash != "" {
		out = append(out, TunerCrashWarning(tp.Crash, run.Version))
	}
	if tp.Requested != "" && !tp.Loaded {
		out = append(out, tunerNotLoaded(tp, run.Version))
	}
	if w, ok := tunerFallback(tp); ok {
		out = append(out, w)
	}
	if w, ok := tunerExampleConstants(tp, run); ok {
		out = append(out, w)
	}
	return out
}

// tunerExampleConstants: NVIDIA's example plugin (NCCL 2.30.x) overwrites,
// in a v5 or v6 init, the Blackwell per-channel Tree and Ring/LL128
// bandwidths NCCL uses at nNodes > 2 (15 and 20 against NCCL's 24 and 40):
// there, loading the plugin alone changes every unmatched call's choice.
// NCCL 2.27 and older load v4 plugins, whose init gets no constants.
func tunerExampleConstants(tp *benchfmt.TunerPlugin, run TunerRun) (Warning, bool) {
	cc := nccl.BlackwellCC(run.GPU)
	if retunes, _ := nccl.ExamplePluginRetunes(run.GPU, run.NNodes); !tp.Loaded || tp.Name != "Example" || tp.Interface < 5 || !retunes {
		return Warning{}, false
	}
	return Warning{Code: CodeTunerExampleConstants,
		Message: fmt.Sprintf("NCCL loaded NVIDIA's example tuner plugin (\"TUNER/Plugin: Using Example (v%d)\") on %s (compute "+
			"capability %s, Blackwell) at %d nodes: its pluginInit rewrites NCCL's cost-model constants there whatever its "+
			"CSV holds — Tree bandwidth per channel to 15 GB/s (NCCL's own 24), Ring LL128 per channel to 20 GB/s (NCCL's "+
			"40; 73.4 in 2.28), the NVLS network latency to 24 µs (NCCL's 18) — so loading the plugin alone changes the "+
			"algorithm and protocol NCCL picks wherever no CSV row decides",
			tp.Interface, run.GPU, cc, run.NNodes),
		Fix: "cover every size and op the process calls with CSV rows (nccltune's export does: rows from 0 to 2^64-1, " +
			"NCCL's own choice where nothing was proven) and verify with the plugin loaded (nccltune verify --tuner-plugin), " +
			"or deliver the env export instead; a plugin built from the example with those three lines of pluginInit " +
			"removed keeps NCCL's constants"}, true
}

func tunerNotLoaded(tp *benchfmt.TunerPlugin, version string) Warning {
	why := "NCCL logged no \"TUNER/Plugin: Using …\" line"
	if len(tp.NotLoaded) > 0 {
		why = "NCCL logged " + quoteAll(tp.NotLoaded)
	}
	fix := "give NCCL_TUNER_PLUGIN the absolute path of the plugin's .so, present on every node, and check the launch's " +
		"\"TUNER/Plugin: Using Example (v5)\" line"
	for _, l := range tp.NotLoaded {
		if strings.Contains(l, "Failed to find ncclTunerPlugin_v") {
			fix = "the library holds no tuner interface this NCCL loads (NCCL 2.27 and older load v2-v4; 2.28-2.29 v2-v5): " + TunerPluginFix(version)
			break
		}
	}
	return Warning{Code: CodeTunerNotLoaded, Fix: fix,
		Message: fmt.Sprintf("NCCL_TUNER_PLUGIN=%s was set but NCCL ran its own tuner: %s; the tuner CSV was not used, so the numbers are NCCL's defaults'", tp.Requested, why)}
}

// tunerFallback says which calls the plugin gave one channel because no
// row matched, grouped by collective and what no row matched.
func tunerFallback(tp *benchfmt.TunerPlugin) (Warning, bool) {
	if !tp.Fallback() {
		return Warning{}, false
	}
	type group struct {
		coll, why string
		sizes     []int64
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for _, c := range tp.Calls {
		if c.NoMatch == 0 {
			continue
		}
		k := [2]string{c.Collective, c.Unmatched}
		g := byKey[k]
		if g == nil {
			g = &group{coll: c.Collective, why: c.Unmatched}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.sizes = append(g.sizes, c.Bytes)
	}
	var parts []string
	fixes := map[string]bool{}
	for _, g := range groups {
		sort.Slice(g.sizes, func(i, j int) bool { return g.sizes[i] < g.sizes[j] })
		at := nccl.FormatSize(g.sizes[0])
		if len(g.sizes) > 1 {
			at += "-" + nccl.FormatSize(g.sizes[len(g.sizes)-1])
		}
		parts = append(parts, fmt.Sprintf("%s at %s (%s)", g.coll, at, UnmatchedText(g.why)))
		fixes[g.why] = true
	}
	where := ""
	if len(parts) > 0 {
		where = ": " + strings.Join(parts, "; ")
	}
	msg := fmt.Sprintf("the tuner plugin matched no CSV row for %d of %d calls and gave each ONE channel, its default%s", tp.NoMatch, tp.NoMatch+tp.Applied, where)
	if tp.ConfigProblem != "" {
		msg += "; the plugin said \"" + tp.ConfigProblem + "\""
		fixes["config"] = true
	}
	if tp.Ignored > 0 {
		msg += fmt.Sprintf("; %d row(s) were skipped because NCCL disabled their algorithm and protocol (\"marked as IGNORE\")", tp.Ignored)
		fixes["ignored"] = true
	}
	var fix []string
	for _, f := range tunerFixes {
		if fixes[f.why] || (f.or != "" && fixes[f.or]) {
			fix = append(fix, f.text)
		}
	}
	if len(fix) == 0 {
		fix = append(fix, "check the CSV's rows against the calls (doctor --log LOG lists both)")
	}
	return Warning{Code: CodeTunerFallback, Message: msg, Fix: strings.Join(fix, "; ")}, true
}

// tunerFixes are tunerFallback's fixes, by what no row matched (or why).
var tunerFixes = []struct{ why, or, text string }{
	{"config", "", "give NCCL_TUNER_CONFIG_FILE the path of the exported CSV, readable on every node"},
	{"collective", "", "measure the collectives the CSV lacks (nccltune search --op OP on the same fabric) and export the " +
		"studies together, or keep the env export for this process"},
	{"nodes", "ranks", "the CSV's rows are for another communicator (nNodes, nRanks): measure this shape too and export it " +
		"together"},
	{"size", "", "export the CSV again with this nccltune: its rows cover every size from 0 to 2^64-1"},
	{"ignored", "", "drop NCCL_PROTO, NCCL_ALGO and channel limits from the environment: with the tuner CSV they hide " +
		"its choices"},
}

// UnmatchedText says in words what no CSV row matched
// (benchfmt.TunerCall.Unmatched).
func UnmatchedText(why string) string {
	switch why {
	case "collective":
		return "no row for this collective"
	case "size":
		return "no row covers the size"
	case "nodes", "ranks":
		return "no row for this communicator's " + why
	case "":
		return "no row matched"
	}
	return "no row for this " + why
}

// quoteAll is lines (at least one) in double quotes, comma-separated.
func quoteAll(lines []string) string { return `"` + strings.Join(lines, `", "`) + `"` }
