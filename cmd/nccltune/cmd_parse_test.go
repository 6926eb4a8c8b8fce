package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

// parseInputDir holds the parser's inputs: real nccl-tests fixtures and
// hand-written variants (owned by the runner package's tests).
const parseInputDir = "../../internal/benchfmt/testdata"

func parseInput(name string) string { return filepath.Join(parseInputDir, name) }

// runParseCLI runs "nccltune parse ARGS…" and returns stdout, stderr and
// the exit code main would use.
func runParseCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), append([]string{"parse"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// checkParseGolden compares got with testdata/parse/NAME; -update rewrites it.
func checkParseGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "parse", name), []byte(got))
}

func TestParseCommandText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		golden string
		files  []string
		code   int
		want   []string // lines the output must hold, beyond the golden file
	}{
		{"debug_tuning.txt", []string{"fixtures/ar2_debug_tuning.txt"}, exitOK, []string{
			"      512K   131072  float   261.31        2.01        2.01       0",
			"NCCL: transport Socket (lo:127.0.0.1<0>), GDR off, 2 channels, 2 ranks on 2 nodes, NCCL 2.28.3",
			"AllReduce  4M    RING/SIMPLE  2 channels (0..1)",
		}},
		{"full_periter.txt", []string{"fixtures/ar2_full_periter.txt"}, exitOK, []string{"p99 µs", "     128M  33554432  float  35601.10"}},
		{"cycles_and_sim.txt", []string{"text/ar2_cycles_N2.txt", "text/sim_spark4.txt", "text/ar2_nocheck.txt"}, exitOK, []string{
			"SIMULATED fabric (profile spark4): not a measurement",
			"cycle",
			"N/A",
		}},
		{"bad_proto.txt", []string{"fixtures/ar2_bad_proto.txt"}, exitFabric, []string{
			`FAILED: NCCL reported "invalid usage" (run with NCCL_DEBUG=WARN for details)`,
		}},
		{"truncated.txt", []string{"text/ar2_truncated.txt"}, exitFabric, []string{"INCOMPLETE", "note: skipped the row for size 4194304"}},
		{"broadcast_root.txt", []string{"text/broadcast2_bf16_root1.txt", "text/reduce2_int32_all_ops.txt"}, exitOK, []string{"root", "mulsum", "bfloat16"}},
		// The torch instrument prints samples, not nccl-tests' -I 1 columns: parse computes them.
		{"torch.txt", []string{"torch/h200_loopback.jsonl", "torch/real_torch_ar2.jsonl"}, exitOK, []string{
			"      512K   131072  float   237.31        2.21        2.21       0   254.46   3.5",
			"      512K   131072  float   347.36        1.51        1.51       0   480.32   9.0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var args []string
			for _, f := range tt.files {
				args = append(args, parseInput(f))
			}
			stdout, stderr, code := runParseCLI(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			checkParseGolden(t, tt.golden, stdout)
		})
	}
}

