package benchfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/golden"
)

// parseInputs lists every parser input under testdata: the real nccl-tests
// fixtures (copied from ../../shared/fixtures) and the hand-written variants.
func parseInputs(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"fixtures", "text", "json"} {
		m, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d parser inputs under testdata", len(files))
	}
	return files
}

func readTestdata(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// goldenDoc is what a golden file holds for one input.
type goldenDoc struct {
	Result  *Result `json:"result"`
	Error   string  `json:"error,omitempty"`
	Failure bool    `json:"failure,omitempty"`
	NoTable bool    `json:"no_table,omitempty"`
}

func TestParseGolden(t *testing.T) {
	for _, in := range parseInputs(t) {
		name := filepath.Base(filepath.Dir(in)) + "_" + filepath.Base(in)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			r, perr := Parse(data)
			checkConsistent(t, data, r, perr)
			doc := goldenDoc{Result: r}
			if perr != nil {
				var fe *FailureError
				doc.Error = perr.Error()
				doc.Failure = errors.As(perr, &fe)
				doc.NoTable = errors.Is(perr, ErrNoTable)
			}
			got, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), got)
		})
	}
}

// checkConsistent fails t when a parse result breaks the parser's promises:
// no negative or non-finite numbers, cycles that follow the sizes, the
// error contract, a result that encodes as JSON.
func checkConsistent(t testing.TB, input []byte, r *Result, err error) {
	t.Helper()
	var fe *FailureError
	switch {
	case err == nil && r == nil:
		t.Fatalf("nil result without an error")
	case err == nil && (!r.Complete || len(r.Rows) == 0):
		t.Fatalf("no error, but complete=%v with %d rows", r.Complete, len(r.Rows))
	case errors.As(err, &fe):
		if r == nil || fe.Message == "" {
			t.Fatalf("FailureError %q with result %v", fe.Message, r)
		}
	case err != nil && !errors.Is(err, ErrNoTable):
		t.Fatalf("error is neither a *FailureError nor ErrNoTable: %v", err)
	}
	if r == nil {
		return
	}
	finite := func(what string, f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			t.Fatalf("%s = %v", what, f)
		}
	}
	type series struct {
		typ, redop string
		root       int
	}
	last := map[series]Row{}
	for i, row := range r.Rows {
		if row.Bytes < 0 || row.Count < 0 || row.Cycle < 0 || row.Root < -1 {
			t.Fatalf("row %d: %+v", i, row)
		}
		for _, m := range []*Measure{&row.Out, row.In} {
			if m == nil {
				continue
			}
			finite("time", m.TimeUS)
			finite("algbw", m.AlgBW)
			finite("busbw", m.BusBW)
			if m.Wrong != nil && *m.Wrong < 0 {
				t.Fatalf("row %d: #wrong %d", i, *m.Wrong)
			}
			if m.Iter != nil {
				for _, f := range append([]float64{m.Iter.MinUS, m.Iter.MaxUS, m.Iter.P99US, m.Iter.CVPct}, m.Iter.TimesUS...) {
					finite("per-iteration value", f)
				}
			}
		}
		k := series{row.Type, row.Redop, row.Root}
		prev, seen := last[k]
		switch {
		case !seen && row.Cycle != 0:
			t.Fatalf("row %d starts a series at cycle %d", i, row.Cycle)
		case seen && row.Bytes <= prev.Bytes && row.Cycle != prev.Cycle+1:
			t.Fatalf("row %d (%d bytes after %d) has cycle %d after %d", i, row.Bytes, prev.Bytes, row.Cycle, prev.Cycle)
		case seen && row.Bytes > prev.Bytes && row.Cycle != prev.Cycle:
			t.Fatalf("row %d (%d bytes after %d) changed cycle %d to %d", i, row.Bytes, prev.Bytes, prev.Cycle, row.Cycle)
		}
		last[k] = row
	}
	if r.NRanks < 0 || (len(r.Devices) > 0 && r.NRanks != len(r.Devices)) {
		t.Fatalf("nranks %d with %d devices", r.NRanks, len(r.Devices))
	}
	finite("avg busbw", r.AvgBusBW)
	if r.OutOfBounds != nil && *r.OutOfBounds < 0 {
		t.Fatalf("out of bounds %d", *r.OutOfBounds)
	}
	if f := r.Facts; f != nil {
		if f.Channels < 0 || f.NRanks < 0 || f.NNodes < 0 {
			t.Fatalf("facts %+v", f)
		}
		for _, c := range f.Choices {
			if c.Bytes < 0 || c.ChannelLo < 0 || c.Channels != c.ChannelHi-c.ChannelLo+1 || c.Channels < 1 {
				t.Fatalf("choice %+v", c)
			}
		}
	}
	isJSON := bytes.HasPrefix(bytes.TrimLeft(input, " \t\r\n\ufeff"), []byte("{"))
	if r.Simulated && !isJSON && !bytes.Contains(input, []byte(SimulatedHeaderPrefix)) {
		t.Fatalf("simulated, but the input never says so")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("result does not encode as JSON: %v", err)
	}
}

