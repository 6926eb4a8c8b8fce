package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
)

// fixedNow is the clock of every test (JSON start and end times).
var fixedNow = time.Date(2026, 11, 29, 8, 33, 3, 0, time.UTC)

func TestMain(m *testing.M) {
	// The test binary doubles as the simulated benchmark for the tests
	// that start it as a child process.
	RunIfChild()
	now = func() time.Time { return fixedNow }
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	code           int
}

func runMain(t testing.TB, environ []string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, environ, &out, &errb)
	return result{out.String(), errb.String(), code}
}
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		args    []string
		code    int
	}{
		{"spark4_defaults_sweep", nil, []string{"--profile", "spark4", "--noise", "0", "-b", "32K", "-e", "256M", "-f", "2"}, 0},
		{"spark4_fix_periter_noise", []string{"NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8"},
			[]string{"--profile", "spark4", "--seed", "42", "--launch", "3", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "-n", "20", "-w", "5"}, 0},
		{"loopback_debug_tuning", []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET,TUNING,ENV", "NCCL_SOCKET_IFNAME=lo", "NCCL_IB_DISABLE=1"},
			[]string{"--profile", "h200-loopback", "--noise", "0", "-b", "512K", "-e", "4M", "-f", "2", "-w", "5"}, 0},
		{"spark2_merged_debug", []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET,ENV", "NCCL_IB_MERGE_NICS=1", "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1"},
			[]string{"--profile", "spark2", "--noise", "0", "-b", "16K", "-e", "32K", "-f", "2"}, 0},
		{"spark4_forced_ll128_wrong", []string{"NCCL_PROTO=LL128"},
			[]string{"--profile", "spark4", "--noise", "0", "-b", "512K", "-e", "4M", "-f", "2"}, 7},
		{"loopback_bad_proto", []string{"NCCL_PROTO=LL256"}, []string{"--profile", "h200-loopback", "-b", "1M", "-e", "1M", "-n", "5"}, 3},
		{"spark4_algo_nvls", []string{"NCCL_ALGO=NVLS", "NCCL_DEBUG=WARN"}, []string{"--profile", "spark4", "-b", "1M", "-e", "1M"}, 3},
		{"flat_nocheck_cycles_half", nil, []string{"--profile", "flat", "--noise", "0", "-b", "1K", "-e", "4K", "-f", "2", "-c", "0", "-N", "2", "-d", "half", "-C", "1"}, 0},
		{"spark4_socket_fallback_debug", []string{"NCCLTUNE_SIM_FAULT=socket-fallback", "NCCL_DEBUG=INFO", "NCCL_IB_HCA=rocep1s0f1"},
			[]string{"--profile", "spark4", "--noise", "0", "-b", "256M", "-e", "256M", "--launch", "1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runMain(t, tt.environ, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", r.code, tt.code, r.stderr)
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "$ %s all_reduce_perf %s\n%s", strings.Join(tt.environ, " "), strings.Join(tt.args, " "), r.stdout)
			fmt.Fprintf(&b, "--- stderr ---\n%s--- exit %d ---\n", r.stderr, r.code)
			checkGolden(t, tt.name, b.Bytes())
		})
	}
}

func TestSimulatedHeaderLine(t *testing.T) {
	for _, name := range BuiltinProfiles() {
		r := runMain(t, nil, "--profile", name, "-b", "1M", "-e", "1M", "-n", "2")
		lines := strings.Split(r.stdout, "\n")
		if len(lines) < 2 || !strings.HasPrefix(lines[0], "# nccl-tests version 2.19.6 ") {
			t.Fatalf("%s: first line %q", name, lines[0])
		}
		want := "# nccltune simulated fabric: profile " + name + " (SIMULATED, not a measurement)"
		if lines[1] != want || !strings.HasPrefix(want, SimulatedHeaderPrefix) {
			t.Errorf("%s: second line %q, want %q", name, lines[1], want)
		}
	}
	// With -J the JSON notice comes first, as nccl-tests prints it.
	path := filepath.Join(t.TempDir(), "out.json")
	r := runMain(t, nil, "--profile", "flat", "-b", "1M", "-e", "1M", "-J", path)
	lines := strings.Split(r.stdout, "\n")
	if lines[0] != "# Writing JSON output to "+path || !strings.HasPrefix(lines[2], SimulatedHeaderPrefix) {
		t.Errorf("with -J: %q", lines[:3])
	}
}

