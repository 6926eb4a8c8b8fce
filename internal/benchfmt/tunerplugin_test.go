package benchfmt

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The real logs of nccltune's tuner CSV under NVIDIA's example plugin on
// the 4-rank loopback (testdata/tuner-real/README.md): the plugin built
// from NCCL 2.28.3's source crashing at the first all-reduce a row
// matches, built from 2.30.7's applying every row, and all-gathers that
// no row matches (where even the 2.28.3 source's plugin lives).
func TestTunerPluginRealLogs(t *testing.T) {
	tests := []struct {
		file             string
		applied, noMatch int
		// calls are "collective bytes applied/no-match channels" per size.
		calls []string
		crash string
	}{
		{file: "all_reduce_tuner_2.28.3.txt", crash: "/libnccl-tuner-example.so(+0x2569)"},
		{file: "all_reduce_tuner_2.30.7.txt", applied: 300, calls: []string{
			"allreduce 524288 15/0 ring/simple/1", "allreduce 1048576 15/0 ring/simple/1", "allreduce 2097152 15/0 ring/simple/1",
			"allreduce 4194304 15/0 ring/simple/1", "allreduce 8388608 15/0 ring/simple/2"}},
		{file: "all_gather_tuner_2.30.7.txt", noMatch: 300, calls: []string{
			"allgather 131072 0/15 collective", "allgather 262144 0/15 collective", "allgather 524288 0/15 collective",
			"allgather 1048576 0/15 collective", "allgather 2097152 0/15 collective"}},
		{file: "all_gather_tuner_2.28.3.txt", noMatch: 300, calls: []string{
			"allgather 131072 0/15 collective", "allgather 262144 0/15 collective", "allgather 524288 0/15 collective",
			"allgather 1048576 0/15 collective", "allgather 2097152 0/15 collective"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "tuner-real", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, _ := Parse(data)
			if res == nil || res.Facts == nil || res.Facts.Tuner == nil {
				t.Fatalf("no tuner plugin read from %s", tt.file)
			}
			tp := res.Facts.Tuner
			if !tp.Loaded || tp.Name != "Example" || tp.Interface != 5 {
				t.Errorf("loaded %v name %q interface %d, want Example v5", tp.Loaded, tp.Name, tp.Interface)
			}
			if !strings.HasSuffix(tp.Requested, "/libnccl-tuner-example.so") || !strings.HasSuffix(tp.ConfigFile, "/tuner.csv") || tp.Configs != 4 || len(tp.Rows) != 4 {
				t.Errorf("requested %q, config %q with %d configs and %d rows; want the 4 rows of tuner.csv", tp.Requested, tp.ConfigFile, tp.Configs, len(tp.Rows))
			}
			if want := "allreduce [524288-4194304] ring/simple channels=1 nodes=4 ranks=4 pipeOps=any regBuff=any"; len(tp.Rows) > 2 && tp.Rows[2] != want {
				t.Errorf("row 3 is %q, want %q", tp.Rows[2], want)
			}
			if tp.Applied != tt.applied || tp.NoMatch != tt.noMatch {
				t.Errorf("applied %d, no match %d; want %d, %d", tp.Applied, tp.NoMatch, tt.applied, tt.noMatch)
			}
			if tp.Fallback() != (tt.noMatch > 0) {
				t.Errorf("Fallback() = %v with %d calls unmatched", tp.Fallback(), tp.NoMatch)
			}
			var calls []string
			for _, c := range tp.Calls {
				s := c.Collective + " " + itoa(c.Bytes) + " " + itoa(int64(c.Applied)) + "/" + itoa(int64(c.NoMatch))
				if c.Applied > 0 {
					s += " " + c.Algo + "/" + c.Proto + "/" + itoa(int64(c.Channels))
					if c.NCCLChannels != c.Channels {
						t.Errorf("%s: NCCL used %d channels, the plugin gave %d", s, c.NCCLChannels, c.Channels)
					}
				} else {
					s += " " + c.Unmatched
				}
				calls = append(calls, s)
			}
			if strings.Join(calls, "; ") != strings.Join(tt.calls, "; ") {
				t.Errorf("calls:\n got %q\nwant %q", calls, tt.calls)
			}
			if !strings.HasSuffix(tp.Crash, tt.crash) || (tt.crash == "") != (tp.Crash == "") {
				t.Errorf("crash %q, want %q", tp.Crash, tt.crash)
			}
		})
	}
}