func wrong(n int64) *int64 { return &n }

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file       string
		collective string
		rows       int
		nranks     int
		nccl       string
		inPlace    bool
		perIter    bool
		avg        float64
		first      Row // compared field by field where set
	}{
		{"fixtures/ag3.txt", "all_gather", 4, 3, "2.28.3", true, false, 2.22033,
			Row{Bytes: 524256, Count: 43688, Type: "float", Redop: "none", Root: -1, Out: Measure{TimeUS: 243.65, AlgBW: 2.15, BusBW: 1.43, Wrong: wrong(0)}}},
		{"fixtures/ar2_mps_info.txt", "all_reduce", 12, 2, "2.28.3", true, false, 2.04132,
			Row{Bytes: 32768, Count: 8192, Type: "float", Redop: "sum", Root: -1, Out: Measure{TimeUS: 85.95, AlgBW: 0.38, BusBW: 0.38, Wrong: wrong(0)}}},
		{"fixtures/ar2_debug_tuning.txt", "all_reduce", 4, 2, "2.28.3", true, false, 2.82701,
			Row{Bytes: 524288, Count: 131072, Type: "float", Redop: "sum", Root: -1, Out: Measure{TimeUS: 261.31, AlgBW: 2.01, BusBW: 2.01, Wrong: wrong(0)}}},
		{"fixtures/ar2_full_periter.txt", "all_reduce", 25, 2, "2.28.3", true, true, 1.41397,
			Row{Bytes: 8, Count: 2, Type: "float", Redop: "sum", Root: -1, Out: Measure{TimeUS: 34.59, AlgBW: 0, BusBW: 0, Wrong: wrong(0),
				Iter: &IterStats{MinUS: 20.32, MaxUS: 276.35, P99US: 276.35, CVPct: 155.59}}}},
		{"fixtures/ar2_full_periter.json", "all_reduce", 25, 2, "2.28.3", true, true, 1.413966,
			Row{Bytes: 8, Count: 2, Type: "float", Redop: "sum", Root: -1, Out: Measure{TimeUS: 34.5876, AlgBW: 0.000231, BusBW: 0.000231, Wrong: wrong(0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if r.Collective != tt.collective || len(r.Rows) != tt.rows || r.NRanks != tt.nranks || r.NCCLVersion != tt.nccl || r.AvgBusBW != tt.avg {
				t.Errorf("got %s, %d rows, %d ranks, NCCL %s, avg %v; want %s, %d, %d, %s, %v",
					r.Collective, len(r.Rows), r.NRanks, r.NCCLVersion, r.AvgBusBW, tt.collective, tt.rows, tt.nranks, tt.nccl, tt.avg)
			}
			if !r.Complete || r.OutOfBounds == nil || *r.OutOfBounds != 0 || r.Simulated || len(r.Errors) != 0 || r.Invalid() != "" {
				t.Errorf("complete=%v oob=%v simulated=%v errors=%q invalid=%q", r.Complete, r.OutOfBounds, r.Simulated, r.Errors, r.Invalid())
			}
			for i, row := range r.Rows {
				if (row.In != nil) != tt.inPlace || (row.Out.Iter != nil) != tt.perIter || row.Cycle != 0 {
					t.Fatalf("row %d: in-place %v, per-iteration %v, cycle %d", i, row.In != nil, row.Out.Iter != nil, row.Cycle)
				}
				if i > 0 && row.Bytes <= r.Rows[i-1].Bytes {
					t.Fatalf("row %d: sizes not increasing", i)
				}
			}
			got := r.Rows[0]
			got.In = nil
			if got.Out.Iter != nil && tt.first.Out.Iter != nil {
				got.Out.Iter = &IterStats{MinUS: got.Out.Iter.MinUS, MaxUS: got.Out.Iter.MaxUS, P99US: got.Out.Iter.P99US, CVPct: got.Out.Iter.CVPct}
			} else if tt.first.Out.Iter == nil {
				got.Out.Iter = nil
			}
			if !reflect.DeepEqual(got, tt.first) {
				t.Errorf("first row\n got %+v\nwant %+v", got, tt.first)
			}
			for _, d := range r.Devices {
				if d.Name != "NVIDIA H200" || !strings.HasPrefix(d.Host, "fakehost") {
					t.Errorf("device %+v", d)
				}
			}
		})
	}
}

func TestParseFixtureFacts(t *testing.T) {
	tests := []struct {
		file      string
		transport string
		nics      []string
		gdr       *bool
		channels  int
		choices   []Choice
	}{
		{"fixtures/ar2_mps_info.txt", "Socket", []string{"lo:127.0.0.1<0>"}, new(false), 2, nil},
		{"fixtures/ar2_debug_tuning.txt", "Socket", []string{"lo:127.0.0.1<0>"}, new(false), 2, []Choice{
			{"AllReduce", 524288, "RING", "SIMPLE", 0, 1, 2},
			{"AllReduce", 1048576, "RING", "SIMPLE", 0, 1, 2},
			{"AllReduce", 2097152, "RING", "SIMPLE", 0, 1, 2},
			{"AllReduce", 4194304, "RING", "SIMPLE", 0, 1, 2},
		}},
		{"text/ar4_ib_gdr_debug.txt", "IB", []string{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE"}, new(true), 4, []Choice{
			{"AllReduce", 524288, "RING", "LL128", 0, 3, 4},
			{"AllReduce", 1048576, "RING", "LL128", 0, 3, 4},
			{"AllReduce", 2097152, "RING", "SIMPLE", 0, 3, 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readTestdata(t, tt.file)
			r, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			f := r.Facts
			if f == nil {
				t.Fatal("no facts")
			}
			if f.Transport != tt.transport || !reflect.DeepEqual(f.NICs, tt.nics) || !reflect.DeepEqual(f.GDR, tt.gdr) || f.Channels != tt.channels {
				t.Errorf("transport %q NICs %q GDR %v channels %d", f.Transport, f.NICs, f.GDR, f.Channels)
			}
			if !reflect.DeepEqual(f.Choices, tt.choices) {
				t.Errorf("choices\n got %+v\nwant %+v", f.Choices, tt.choices)
			}
			if f.NRanks != r.NRanks || f.NNodes != 2 || f.NCCLVersion != r.NCCLVersion {
				t.Errorf("facts say %d ranks on %d nodes, NCCL %s; header %d ranks, NCCL %s", f.NRanks, f.NNodes, f.NCCLVersion, r.NRanks, r.NCCLVersion)
			}
			if len(f.Hosts) != 2 {
				t.Errorf("hosts %q", f.Hosts)
			}
			// ParseFacts reads the same lines on its own, e.g. an NCCL_DEBUG_FILE.
			if alone := ParseFacts(data); !reflect.DeepEqual(alone, f) {
				t.Errorf("ParseFacts\n got %+v\nwant %+v", alone, f)
			}
		})
	}
}

func TestParseBadProto(t *testing.T) {
	r, err := Parse(readTestdata(t, "fixtures/ar2_bad_proto.txt"))
	var fe *FailureError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *FailureError", err)
	}
	const want = `NCCL reported "invalid usage" (run with NCCL_DEBUG=WARN for details): usually an NCCL_* value this NCCL does not accept, e.g. an NCCL_ALGO it cannot run`
	if fe.Message != want {
		t.Errorf("message\n got %s\nwant %s", fe.Message, want)
	}
	if r == nil || len(r.Rows) != 0 || r.Complete || r.NRanks != 2 || r.Collective != "all_reduce" {
		t.Fatalf("result %+v", r)
	}
	if len(r.Errors) != 4 || !strings.HasPrefix(r.Errors[0], "fakehost0: Test NCCL failure common.cu:222 'invalid usage") ||
		!strings.HasPrefix(r.Errors[2], "Primary job terminated normally") || !strings.HasPrefix(r.Errors[3], "mpirun detected that one or more processes exited") {
		t.Errorf("errors %q", r.Errors)
	}
	if !reflect.DeepEqual(fe.Lines, r.Errors) {
		t.Errorf("FailureError.Lines %q differ from Result.Errors", fe.Lines)
	}
}

func TestParseVariants(t *testing.T) {
	type check func(t *testing.T, r *Result)
	rowsWhere := func(want int, ok func(Row) bool) check {
		return func(t *testing.T, r *Result) {
			n := 0
			for _, row := range r.Rows {
				if ok(row) {
					n++
				}
			}
			if n != want {
				t.Errorf("%d of %d rows match, want %d", n, len(r.Rows), want)
			}
		}
	}
	tests := []struct {
		file    string
		rows    int
		failure string // "" means a complete table without error
		checks  []check
	}{
		{"text/ar2_cycles_N2.txt", 8, "", []check{
			rowsWhere(4, func(r Row) bool { return r.Cycle == 0 }),
			rowsWhere(4, func(r Row) bool { return r.Cycle == 1 }),
			func(t *testing.T, r *Result) {
				if r.Rows[4].Bytes != 524288 || r.Rows[4].Cycle != 1 || r.Rows[3].Cycle != 0 {
					t.Errorf("second sweep does not start at row 4: %+v", r.Rows[3:5])
				}
			},
		}},
		{"text/ar2_nocheck.txt", 3, "", []check{
			rowsWhere(3, func(r Row) bool { return r.Out.Wrong == nil && r.In != nil && r.In.Wrong == nil }),
			func(t *testing.T, r *Result) {
				if r.Invalid() != "" {
					t.Errorf("unchecked rows are not invalid: %s", r.Invalid())
				}
			},
		}},
		{"text/ar2_no_inplace.txt", 3, "", []check{
			rowsWhere(3, func(r Row) bool { return r.In == nil && r.Out.Wrong != nil && r.Out.TimeUS > 0 }),
		}},
		{"text/alltoall4_int8.txt", 4, "", []check{
			rowsWhere(4, func(r Row) bool {
				return r.Type == "int8" && r.Redop == "none" && r.Root == -1 && r.Out.Wrong != nil && r.In.Wrong == nil
			}),
			func(t *testing.T, r *Result) {
				if r.Collective != "alltoall" || r.NRanks != 4 {
					t.Errorf("%s with %d ranks", r.Collective, r.NRanks)
				}
			},
		}},
		{"text/broadcast2_bf16_root1.txt", 3, "", []check{
			rowsWhere(3, func(r Row) bool { return r.Type == "bfloat16" && r.Redop == "none" && r.Root == 1 }),
		}},
		{"text/reduce2_int32_all_ops.txt", 12, "", []check{
			rowsWhere(12, func(r Row) bool { return r.Type == "int32" && r.Root == 0 && r.Cycle == 0 }),
			func(t *testing.T, r *Result) {
				var ops []string
				for i := 0; i < len(r.Rows); i += 2 {
					ops = append(ops, r.Rows[i].Redop)
				}
				if want := []string{"sum", "prod", "max", "min", "avg", "mulsum"}; !reflect.DeepEqual(ops, want) {
					t.Errorf("redops %q, want %q", ops, want)
				}
			},
		}},
		{"text/ar2_all_types.txt", 24, "", []check{
			func(t *testing.T, r *Result) {
				var types []string
				for i := 0; i < len(r.Rows); i += 2 {
					types = append(types, r.Rows[i].Type)
				}
				want := []string{"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"}
				if !reflect.DeepEqual(types, want) {
					t.Errorf("types %q", types)
				}
			},
			rowsWhere(24, func(r Row) bool { return r.Cycle == 0 }),
		}},
		{"text/hypercube4.txt", 3, "", []check{
			rowsWhere(3, func(r Row) bool { return r.Redop == "" && r.Root == -1 && r.In != nil && r.In.TimeUS > 0 }),
		}},
		{"text/old_2_13_ar8.txt", 4, "", []check{
			func(t *testing.T, r *Result) {
				if r.NRanks != 8 || r.Devices[7].BusID != "0xbd" || r.Devices[7].Device != 7 || r.Devices[0].Name != "NVIDIA A100-SXM4-80GB" || r.TestsVersion != "" {
					t.Errorf("old device lines: %+v", r.Devices)
				}
			},
		}},
		{"text/sim_spark4.txt", 4, "", []check{
			func(t *testing.T, r *Result) {
				if !r.Simulated || r.SimProfile != "spark4" || r.NRanks != 4 {
					t.Errorf("simulated=%v profile=%q ranks=%d", r.Simulated, r.SimProfile, r.NRanks)
				}
			},
		}},
		{"text/ar4_ib_gdr_debug.txt", 3, "", []check{
			func(t *testing.T, r *Result) {
				// A WARN in a run that finished is kept, but is not a failure.
				if len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "local catastrophic error") ||
					len(r.Facts.Warnings) != 1 || r.Facts.Hosts[1] != "gpu-b" {
					t.Errorf("errors %q warnings %q hosts %q", r.Errors, r.Facts.Warnings, r.Facts.Hosts)
				}
			},
			rowsWhere(3, func(r Row) bool { return r.In != nil && r.In.BusBW > 13 }),
		}},
		{"json/ar2_nocheck_cycles_sim.json", 4, "", []check{
			rowsWhere(4, func(r Row) bool { return r.Out.Wrong == nil }),
			rowsWhere(2, func(r Row) bool { return r.Cycle == 1 }),
			func(t *testing.T, r *Result) {
				if !r.Simulated || r.SimProfile != "h200-loopback" || r.Rows[3].In.BusBW != 0 || len(r.Notes) != 1 {
					t.Errorf("simulated=%v %q, nan busbw read as %v, notes %q", r.Simulated, r.SimProfile, r.Rows[3].In.BusBW, r.Notes)
				}
			},
		}},
		{"json/version4_rows.json", 4, "", []check{
			func(t *testing.T, r *Result) {
				if !strings.Contains(strings.Join(r.Notes, "\n"), "version 4") {
					t.Errorf("notes %q do not mention the version", r.Notes)
				}
			},
		}},
		{"text/ar2_truncated.txt", 3, "ends after 3 rows without nccl-tests' footer", []check{
			func(t *testing.T, r *Result) {
				if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "4194304") {
					t.Errorf("notes %q do not name the cut row", r.Notes)
				}
			},
		}},
		{"json/ar2_truncated.json", 10, "ends after 10 rows", nil},
		{"text/ar2_midrun_failure.txt", 2, `NCCL reported "remote process exited or there was a network error"`, nil},
		{"text/ar2_mpi_docker0.txt", 0, "docker0", nil},
		{"text/ar2_mpich_hydra.txt", 0, "Hydra", nil},
		{"text/ar2_srun_error.txt", 1, "Slurm reported a failure: srun: error: fakehost1: task 1: Killed", nil},
		{"text/ar2_cuda_oom.txt", 0, `CUDA reported "out of memory"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readTestdata(t, tt.file)
			r, err := Parse(data)
			checkConsistent(t, data, r, err)
			if tt.failure == "" && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.failure != "" {
				var fe *FailureError
				if !errors.As(err, &fe) || !strings.Contains(fe.Message, tt.failure) {
					t.Fatalf("error %v, want a FailureError saying %q", err, tt.failure)
				}
				if r.Complete {
					t.Errorf("a failed run is marked complete")
				}
			}
			if len(r.Rows) != tt.rows {
				t.Fatalf("%d rows, want %d", len(r.Rows), tt.rows)
			}
			for _, c := range tt.checks {
				c(t, r)
			}
		})
	}
}

func TestParseNoTable(t *testing.T) {
	tests := []struct {
		name, input string
		result      bool // a partial result comes back
	}{
		{"empty", "", false},
		{"spaces", " \n\t\n", false},
		{"garbage", string(readTestdata(t, "text/garbage.txt")), false},
		{"header only", "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n# Collective test starting: all_reduce_perf\n", true},
		{"not an object", "[1, 2, 3]", false},
		{"json without results", `{"version": 3, "args": ["all_reduce_perf"]}`, true},
		{"json string", `"version"`, false},
		{"json broken", `{"version": 3, "results": [`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.input))
			checkConsistent(t, []byte(tt.input), r, err)
			if !errors.Is(err, ErrNoTable) {
				t.Fatalf("error %v does not wrap ErrNoTable", err)
			}
			if (r != nil) != tt.result {
				t.Errorf("result %+v, want one: %v", r, tt.result)
			}
		})
	}
}

func TestParseJSONPerIteration(t *testing.T) {
	r, err := ParseJSON(readTestdata(t, "fixtures/ar2_full_periter.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows {
		for _, m := range []*Measure{&row.Out, row.In} {
			if m.Iter == nil || len(m.Iter.TimesUS) != 20 {
				t.Fatalf("size %d: per-iteration samples %+v", row.Bytes, m.Iter)
			}
			for _, v := range m.Iter.TimesUS {
				if v < m.Iter.MinUS || v > m.Iter.MaxUS {
					t.Fatalf("size %d: sample %v outside [%v, %v]", row.Bytes, v, m.Iter.MinUS, m.Iter.MaxUS)
				}
			}
		}
	}
	first := r.Rows[0].Out.Iter
	if first.TimesUS[0] != 276.351988 || first.P99US != 276.351988 || first.CVPct != 155.590182 {
		t.Errorf("first row's samples %+v", first)
	}
	d := r.Devices[1]
	if d != (Device{Rank: 1, Host: "fakehost1", Device: 0, BusID: "0000:00:06", Name: "NVIDIA H200", Pid: 1256}) {
		t.Errorf("device %+v", d)
	}
	// The text output of the same run agrees with its JSON to the printed precision.
	txt, err := Parse(readTestdata(t, "fixtures/ar2_full_periter.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Rows {
		a, b := r.Rows[i], txt.Rows[i]
		if a.Bytes != b.Bytes || math.Abs(a.Out.TimeUS-b.Out.TimeUS) > 0.006*math.Max(1, a.Out.TimeUS/1000) ||
			math.Abs(a.Out.Iter.MaxUS-b.Out.Iter.MaxUS) > 0.006*math.Max(1, a.Out.Iter.MaxUS/1000) {
			t.Errorf("row %d: JSON %+v vs text %+v", i, a.Out, b.Out)
		}
	}
}

func TestNCCLVersionString(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{22803, "2.28.3"}, {23007, "2.30.7"}, {21805, "2.18.5"}, {2804, "2.8.4"}, {2708, "2.7.8"}, {0, ""}, {-1, ""},
	}
	for _, tt := range tests {
		if got := NCCLVersionString(tt.code); got != tt.want {
			t.Errorf("NCCLVersionString(%d) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestCollectiveFromProgram(t *testing.T) {
	for in, want := range map[string]string{
		" all_gather_perf":                  "all_gather",
		"./build/all_reduce_perf":           "all_reduce",
		"/opt/nccl-tests/sendrecv_perf_mpi": "sendrecv",
		"alltoall_perf":                     "alltoall",
		`C:\tests\gather_perf.exe`:          "gather",
		"mybench":                           "mybench",
	} {
		if got := collectiveFromProgram(in); got != want {
			t.Errorf("collectiveFromProgram(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSimulatedHeaderRoundTrip(t *testing.T) {
	for _, profile := range []string{"spark4", "flat", "/home/me/my fabric.json"} {
		out := "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n" + SimulatedHeader(profile) + "\n"
		r, _ := Parse([]byte(out))
		if r == nil || !r.Simulated || r.SimProfile != profile {
			t.Errorf("profile %q: got %+v", profile, r)
		}
	}
}

// TestRowsAcrossLines feeds a row whose columns are split by NCCL log
// lines in every way NCCL can split it.
func TestRowsAcrossLines(t *testing.T) {
	head := "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid   1208 on  fakehost0 device  0 [0000:00:06] NVIDIA H200\n" +
		"#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
	foot := "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 2.5 \n#\n# Collective test concluded: all_reduce_perf\n"
	log := "fakehost0:1208:1208 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
	want := Row{Bytes: 1048576, Count: 262144, Type: "float", Redop: "sum", Root: -1,
		Out: Measure{TimeUS: 394.76, AlgBW: 2.66, BusBW: 2.66, Wrong: wrong(0)},
		In:  &Measure{TimeUS: 405.04, AlgBW: 2.59, BusBW: 2.59, Wrong: wrong(0)}}
	tests := map[string]string{
		"whole":          "     1048576        262144     float     sum      -1   394.76    2.66    2.66       0   405.04    2.59    2.59       0\n",
		"nccl-tests way": "     1048576        262144     float     sum      -1" + log + log + "   394.76    2.66    2.66       0" + log + "   405.04    2.59    2.59       0\n",
		"mid-measure":    "     1048576        262144     float     sum      -1   394.76" + log + "    2.66    2.66       0   405.04    2.59    2.59       0\n",
		"after size":     "     1048576" + log + "        262144     float     sum      -1   394.76    2.66    2.66       0   405.04    2.59    2.59       0\n",
		"warn newline":   "     1048576        262144     float     sum      -1   394.76    2.66    2.66       0\n\n[2026-11-29 09:12:00] fakehost0:1208:1240 [0] enqueue.cc:1234 (ncclEnqueueCheck) NCCL WARN something odd\n   405.04    2.59    2.59       0\n",
		"host unknown":   "     1048576        262144     float     sum      -1otherhost:77:77 [0] NCCL INFO hello\n   394.76    2.66    2.66       0   405.04    2.59    2.59       0\n",
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			in := []byte(head + body + foot)
			r, err := Parse(in)
			checkConsistent(t, in, r, err)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Rows) != 1 || !reflect.DeepEqual(r.Rows[0], want) {
				t.Fatalf("rows %+v", r.Rows)
			}
			if len(r.Notes) != 0 {
				t.Errorf("notes %q", r.Notes)
			}
		})
	}
}

func TestSplitLogLine(t *testing.T) {
	tests := []struct {
		name, line string
		known      []string
		content    string
		kind       logKind
		host       string
		level      string
		msg        string
	}{
		{"plain INFO", "fakehost0:3121:3121 [0] NCCL INFO Using network Socket", nil, "", logNCCL, "fakehost0", "INFO", "Using network Socket"},
		{"glued to root", "      524288        131072     float     sum      -1fakehost0:1208:1208 [0] NCCL INFO AllReduce: x", []string{"fakehost0"},
			"      524288        131072     float     sum      -1", logNCCL, "fakehost0", "INFO", "AllReduce: x"},
		{"glued, host unknown", "   261.31    2.01    2.01       0gpu-a:5:5 [1] NCCL INFO x", nil, "   261.31    2.01    2.01       0", logNCCL, "gpu-a", "INFO", "x"},
		{"glued to N/A", "   261.31    2.01    2.01     N/Anode7:5:5 [0] NCCL INFO x", nil, "   261.31    2.01    2.01     N/A", logNCCL, "node7", "INFO", "x"},
		{"digit host known", "  1.50       01node:5:5 [0] NCCL INFO x", []string{"1node"}, "  1.50       0", logNCCL, "1node", "INFO", "x"},
		{"WARN with timestamp", "[2026-11-29 09:12:00] gpu-b:6201:6240 [0] transport/net_ib/init.cc:311 (ncclIbAsyncThreadMain) NCCL WARN NET/IB : bad", nil,
			"", logNCCL, "gpu-b", "WARN", "NET/IB : bad"},
		{"WARN old style", "node1:1:2 [3] misc/socket.cc:50 NCCL WARN Net : Connect to 10.0.0.2<4444> failed : No route to host", nil,
			"", logNCCL, "node1", "WARN", "Net : Connect to 10.0.0.2<4444> failed : No route to host"},
		{"TRACE", "node1:1:2 [0] 1234.567890 ncclGroupEnd:100 NCCL TRACE done", nil, "", logNCCL, "node1", "TRACE", "done"},
		{"CALL", "node1:1:2 NCCL CALL ncclAllReduce(...)", nil, "", logNCCL, "node1", "CALL", "ncclAllReduce(...)"},
		{"mpirun tag", "[1,0]<stdout>:node1:1:2 [0] NCCL INFO x", nil, "[1,0]<stdout>:", logNCCL, "node1", "INFO", "x"},
		// NCCL_DEBUG_TIMESTAMP_FORMAT is the user's strftime format, with no
		// space after it unless the format ends in one: the host starts
		// after the bracket, not at the seconds before it.
		{"timestamp glued to the host", "[2026-12-05 10:00:07.123]gpu-b:6201:6240 [0] NCCL INFO x", nil, "", logNCCL, "gpu-b", "INFO", "x"},
		{"failure glued", "     2097152        524288     float     sum      -1fakehost0: Test NCCL failure common.cu:1 'x / '", []string{"fakehost0"},
			"     2097152        524288     float     sum      -1", logFailure, "", "", "fakehost0: Test NCCL failure common.cu:1 'x / '"},
		{"failure alone", "fakehost0: Test NCCL failure common.cu:1 'x / '", nil, "fakehost0: Test NCCL failure common.cu:1 'x / '", logNone, "", "", ""},
		{"a row", "        8             2     float     sum      -1    34.59    0.00    0.00       0", nil,
			"        8             2     float     sum      -1    34.59    0.00    0.00       0", logNone, "", "", ""},
		{"NCCL word in text", "I like NCCL INFORMATION", nil, "I like NCCL INFORMATION", logNone, "", "", ""},
		{"no host field", "something NCCL INFO x", nil, "something NCCL INFO x", logNone, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, log, _ := splitLogLine(tt.line, tt.known)
			if content != tt.content || log.kind != tt.kind || log.host != tt.host || log.level != tt.level || log.msg != tt.msg {
				t.Errorf("got content %q kind %d host %q level %q msg %q", content, log.kind, log.host, log.level, log.msg)
			}
		})
	}
}

func TestParseFactsLines(t *testing.T) {
	if f := ParseFacts(readTestdata(t, "fixtures/ag3.txt")); f != nil {
		t.Errorf("output without NCCL log lines gave facts %+v", f)
	}
	log := strings.Join([]string{
		"NCCL version 2.30.7+cuda13.0", // NCCL_DEBUG=VERSION prints it bare
		"spark5:100:100 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:192.168.100.5<0>",
		"spark5:100:100 [0] NCCL INFO NET/Socket : Using [0]enp1s0f1np1:192.168.100.5<0>",
		"spark5:100:100 [0] NCCL INFO Using network IB",
		"spark5:100:100 [0] NCCL INFO comm 0xabc rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0",
		"spark5:100:100 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/IB/0",
		"spark5:100:100 [0] NCCL INFO Channel 00/64 : 0 1 2 3",
		"spark5:100:100 [0] NCCL INFO Channel 63/64 : 0 1 2 3",
		"spark5:100:100 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..63}",
		"spark5:100:100 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}",
		"spark5:100:100 [0] NCCL INFO AllGather: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..7}",
		"spark5:100:100 [0] NCCL INFO AllReduce: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={3..1}",
		"",
		"[2026-01-01 00:00:00] spark6:200:201 [0] init.cc:1 NCCL WARN Cuda failure 'out of memory'",
	}, "\n")
	f := ParseFacts([]byte(log))
	want := &Facts{
		NCCLVersion: "2.30.7", NRanks: 4, NNodes: 4, Transport: "IB", Network: "IB",
		Routes:     []Route{{Kind: KindNET, Network: "IB", Via: []string{"NET/IB/0"}, Ranks: []int{0, 3}, Pairs: 1, Connections: 1, GDR: new(false)}},
		Paths:      []Path{{From: 3, To: 0, Kind: KindNET, Via: []string{"NET/IB/0"}, Connections: 1}},
		RankPlaces: []RankPlace{{Rank: 0, Host: "spark5"}},
		NetRoutes:  []string{"00/0 3[0]-0[0] receive IB/0"},
		NICs:       []string{"rocep1s0f1:1/RoCE", "roceP2p1s0f1:1/RoCE"}, NICsPerHost: 2, GDR: new(false), Channels: 64,
		Choices: []Choice{
			{"AllReduce", 1048576, "RING", "LL128", 0, 63, 64},
			{"AllGather", 4 * 1048576, "RING", "SIMPLE", 0, 7, 8}, // one rank's 1M on 4 ranks: nccl-tests' 4M
		},
		Hosts:    []string{"spark5", "spark6"},
		Warnings: []string{"Cuda failure 'out of memory'"},
	}
	if !reflect.DeepEqual(f, want) {
		g, _ := json.Marshal(f)
		w, _ := json.Marshal(want)
		t.Errorf("facts\n got %s\nwant %s", g, w)
	}
}

func TestDiagnose(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		{[]string{"h: Test NCCL failure common.cu:1 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '"},
			`NCCL reported "unhandled system error" (run with NCCL_DEBUG=INFO for details): usually the network between ranks`},
		{[]string{"h: Test NCCL failure common.cu:1 'invalid usage (run with NCCL_DEBUG=WARN for details) / '", "NCCL WARN Error : no algorithm/protocol available"},
			`e.g. an NCCL_ALGO it cannot run; NCCL WARN Error : no algorithm/protocol available`},
		{[]string{"h: Test NCCL failure common.cu:1 'something new / '"}, `NCCL reported "something new"`},
		{[]string{"h: Test CUDA failure common.cu:1 'an illegal memory access was encountered'"}, `CUDA reported "an illegal memory access was encountered": check the GPUs`},
		{[]string{"h: Test timeout (10s) common.cu:523"}, "nccl-tests' own timeout (-T) fired"},
		{[]string{"NCCL WARN NET/Socket : no interface found"}, "NCCL warned: NET/Socket : no interface found"},
		{[]string{"There are not enough slots available in the system to satisfy the 4 slots"}, "not enough slots"},
		{[]string{"mpirun was unable to launch the specified application as it could not access or execute an executable"}, "could not be started on every host"},
		{[]string{"bash: line 1: all_reduce_perf: command not found"}, "could not be started on every host"},
		{[]string{"[mpiexec@h1] HYDU_sock_write (utils/sock/sock.c:256): write error (Bad file descriptor)"}, "Hydra"},
		{[]string{"something else entirely"}, "the run failed: something else entirely"},
	}
	for _, tt := range tests {
		if got := diagnose(tt.lines); !strings.Contains(got, tt.want) {
			t.Errorf("diagnose(%q)\n = %s\nwant it to contain %s", tt.lines, got, tt.want)
		}
	}
}