func TestDeterminism(t *testing.T) {
	args := []string{"--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "--seed", "7", "--launch", "2"}
	environ := []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,TUNING"}
	a, b := runMain(t, environ, args...), runMain(t, environ, args...)
	if a.stdout != b.stdout || a.code != 0 {
		t.Fatal("same seed and launch gave different output")
	}
	other := runMain(t, environ, append(args[:len(args)-1], "3")...)
	if other.stdout == a.stdout {
		t.Error("another launch index gave identical output")
	}
	seed := runMain(t, environ, append(append([]string{}, args[:10]...), "8", "--launch", "2")...)
	if seed.stdout == a.stdout {
		t.Error("another seed gave identical output")
	}
	// --noise 0: every launch is the true curve.
	z1 := runMain(t, nil, "--profile", "spark4", "--noise", "0", "-b", "1M", "-e", "1M", "-I", "1", "--seed", "1", "--launch", "0")
	z2 := runMain(t, nil, "--profile", "spark4", "--noise", "0", "-b", "1M", "-e", "1M", "-I", "1", "--seed", "1", "--launch", "9")
	rows := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, " float ") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	if rows(z1.stdout) != rows(z2.stdout) || rows(z1.stdout) == "" {
		t.Errorf("--noise 0 rows differ between launches:\n%s\n%s", rows(z1.stdout), rows(z2.stdout))
	}
}

// v3 is nccl-tests' JSON document (version 3), strictly: an unknown key
// is an error, so the simulator cannot drift from the shape.
type v3 struct {
	Version     int      `json:"version"`
	StartTime   string   `json:"start_time"`
	Args        []string `json:"args"`
	Env         []string `json:"env"`
	NCCLVersion int      `json:"nccl_version"`
	Simulated   struct {
		Profile string `json:"profile"`
		Note    string `json:"note"`
	} `json:"nccltune_simulated"`
	Config struct {
		NThreads      int    `json:"nthreads"`
		NGPUs         int    `json:"ngpus"`
		MinimumBytes  int64  `json:"minimum_bytes"`
		MaximumBytes  int64  `json:"maximum_bytes"`
		StepFactor    int64  `json:"step_factor"`
		StepBytes     int64  `json:"step_bytes"`
		WarmupIters   int    `json:"warmup_iters"`
		Iterations    int    `json:"iterations"`
		AggIterations int    `json:"aggregated_iterations"`
		Validation    int    `json:"validation"`
		Graph         int    `json:"graph"`
		Blocking      string `json:"blocking_collectives"`
		PerIterTiming string `json:"per_iter_timing"`
		PerIterSkip   int    `json:"per_iter_skip"`
		ParallelInit  string `json:"parallel_init"`
		Devices       []struct {
			Rank       int    `json:"rank"`
			Group      int    `json:"group"`
			Pid        int    `json:"pid"`
			Hostname   string `json:"hostname"`
			Device     int    `json:"device"`
			DeviceHex  string `json:"device_hex"`
			DeviceInfo string `json:"device_info"`
		} `json:"devices"`
	} `json:"config"`
	Results []struct {
		Size             int64     `json:"size"`
		Count            int64     `json:"count"`
		Type             string    `json:"type"`
		Redop            string    `json:"redop"`
		Root             string    `json:"root"`
		OutOfPlace       v3Measure `json:"out_of_place"`
		OutOfPlacePerIt  *v3Iter   `json:"out_of_place_per_iter"`
		InPlace          v3Measure `json:"in_place"`
		InPlacePerIt     *v3Iter   `json:"in_place_per_iter"`
		ActualIterations int       `json:"actual_iterations"`
		ExperimentName   string    `json:"experiment_name"`
	} `json:"results"`
	OutOfBounds struct {
		Count int    `json:"count"`
		Okay  string `json:"okay"`
	} `json:"out_of_bounds"`
	AvgBusBW struct {
		Bandwidth float64 `json:"bandwidth"`
		Okay      string  `json:"okay"`
	} `json:"average_bus_bandwidth"`
	Errors  []string `json:"errors"`
	EndTime string   `json:"end_time"`
}

type v3Measure struct {
	Time   float64  `json:"time"`
	AlgBW  float64  `json:"alg_bw"`
	BusBW  float64  `json:"bus_bw"`
	NWrong *float64 `json:"nwrong"`
}