// Lines the real logs do not have: NCCL 2.27's wording, a plugin NCCL
// does not load, a missing CSV, a row NCCL ignores, and a communicator no
// row is for.
func TestTunerPluginLines(t *testing.T) {
	const p = "h0:10:10 [0] NCCL INFO "
	tests := []struct {
		name  string
		lines []string
		check func(t *testing.T, tp *TunerPlugin)
	}{
		{"no plugin", []string{p + "NCCL version 2.28.3+cuda13.0", p + "AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}"},
			func(t *testing.T, tp *TunerPlugin) {
				if tp != nil {
					t.Errorf("a log without plugin lines read as %+v", tp)
				}
			}},
		{"NCCL 2.27 loads v4", []string{p + "NCCL_TUNER_PLUGIN set by environment to /x/libnccl-tuner-example.so", p + "TUNER/Plugin: Using tuner plugin Example"},
			func(t *testing.T, tp *TunerPlugin) {
				if !tp.Loaded || tp.Name != "Example" || tp.Interface != 0 {
					t.Errorf("got %+v, want Example loaded, interface unsaid", tp)
				}
			}},
		{"NCCL 2.27 with a v5/v6 plugin", []string{p + "NCCL_TUNER_PLUGIN set by environment to /x/libnccl-tuner-example.so",
			p + "TUNER/Plugin: Failed to find ncclTunerPlugin_v4 symbol.", p + "TUNER/Plugin: Failed to find ncclTunerPlugin_v3 symbol.",
			p + "TUNER/Plugin: Failed to find ncclTunerPlugin_v2 symbol, using internal tuner instead."},
			func(t *testing.T, tp *TunerPlugin) {
				if tp.Loaded || len(tp.NotLoaded) != 3 || !strings.Contains(tp.NotLoaded[0], "ncclTunerPlugin_v4") {
					t.Errorf("got %+v, want not loaded with NCCL's three lines", tp)
				}
			}},
		{"missing CSV", []string{p + "TUNER/Plugin: Using Example (v6)", p + "TUNER/ExamplePlugin: Config file /nope.csv not found, using defaults",
			p + "TUNER/ExamplePlugin: No matching config found", p + "AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"},
			func(t *testing.T, tp *TunerPlugin) {
				if tp.Interface != 6 || !strings.Contains(tp.ConfigProblem, "/nope.csv not found") || !tp.Fallback() || len(tp.Calls) != 1 || tp.Calls[0].Unmatched != "collective" {
					t.Errorf("got %+v", tp)
				}
			}},
		{"ignored row, then another communicator", []string{p + "TUNER/Plugin: Using Example (v5)",
			p + "TUNER/ExamplePlugin: Algorithm/protocol combination [ring][ll128] is marked as IGNORE",
			p + "TUNER/ExamplePlugin: Config does not match - collType match=1, size match=1, nodes match=1, ranks match=0, pipeOps match=1, regBuff match=1",
			p + "TUNER/ExamplePlugin: No matching config found",
			"h1:11:11 [0] NCCL INFO TUNER/ExamplePlugin: No matching config found",
			p + "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}"},
			func(t *testing.T, tp *TunerPlugin) {
				if tp.Ignored != 1 || tp.NoMatch != 2 || len(tp.Calls) != 1 || tp.Calls[0].NoMatch != 1 || tp.Calls[0].Unmatched != "ranks" {
					t.Errorf("got %+v, calls %+v", tp, tp.Calls)
				}
			}},
		{"segfault after loading, no backtrace", []string{p + "TUNER/Plugin: Using Example (v5)", "[h0:00010] Signal: Segmentation fault (11)"},
			func(t *testing.T, tp *TunerPlugin) {
				if !strings.HasPrefix(tp.Crash, "Segmentation fault (11) after NCCL loaded") {
					t.Errorf("crash %q", tp.Crash)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseFacts([]byte(strings.Join(tt.lines, "\n") + "\n"))
			if f == nil {
				t.Fatal("no facts")
			}
			tt.check(t, f.Tuner)
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