// parseDocJSON decodes only what DESIGN's contract names, so the test
// fails when a contract field disappears or changes type.
type parseDocJSON struct {
	File        *string  `json:"file"`
	Collective  *string  `json:"collective"`
	NRanks      *int     `json:"nranks"`
	NCCLVersion *string  `json:"nccl_version"`
	AvgBusBW    *float64 `json:"avg_busbw"`
	OutOfBounds *int     `json:"out_of_bounds"`
	Simulated   *bool    `json:"simulated"`
	Rows        []struct {
		Bytes  *int64   `json:"bytes"`
		Cycle  *int     `json:"cycle"`
		TimeUS *float64 `json:"time_us"`
		BusBW  *float64 `json:"busbw"`
		AlgBW  *float64 `json:"algbw"`
		Wrong  *int64   `json:"wrong"`
	} `json:"rows"`
	Facts   map[string]any `json:"facts"`
	Errors  []string       `json:"errors"`
	Failure string         `json:"failure"`
	Error   *struct {
		Code    int    `json:"code"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeParseDoc(t *testing.T, raw json.RawMessage) parseDocJSON {
	t.Helper()
	var d parseDocJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	if d.File == nil || d.Collective == nil || d.NRanks == nil || d.NCCLVersion == nil || d.AvgBusBW == nil || d.Simulated == nil || d.Rows == nil {
		t.Fatalf("a contract field is missing: %s", raw)
	}
	if !bytes.Contains(raw, []byte(`"out_of_bounds":`)) {
		t.Fatalf("out_of_bounds is missing (it must be null when unknown): %s", raw)
	}
	for _, r := range d.Rows {
		if r.Bytes == nil || r.Cycle == nil || r.TimeUS == nil || r.BusBW == nil || r.AlgBW == nil {
			t.Fatalf("a row field is missing: %s", raw)
		}
	}
	return d
}

func TestParseCommandJSON(t *testing.T) {
	t.Parallel()
	// Flags after the file, as DESIGN writes commands.
	stdout, stderr, code := runParseCLI(t, parseInput("fixtures/ar2_mps_info.txt"), "--json")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	d := decodeParseDoc(t, json.RawMessage(stdout))
	if *d.Collective != "all_reduce" || *d.NRanks != 2 || *d.NCCLVersion != "2.28.3" || *d.AvgBusBW != 2.04132 ||
		d.OutOfBounds == nil || *d.OutOfBounds != 0 || *d.Simulated || len(d.Rows) != 12 || !strings.HasSuffix(*d.File, "ar2_mps_info.txt") {
		t.Errorf("document %s", stdout)
	}
	r := d.Rows[5]
	if *r.Bytes != 1048576 || *r.Cycle != 0 || *r.TimeUS != 508.57 || *r.BusBW != 2.06 || *r.AlgBW != 2.06 || r.Wrong == nil || *r.Wrong != 0 {
		t.Errorf("1M row: %s", stdout)
	}
	if d.Facts["transport"] != "Socket" || d.Facts["gdr"] != false || d.Facts["channels"] != 2.0 {
		t.Errorf("facts %v", d.Facts)
	}
	checkParseGolden(t, "mps_info.json", stdout)

	// The flag before the file gives the same document.
	before, _, _ := runParseCLI(t, "--json", parseInput("fixtures/ar2_mps_info.txt"))
	if before != stdout {
		t.Errorf("--json before and after the file differ")
	}
}

// TestParseCommandTorchIterColumns: for the torch instrument's output,
// which carries samples but not nccl-tests' -I 1 columns, parse prints
// the columns computed from the samples, around each row's time.
func TestParseCommandTorchIterColumns(t *testing.T) {
	t.Parallel()
	files := []string{"h200_loopback.jsonl", "truncated.jsonl", "wrong_2M.jsonl", "nocheck.jsonl", "debug_mixed.txt", "bounds.jsonl"}
	for _, f := range files {
		stdout, _, _ := runParseCLI(t, "--json", parseInput("torch/"+f))
		var d struct {
			Rows []struct {
				TimeUS float64             `json:"time_us"`
				Iter   *benchfmt.IterStats `json:"iter"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(stdout), &d); err != nil || len(d.Rows) == 0 {
			t.Fatalf("%s: %v\n%s", f, err, stdout)
		}
		for _, r := range d.Rows {
			it := r.Iter
			if it == nil || len(it.TimesUS) == 0 || it.MinUS > r.TimeUS || it.MaxUS < r.TimeUS || it.P99US > it.MaxUS || it.CVPct <= 0 {
				t.Errorf("%s: iteration columns %+v around time %v", f, it, r.TimeUS)
			}
		}
		if f == files[0] {
			checkParseGolden(t, "torch.json", stdout)
		}
	}
}

func TestParseCommandJSONSeveralFiles(t *testing.T) {
	t.Parallel()
	files := []string{"fixtures/ar2_full_periter.json", "text/ar2_nocheck.txt", "text/ar2_cycles_N2.txt", "text/sim_spark4.txt"}
	var args []string
	for _, f := range files {
		args = append(args, parseInput(f))
	}
	stdout, stderr, code := runParseCLI(t, append(args, "--json")...)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		SchemaVersion int               `json:"schema_version"`
		Files         []json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Files) != len(files) || doc.SchemaVersion != 1 {
		t.Fatalf("want one document (schema_version 1) of %d files, got %d (%v)", len(files), len(doc.Files), err)
	}
	docs := doc.Files
	periter := decodeParseDoc(t, docs[0])
	if len(periter.Rows) != 25 || *periter.Rows[0].Bytes != 8 || !bytes.Contains(docs[0], []byte(`"times_us"`)) {
		t.Errorf("JSON input: %d rows, samples kept: %v", len(periter.Rows), bytes.Contains(docs[0], []byte(`"times_us"`)))
	}
	nocheck := decodeParseDoc(t, docs[1])
	for _, r := range nocheck.Rows {
		if r.Wrong != nil {
			t.Errorf("-c 0 row has wrong=%d, want null", *r.Wrong)
		}
	}
	if !bytes.Contains(docs[1], []byte(`"wrong": null`)) {
		t.Errorf("unchecked rows must say \"wrong\": null: %s", docs[1])
	}
	cycles := decodeParseDoc(t, docs[2])
	if len(cycles.Rows) != 8 || *cycles.Rows[3].Cycle != 0 || *cycles.Rows[4].Cycle != 1 {
		t.Errorf("cycles: %s", docs[2])
	}
	if sim := decodeParseDoc(t, docs[3]); !*sim.Simulated {
		t.Errorf("simulated output not labelled: %s", docs[3])
	}
}