type v3Iter struct {
	Skipped    int         `json:"skipped_iterations"`
	MinUS      float64     `json:"min_us"`
	MaxUS      float64     `json:"max_us"`
	AvgUS      float64     `json:"avg_us"`
	P50US      float64     `json:"p50_us"`
	P95US      float64     `json:"p95_us"`
	P99US      float64     `json:"p99_us"`
	StdevUS    float64     `json:"stdev_us"`
	CVPct      float64     `json:"cv_pct"`
	TimesUS    []float64   `json:"times_us"`
	PerProcess [][]float64 `json:"per_process_max_times_us"`
}

func decodeV3(t *testing.T, data []byte) v3 {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc v3
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("JSON output does not decode as nccl-tests v3: %v\n%s", err, data)
	}
	return doc
}

func TestJSONOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	environ := []string{"NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8", "HOME=/root"}
	args := []string{"--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "-n", "20", "--seed", "9", "--launch", "2", "-J", path}
	r := runMain(t, environ, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeV3(t, data)
	if doc.Version != 3 || doc.NCCLVersion != 23007 || doc.Simulated.Profile != "spark4" || len(doc.Config.Devices) != 4 ||
		doc.Config.StepFactor != 2 || doc.Config.PerIterTiming != "true" || doc.StartTime != "2026-11-29 08:33:03" ||
		len(doc.Env) != 3 || doc.Args[0] != programName || doc.OutOfBounds.Okay != "true" || doc.AvgBusBW.Okay != "unchecked" ||
		len(doc.Errors) != 1 || doc.EndTime == "" {
		t.Errorf("document header or footer wrong: %+v", doc)
	}
	if len(doc.Results) != 4 {
		t.Fatalf("%d results, want 4", len(doc.Results))
	}
	// The per-iteration samples are SampleLaunch's, and the table's time
	// is their mean.
	cfg := envConfig(environ)
	sizes := nccl.PowersOfTwo(512<<10, 4<<20)
	want, err := mustProfile(t, "spark4").SampleLaunch(cfg, sizes, 20, 1, 9, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range doc.Results {
		it := res.OutOfPlacePerIt
		if it == nil || len(it.TimesUS) != 20 || len(it.PerProcess) != 4 {
			t.Fatalf("size %d: per-iteration block missing or short: %+v", res.Size, it)
		}
		mean := 0.0
		for i, got := range it.TimesUS {
			if math.Abs(got-want[res.Size][i]) > 1e-6 {
				t.Fatalf("size %d iteration %d: JSON %.6f µs, SampleLaunch %.6f µs", res.Size, i, got, want[res.Size][i])
			}
			mean += got
			slowest := 0.0
			for _, row := range it.PerProcess {
				slowest = math.Max(slowest, row[i])
			}
			if math.Abs(slowest-got) > 1e-6 {
				t.Fatalf("size %d iteration %d: max over ranks %.6f != times_us %.6f", res.Size, i, slowest, got)
			}
		}
		mean /= 20
		if math.Abs(res.OutOfPlace.Time-mean) > 1e-5 || res.OutOfPlace.NWrong == nil || *res.OutOfPlace.NWrong != 0 {
			t.Errorf("size %d: time %.6f, mean of samples %.6f, nwrong %v", res.Size, res.OutOfPlace.Time, mean, res.OutOfPlace.NWrong)
		}
		if bw := busBW(4, res.Size, res.OutOfPlace.Time); math.Abs(bw-res.OutOfPlace.BusBW) > 1e-5 {
			t.Errorf("size %d: bus_bw %.6f, want 2(n-1)/n × bytes ÷ time = %.6f", res.Size, res.OutOfPlace.BusBW, bw)
		}
	}
	// A second run with the same -J path does not overwrite: nccl-tests
	// probes path.0, path.1, …
	r = runMain(t, environ, args...)
	if !strings.HasPrefix(r.stdout, "# Writing JSON output to "+path+".0\n") {
		t.Errorf("second run: %q", strings.SplitN(r.stdout, "\n", 2)[0])
	}
}

// TestJSONKeysMatchFixture compares the simulator's keys with a real
// nccl-tests 2.19.6 document.
func TestJSONKeysMatchFixture(t *testing.T) {
	fixture, err := os.ReadFile("../../../shared/fixtures/nccl-tests/ar2_full_periter.json")
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	path := filepath.Join(t.TempDir(), "sim.json")
	if r := runMain(t, nil, "--profile", "h200-loopback", "-b", "8", "-e", "1K", "-f", "2", "-I", "1", "-w", "5", "-J", path); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ours, _ := os.ReadFile(path)
	keys := func(data []byte) (top, result, perIter []string) {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		sortedKeys := func(m map[string]any) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			sort.Strings(out)
			return out
		}
		res := doc["results"].([]any)[0].(map[string]any)
		return sortedKeys(doc), sortedKeys(res), sortedKeys(res["out_of_place_per_iter"].(map[string]any))
	}
	ft, fr, fi := keys(fixture)
	ot, or, oi := keys(ours)
	ot = slicesWithout(ot, "nccltune_simulated")
	if strings.Join(ft, ",") != strings.Join(ot, ",") || strings.Join(fr, ",") != strings.Join(or, ",") || strings.Join(fi, ",") != strings.Join(oi, ",") {
		t.Errorf("keys differ from nccl-tests':\nfixture %v\n        %v\n        %v\nsim     %v\n        %v\n        %v", ft, fr, fi, ot, or, oi)
	}
}

func slicesWithout(s []string, x string) []string {
	var out []string
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdoutHas  string
		stderrHas  string
		notRunning bool
	}{
		{"unknown short", []string{"--profile", "spark4", "-q"}, 2, "USAGE: all_reduce_perf", "invalid option -- 'q'", true},
		{"unknown long", []string{"--profile", "spark4", "--bogus=1"}, 2, "invalid option '?'", "unrecognized option '--bogus=1'", true},
		{"missing value", []string{"--profile", "spark4", "-b"}, 2, "USAGE", "option requires an argument -- 'b'", true},
		{"missing long value", []string{"--profile", "spark4", "--minbytes"}, 2, "USAGE", "option '--minbytes' requires an argument", true},
		{"ambiguous", []string{"--profile", "spark4", "--m", "1"}, 2, "USAGE", "option '--m' is ambiguous; possibilities: '--maxbytes' '--memory' '--minbytes'", true},
		{"help", []string{"-h"}, 0, "[--profile <spark2|spark4|h200-loopback|flat|FILE.json|replay:FILE>]", "", true},
		{"bad size", []string{"--profile", "spark4", "-b", "1X"}, 255, "", "invalid size specified for 'minbytes'", true},
		{"sizes reversed", []string{"--profile", "spark4", "-b", "4M", "-e", "1M"}, 255, "", "invalid sizes for 'minbytes' and 'maxbytes': 4194304 > 1048576", true},
		{"too many iterations", []string{"--profile", "spark4", "-b", "1M", "-e", "1M", "-n", "99999999999999999999"}, 2, "", "all_reduce_perf: -n 9223372036854775807: want at most 1000000 iterations", true},
		{"too many warm-up iterations", []string{"--profile", "spark4", "-b", "1M", "-e", "1M", "-w", "1000001"}, 2, "", "all_reduce_perf: -w 1000001: want at most 1000000 warm-up iterations", true},
		{"no profile", []string{"-b", "1M"}, 2, "", "no --profile given", true},
		{"unknown profile", []string{"--profile", "spark9"}, 2, "", `unknown simulated profile "spark9"`, true},
		{"bad noise", []string{"--profile", "spark4", "--noise", "-1"}, 2, "", "--noise", true},
		{"bad launch", []string{"--profile", "spark4", "--launch", "x"}, 2, "", "--launch", true},
		{"bad ranks", []string{"--profile", "spark4", "--ranks", "0"}, 2, "", "--ranks", true},
		{"too many GPUs", []string{"--profile", "spark4", "-g", "2", "-b", "1M", "-e", "1M"}, 5, "Test failure common.cu:1454", "Invalid number of GPUs: 2 requested but only 1 were found.", true},
		{"bad op", []string{"--profile", "flat", "-o", "xor", "-b", "1K", "-e", "1K"}, 0, "invalid op xor, defaulting to sum .. ", "", false},
		{"forms", []string{"--profile=flat", "-b512K", "--maxbytes=1M", "--stepf", "2", "-n", "0x5", "stray", "-w", "010"}, 0,
			"minBytes 524288 maxBytes 1048576 step: 2(factor) warmup iters: 8 iters: 5 ", "", false},
		{"ranks", []string{"--profile", "spark4", "--ranks", "8", "-b", "1M", "-e", "1M"}, 0, "#  Rank  7 Group  0", "", false},
		{"double dash", []string{"--profile", "flat", "-b", "1K", "-e", "1K", "--", "-q"}, 0, "Collective test concluded", "", false},
		{"one rank has no bus bandwidth", []string{"--profile", "flat", "--ranks", "1", "-b", "1M", "-e", "1M"}, 0, "# Avg bus bandwidth    : 0 \n", "", false},
		{"memory report", []string{"--profile", "flat", "-b", "1M", "-e", "1M", "-M", "1"}, 0, "# GPU memory usage     : Initialization 576 MB | User-Allocated 3.00 MB | Collective 0.00 B | Total  579 MB\n", "", false},
		{"step bytes", []string{"--profile", "flat", "-b", "1M", "-e", "3M", "-i", "1M"}, 0, "step: 1048576(bytes)", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runMain(t, nil, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdoutHas, r.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderrHas, r.stderr)
			}
			if tt.notRunning == strings.Contains(r.stdout, "Collective test concluded") {
				t.Errorf("ran the test: %v, want %v", !tt.notRunning, tt.notRunning)
			}
		})
	}
}