func TestParseCommandFailures(t *testing.T) {
	t.Parallel()
	t.Run("failed run", func(t *testing.T) {
		stdout, stderr, code := runParseCLI(t, "--json", parseInput("fixtures/ar2_bad_proto.txt"))
		if code != exitFabric {
			t.Fatalf("exit %d, want %d", code, exitFabric)
		}
		d := decodeParseDoc(t, json.RawMessage(stdout))
		if !strings.Contains(d.Failure, `NCCL reported "invalid usage"`) || len(d.Errors) != 4 || len(d.Rows) != 0 || d.OutOfBounds != nil {
			t.Errorf("document %s", stdout)
		}
		if !strings.Contains(stderr, "ar2_bad_proto.txt: NCCL reported \"invalid usage\"") {
			t.Errorf("stderr %q does not name the file and the cause", stderr)
		}
	})
	t.Run("truncated json", func(t *testing.T) {
		stdout, _, code := runParseCLI(t, "--json", parseInput("json/ar2_truncated.json"))
		d := decodeParseDoc(t, json.RawMessage(stdout))
		if code != exitFabric || len(d.Rows) != 10 || d.OutOfBounds != nil || !strings.Contains(d.Failure, "cut short") {
			t.Errorf("exit %d, document %s", code, stdout)
		}
	})
	t.Run("one good, one failed", func(t *testing.T) {
		stdout, stderr, code := runParseCLI(t, parseInput("fixtures/ag3.txt"), parseInput("text/ar2_mpi_docker0.txt"), "--json")
		var doc struct {
			SchemaVersion int            `json:"schema_version"`
			Files         []parseDocJSON `json:"files"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Files) != 2 || doc.SchemaVersion != 1 {
			t.Fatalf("stdout is not one document with schema_version 1 and 2 files: %v\n%s", err, stdout)
		}
		docs := doc.Files
		if code != exitFabric || docs[0].Failure != "" || !strings.Contains(docs[1].Failure, "docker0") || !strings.Contains(stderr, "1 of 2 files") {
			t.Errorf("exit %d, failures %q / %q, stderr %q", code, docs[0].Failure, docs[1].Failure, stderr)
		}
	})
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no file", nil, exitUsage, "parse needs at least one FILE"},
		{"missing file", []string{"testdata/parse/no-such-file.txt"}, exitUsage, "testdata/parse/no-such-file.txt: no such file"},
		{"missing among good", []string{parseInput("fixtures/ag3.txt"), "nope.txt", "--json"}, exitUsage, "nope.txt: no such file"},
		{"directory", []string{"testdata"}, exitUsage, "testdata is a directory"},
		{"garbage", []string{parseInput("text/garbage.txt")}, exitUsage, "garbage.txt: no nccl-tests results table found"},
		{"empty", []string{parseInput("text/empty.txt"), "--json"}, exitUsage, "is it nccl-tests output?"},
		{"unknown flag", []string{"--frobnicate", parseInput("fixtures/ag3.txt")}, exitUsage, "frobnicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runParseCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if tt.name == "missing file" || tt.name == "missing among good" {
				if stdout != "" && !isErrorDocument(stdout) {
					t.Errorf("a missing file must stop before printing results; stdout %q", stdout)
				}
			}
			if strings.Contains(strings.Join(tt.args, " "), "--json") && stdout != "" {
				var v any
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Errorf("--json printed something that is not one JSON document: %q", stdout)
				}
			}
		})
	}
}

func TestParseCommandStdin(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(parseInput("fixtures/ag3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = runParse(context.Background(), parseOptions{files: []string{"-"}, cmdIO: cmdIO{json: true, stdin: bytes.NewReader(data), stdout: &out}})
	if err != nil {
		t.Fatal(err)
	}
	d := decodeParseDoc(t, out.Bytes())
	if *d.File != "-" || *d.Collective != "all_gather" || *d.NRanks != 3 || len(d.Rows) != 4 {
		t.Errorf("document %s", out.String())
	}
}

// TestParseVerdict checks parse's exit: a failed run is the fabric's
// (3), output that is not nccl-tests' is the user's (2), and the message
// names each file.
func TestParseVerdict(t *testing.T) {
	t.Parallel()
	good := ui.ParseOutcome{Name: "good.txt", Result: &benchfmt.Result{}}
	failed := ui.ParseOutcome{Name: "bad.txt", Err: &benchfmt.FailureError{Message: "NCCL failed"}}
	junk := ui.ParseOutcome{Name: "junk.txt", Err: errors.New("no nccl-tests table")}
	for _, tc := range []struct {
		parsed []ui.ParseOutcome
		kind   error
		want   string
	}{
		{[]ui.ParseOutcome{good}, nil, ""},
		{[]ui.ParseOutcome{failed}, vocab.ErrFabric, "bad.txt: NCCL failed"},
		{[]ui.ParseOutcome{good, failed, junk}, vocab.ErrFabric, "1 of 3 files hold failed runs: bad.txt: NCCL failed"},
		{[]ui.ParseOutcome{good, junk}, vocab.ErrUsage, "junk.txt: no nccl-tests table"},
	} {
		err := parseVerdict(tc.parsed)
		if tc.kind == nil {
			if err != nil {
				t.Errorf("parseVerdict of good runs: %v", err)
			}
			continue
		}
		if !errors.Is(err, tc.kind) || err.Error() != tc.want {
			t.Errorf("parseVerdict = %v, want %v saying %q", err, tc.kind, tc.want)
		}
	}
}

// TestParseErrorShape (issue 28): a file parse cannot read carries the
// one error shape of every JSON document, {code, kind, message} (was: a
// string), and several files are one document with schema_version (was:
// a bare array).
func TestParseErrorShape(t *testing.T) {
	t.Parallel()
	stdout, _, code := runParseCLI(t, "--json", parseInput("fixtures/ag3.txt"), parseInput("text/garbage.txt"))
	var doc struct {
		SchemaVersion *int           `json:"schema_version"`
		Files         []parseDocJSON `json:"files"`
	}
	decodeOneJSON(t, stdout, &doc)
	if code != exitUsage || doc.SchemaVersion == nil || *doc.SchemaVersion != 1 || len(doc.Files) != 2 {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	if doc.Files[0].Error != nil {
		t.Errorf("the good file has an error: %+v", doc.Files[0].Error)
	}
	if e := doc.Files[1].Error; e == nil || e.Code != exitUsage || e.Kind != "usage" || !strings.Contains(e.Message, "no nccl-tests results table") {
		t.Errorf("the garbage file's error: %+v", e)
	}
}

// TestParseCommandOp is --op: an output of another collective is refused
// (status 2, nothing of it printed), one of the op reads as without --op,
// and one that names no program (nccl-tests 2.13) is read as the op.
func TestParseCommandOp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		file, op   string
		code       int
		collective string // parse --json's "collective"
		rows       int
		message    string // in stderr
	}{
		{"same op", "ops/all_gather_4r.txt", "all_gather", exitOK, "all_gather", 9, ""},
		{"other op refused", "ops/all_gather_4r.txt", "all_reduce", exitUsage, "all_gather", 0,
			"--op all_reduce: the output is of all_gather (its program is all_gather_perf); leave out --op, or pass --op all_gather"},
		{"no program named", "text/old_2_13_ar8.txt", "reduce_scatter", exitOK, "reduce_scatter", 4, ""},
		{"without --op", "text/old_2_13_ar8.txt", "", exitOK, "", 4, ""},
		{"unknown op", "ops/all_gather_4r.txt", "allgather_x", exitUsage, "", -1, `unknown collective "allgather_x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{parseInput(tc.file), "--json"}
			if tc.op != "" {
				args = append(args, "--op", tc.op)
			}
			stdout, stderr, code := runParseCLI(t, args...)
			if code != tc.code || !strings.Contains(stderr, tc.message) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.message)
			}
			if tc.rows < 0 {
				return
			}
			d := decodeParseDoc(t, json.RawMessage(stdout))
			if *d.Collective != tc.collective || len(d.Rows) != tc.rows {
				t.Errorf("collective %q with %d rows, want %q with %d: %s", *d.Collective, len(d.Rows), tc.collective, tc.rows, stdout)
			}
		})
	}
	// The text output of a refused file names why and prints no table.
	stdout, _, code := runParseCLI(t, parseInput("ops/all_gather_4r.txt"), "--op", "broadcast")
	if code != exitUsage || !strings.Contains(stdout, "refused: --op broadcast") || strings.Contains(stdout, "busbw") {
		t.Errorf("exit %d, text %q", code, stdout)
	}
}