func TestMinBandwidthCheck(t *testing.T) {
	// NCCL_TESTS_MIN_BW makes nccl-tests judge the average bus bandwidth.
	r := runMain(t, []string{"NCCL_TESTS_MIN_BW=100"}, "--profile", "flat", "-b", "1M", "-e", "1M")
	if r.code != 7 || !strings.Contains(r.stdout, " FAILED\n") || !strings.Contains(r.stdout, "Test failure common.cu:1454") {
		t.Errorf("below NCCL_TESTS_MIN_BW: exit %d\n%s", r.code, r.stdout)
	}
	r = runMain(t, []string{"NCCL_TESTS_MIN_BW=1"}, "--profile", "flat", "-b", "1M", "-e", "1M")
	if r.code != 0 || !strings.Contains(r.stdout, " OK\n#\n# Collective") {
		t.Errorf("above NCCL_TESTS_MIN_BW: exit %d\n%s", r.code, r.stdout)
	}
}

func TestCStrtolAndSizes(t *testing.T) {
	for s, want := range map[string]int64{"20": 20, "0x10": 16, "010": 8, " -3": -3, "12abc": 12, "abc": 0, "0": 0, "08": 0} {
		if got := cStrtol(s); got != want {
			t.Errorf("strtol(%q) = %d, want %d", s, got, want)
		}
	}
	for s, want := range map[string]int64{"32M": 32 << 20, "1.5K": 1536, "8": 8, "1G": 1 << 30, "32MB": 32 << 20, " 4 k": 4096} {
		if got, ok := parseSize(s); !ok || got != want {
			t.Errorf("parsesize(%q) = %d %v, want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "X", "1X", "-1", "M"} {
		if _, ok := parseSize(s); ok {
			t.Errorf("parsesize(%q) accepted", s)
		}
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[float64]string{2.0413199: "2.04132", 0: "0", 1048576: "1.04858e+06", 22.5: "22.5", 0.000231: "0.000231", 999999.6: "1e+06", 100000: "100000"} {
		if got := cG(v); got != want {
			t.Errorf("%%g of %v = %q, want %q", v, got, want)
		}
	}
	for _, tt := range []struct {
		v     float64
		width int
		want  string
	}{{34.5876, 7, "  34.59"}, {16516.7, 7, "16516.7"}, {135601.1, 7, " 135601"}, {12345678, 7, "1.2e+07"}, {0.000231, 6, "  0.00"}, {123456.7, 6, "123457"}} {
		if got := floatStr(tt.v, tt.width); got != tt.want {
			t.Errorf("getFloatStr(%v, %d) = %q, want %q", tt.v, tt.width, got, tt.want)
		}
	}
}

// withBlock replaces the endless wait of the hang faults for one test.
func withBlock(t *testing.T) *int {
	called := 0
	old := blockForever
	blockForever = func() { called++ }
	t.Cleanup(func() { blockForever = old })
	return &called
}

func dataRows(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) > 5 && (f[2] == "float" || f[2] == "half") {
			out = append(out, l)
		}
	}
	return out
}

func TestFaults(t *testing.T) {
	sweep := []string{"--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "--launch", "1"}
	t.Run("hang", func(t *testing.T) {
		blocked := withBlock(t)
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=hang"}, sweep...)
		if *blocked != 1 || r.code != exitHung || len(dataRows(r.stdout)) != 2 || strings.Contains(r.stdout, "Out of bounds") ||
			!strings.Contains(r.stdout, "#wrong") {
			t.Errorf("hang: blocked %d, exit %d, rows %d:\n%s", *blocked, r.code, len(dataRows(r.stdout)), r.stdout)
		}
	})
	t.Run("init-hang", func(t *testing.T) {
		blocked := withBlock(t)
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=init-hang", "NCCL_DEBUG=INFO"}, sweep...)
		if *blocked != 1 || strings.Contains(r.stdout, "#wrong") || !strings.HasSuffix(r.stdout, "- Init START\n") {
			t.Errorf("init-hang must stop after NCCL's Init START, before the table:\n%s", r.stdout)
		}
	})
	t.Run("crash", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=crash"}, sweep...)
		if r.code != 134 || len(dataRows(r.stdout)) != 2 || !strings.Contains(r.stderr, "Signal: Aborted (6)") {
			t.Errorf("crash: exit %d, rows %d, stderr %q", r.code, len(dataRows(r.stdout)), r.stderr)
		}
	})
	t.Run("wrong", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=wrong"}, sweep...)
		rows := dataRows(r.stdout)
		if r.code != 7 || len(rows) != 4 || !strings.Contains(r.stdout, "# Out of bounds values : 32 FAILED") {
			t.Fatalf("wrong: exit %d:\n%s", r.code, r.stdout)
		}
		for _, row := range rows {
			if f := strings.Fields(row); f[8] == "0" || f[12] == "0" {
				t.Errorf("row without wrong values: %s", row)
			}
		}
		// Unchecked (-c 0), nothing is noticed: #wrong is N/A.
		r = runMain(t, []string{"NCCLTUNE_SIM_FAULT=wrong"}, append(sweep, "-c", "0")...)
		if r.code != 0 || !strings.Contains(r.stdout, "N/A") || !strings.Contains(r.stdout, ": 0 OK") {
			t.Errorf("wrong with -c 0: exit %d\n%s", r.code, r.stdout)
		}
	})
	t.Run("wrong by profile rule", func(t *testing.T) {
		r := runMain(t, []string{"NCCL_PROTO=LL128"}, sweep...)
		rows := dataRows(r.stdout)
		if r.code != 7 || len(rows) != 4 || strings.Fields(rows[0])[8] != "0" || strings.Fields(rows[1])[8] == "0" {
			t.Errorf("spark4 NCCL_PROTO=LL128 must corrupt from 1 MiB on:\n%s", r.stdout)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=garbage"}, sweep...)
		if r.code != 0 || len(r.stdout) != 4096 || strings.Contains(r.stdout, "nccl-tests") {
			t.Errorf("garbage: exit %d, %d bytes", r.code, len(r.stdout))
		}
	})
	t.Run("silent", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=silent"}, sweep...)
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("silent: exit %d, %q %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("socket-fallback", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=socket-fallback", "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1", "NCCL_DEBUG=INFO"},
			"--profile", "spark4", "-b", "256M", "-e", "256M", "--launch", "1", "--noise", "0")
		rows := dataRows(r.stdout)
		if r.code != 0 || len(rows) != 1 || !strings.Contains(r.stdout, "Using network Socket") || strings.Contains(r.stdout, "via NET/IB") {
			t.Fatalf("socket-fallback:\n%s", r.stdout)
		}
		var bw float64
		fmt.Sscan(strings.Fields(rows[0])[7], &bw)
		if bw < 1 || bw > 3 {
			t.Errorf("socket fallback busbw %.2f GB/s, want 1-3", bw)
		}
	})
	t.Run("mpi-wireup", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=mpi-wireup"}, sweep...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "cannot find a corresponding process\nentry for that peer.") {
			t.Errorf("mpi-wireup: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("unknown fault", func(t *testing.T) {
		r := runMain(t, []string{"NCCLTUNE_SIM_FAULT=boom"}, sweep...)
		if r.code != 2 || !strings.Contains(r.stderr, "unknown fault") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("rule from a JSON profile", func(t *testing.T) {
		blocked := withBlock(t)
		custom := []string{"--profile", "testdata/custom.json", "-b", "256K", "-e", "4M", "-f", "2", "--launch", "1"}
		r := runMain(t, []string{"NCCL_ALGO=Tree"}, custom...)
		if *blocked != 1 || len(dataRows(r.stdout)) != 2 {
			t.Errorf("Tree must hang at 1 MiB (2 rows before): blocked %d\n%s", *blocked, r.stdout)
		}
		r = runMain(t, []string{"NCCL_PROTO=LL"}, custom...)
		if r.code != 134 || len(dataRows(r.stdout)) != 3 {
			t.Errorf("LL must crash at 2 MiB: exit %d\n%s", r.code, r.stdout)
		}
		// "" in a rule matches an unset variable only.
		r = runMain(t, []string{"NCCL_PROTO=LL", "NCCL_MAX_NCHANNELS=1"}, custom...)
		if r.code != 0 {
			t.Errorf("LL with a channel cap must not crash: exit %d", r.code)
		}
	})
}

func TestSampleLaunchFaults(t *testing.T) {
	p := mustProfile(t, "spark4")
	sizes := nccl.PowersOfTwo(512<<10, 4<<20)
	s, err := p.SampleLaunch(env("NCCL_PROTO=LL128"), sizes, 5, 1, 1, 1)
	var fe *FaultError
	if !errorsAs(err, &fe) || fe.Kind != FaultWrong || fe.Bytes != 1<<20 || !fe.Rule || len(s) != 4 {
		t.Errorf("forced LL128: %v, %d sizes", err, len(s))
	}
	s, err = p.SampleLaunch(env("NCCLTUNE_SIM_FAULT=hang"), sizes, 5, 1, 1, 1)
	if !errorsAs(err, &fe) || fe.Kind != FaultHang || fe.Bytes != 2<<20 || len(s) != 2 {
		t.Errorf("hang: %v, %d sizes", err, len(s))
	}
	if _, err = p.SampleLaunch(env("NCCL_ALGO=NVLS"), sizes, 5, 1, 1, 1); !errorsAs(err, new(*UsageError)) {
		t.Errorf("NVLS: %v", err)
	}
	if s, err = p.SampleLaunch(env("NCCL_PROTO=LL128"), []int64{512 << 10}, 5, 1, 1, 1); err != nil || len(s) != 1 {
		t.Errorf("a sweep below the rule's sizes is fine: %v", err)
	}
}

func errorsAs[T error](err error, target *T) bool {
	for err != nil {
		if e, ok := err.(T); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// childCommand starts the test binary as the simulated benchmark, the way
// nccltune starts itself.
func childCommand(t testing.TB, environ []string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{ChildArg}, args...)...)
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func TestChildProcessMatchesInProcess(t *testing.T) {
	environ := []string{"NCCL_PROTO=^LL128", "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=TUNING"}
	args := []string{"--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "--seed", "5", "--launch", "4"}
	var out, errb bytes.Buffer
	cmd := childCommand(t, environ, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, errb.String())
	}
	in := runMain(t, environ, args...)
	if out.String() != in.stdout {
		t.Errorf("child process and in-process Main differ:\n%s\n---\n%s", out.String(), in.stdout)
	}
}

// TestChildHangIsKillable runs the hang fault as a real process: it must
// print its first rows, then stay alive until killed.
func TestChildHangIsKillable(t *testing.T) {
	cmd := childCommand(t, []string{"NCCLTUNE_SIM_FAULT=hang"}, "--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	rows := make(chan int, 1)
	go func() {
		n := 0
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if len(dataRows(sc.Text())) == 1 {
				n++
				if n == 2 {
					rows <- n
				}
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-rows:
	case err := <-done:
		t.Fatalf("hanging child exited: %v", err)
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("no rows within 10 s")
	}
	select {
	case err := <-done:
		t.Fatalf("child exited instead of hanging: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err := <-done; err == nil {
		t.Error("killed child reported success")
	}
}

func TestNoiseStatistics(t *testing.T) {
	// cv is the launch-to-launch coefficient of variation of a per-launch
	// statistic: the mean of 20 iterations (nccl-tests' time column, the
	// seed's ±18 %) or the median of 40 (how LOOPBACK.md measured 4-7 %).
	cv := func(p *Profile, cfg nccl.Config, bytes int64, launches int, useMedian bool) float64 {
		var means []float64
		for l := 1; l <= launches; l++ {
			iters := 20
			if useMedian {
				iters = 40
			}
			s, err := p.SampleLaunch(cfg, []int64{bytes}, iters, 1, 12345, l)
			if err != nil {
				t.Fatal(err)
			}
			if useMedian {
				means = append(means, medianOf(s[bytes]))
				continue
			}
			m := 0.0
			for _, v := range s[bytes] {
				m += v
			}
			means = append(means, m/float64(iters))
		}
		avg, sd := 0.0, 0.0
		for _, m := range means {
			avg += m
		}
		avg /= float64(len(means))
		for _, m := range means {
			sd += (m - avg) * (m - avg)
		}
		return math.Sqrt(sd/float64(len(means)-1)) / avg
	}
	s4, lp := mustProfile(t, "spark4"), mustProfile(t, "h200-loopback")
	tests := []struct {
		p      *Profile
		cfg    nccl.Config
		bytes  int64
		median bool
		lo, hi float64
	}{
		{s4, env(), 1 << 20, false, 0.15, 0.21},
		{s4, env("NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8"), 1 << 20, false, 0.15, 0.21},
		{s4, env(), 4 << 20, false, 0.02, 0.04},
		{s4, env(), 64 << 20, false, 0.02, 0.04},
		{lp, env(), 1 << 20, true, 0.04, 0.07},
		{lp, env(), 4 << 20, true, 0.04, 0.07},
	}
	for _, tt := range tests {
		if got := cv(tt.p, tt.cfg, tt.bytes, 200, tt.median); got < tt.lo || got > tt.hi {
			t.Errorf("%s %s at %s: launch-to-launch CV %.3f, want %.2f-%.2f", tt.p.Name, tt.cfg, nccl.FormatSize(tt.bytes), got, tt.lo, tt.hi)
		}
	}
	// The first launch after start-up is about 30 % slow on the loopback fabric.
	ratio := 0.0
	const seeds = 100
	for seed := int64(0); seed < seeds; seed++ {
		cold, _ := lp.SampleLaunch(env(), []int64{1 << 20}, 20, 1, seed, 0)
		warm, _ := lp.SampleLaunch(env(), []int64{1 << 20}, 20, 1, seed, 1)
		ratio += math.Log(medianOf(cold[1<<20]) / medianOf(warm[1<<20]))
	}
	if r := math.Exp(ratio / seeds); r < 1.25 || r > 1.35 {
		t.Errorf("cold launch is %.2fx a warm one, want about 1.3x", r)
	}
	// --noise 0 is the true curve, every iteration, every launch.
	want, _ := s4.TrueTimeUS(env(), 1<<20)
	for _, launch := range []int{0, 1, 7} {
		s, _ := s4.SampleLaunch(env(), []int64{1 << 20}, 10, 0, 99, launch)
		for _, v := range s[1<<20] {
			if v != want {
				t.Fatalf("noise 0, launch %d: sample %v, true time %v", launch, v, want)
			}
		}
	}
	// Outliers are rare: about 1 % of iterations on the loopback fabric.
	outliers, total := 0, 0
	for l := 1; l <= 100; l++ {
		s, _ := lp.SampleLaunch(env(), []int64{1 << 20}, 50, 1, 3, l)
		med := medianOf(s[1<<20])
		for _, v := range s[1<<20] {
			total++
			if v > 1.45*med {
				outliers++
			}
		}
	}
	if f := float64(outliers) / float64(total); f < 0.004 || f > 0.02 {
		t.Errorf("outlier fraction %.4f, want about 0.01", f)
	}
}

// BenchmarkMain is one simulated launch of a 4-size sweep with
// per-iteration timing, in process (what a search pays per launch, minus
// process start; see BenchmarkChildProcess for that).
func BenchmarkMain(b *testing.B) {
	args := []string{"--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "-n", "20", "-w", "5", "--seed", "1", "--launch", "1"}
	environ := []string{"NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8"}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if code := Main(args, environ, &out, &out); code != 0 {
			b.Fatal(out.String())
		}
	}
}

// BenchmarkChildProcess is the whole cost of one simulated launch as
// nccltune pays it: start the executable, run, write the JSON, exit.
func BenchmarkChildProcess(b *testing.B) {
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		path := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		cmd := childCommand(b, []string{"NCCL_PROTO=^LL128"}, "--profile", "spark4", "-b", "512K", "-e", "4M", "-f", "2", "-I", "1", "-J", path, "--launch", "1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

func BenchmarkSampleLaunch(b *testing.B) {
	p := mustProfile(b, "spark4")
	sizes := nccl.PowersOfTwo(512<<10, 4<<20)
	cfg := env("NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8")
	for b.Loop() {
		if _, err := p.SampleLaunch(cfg, sizes, 20, 1, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
}
