package benchfmt

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

func TestParseTorch(t *testing.T) {
	type want struct {
		rows        int
		complete    bool
		failure     bool // *FailureError
		noTable     bool // ErrNoTable
		nranks      int
		ncclVersion string
		hosts       []string
		invalid     string   // substring of Result.Invalid()
		errSub      string   // substring of the error
		noteSub     string   // substring of one note
		wrong       []*int64 // per row, nil entries mean not checked
		samples     int      // samples in the first row
		time0       float64  // first row's time
		busbw0      float64
		transport   string // from NCCL log lines
	}
	i64 := func(v int64) *int64 { return &v }
	zero4 := []*int64{i64(0), i64(0), i64(0), i64(0)}
	tests := []struct {
		file string
		want want
	}{
		{"h200_loopback.jsonl", want{rows: 4, complete: true, nranks: 2, ncclVersion: "2.28.9",
			hosts: []string{"fakehost0", "fakehost1"}, wrong: zero4, samples: 8, time0: 237.309, busbw0: 2.2093}},
		{"seed_a1_tuned.jsonl", want{rows: 4, complete: true, wrong: zero4, time0: 76.3, busbw0: 10.307}},
		{"seed_ok_false.jsonl", want{rows: 2, complete: true, wrong: []*int64{i64(0), i64(1)},
			invalid: "1M (#wrong 1)", noteSub: `"ok": false without a count`, time0: 301.5, busbw0: 2.608}},
		{"seed_two_arms.jsonl", want{rows: 4, complete: true, noteSub: "several arms (A0-default, A1-tuned", time0: 410.2, busbw0: 1.917}},
		{"truncated.jsonl", want{rows: 2, failure: true, nranks: 2, ncclVersion: "2.28.9",
			errSub: `ends after 2 sizes without its closing {"done": true}`, samples: 8, time0: 237.309, busbw0: 2.2093}},
		{"meta_only.jsonl", want{failure: true, nranks: 2, ncclVersion: "2.28.9", errSub: "before the first size"}},
		{"wrong_2M.jsonl", want{rows: 4, complete: true, nranks: 2, ncclVersion: "2.28.9",
			wrong: []*int64{i64(0), i64(0), i64(524288), i64(0)}, invalid: "2M (#wrong 524288)", samples: 8}},
		{"nocheck.jsonl", want{rows: 4, complete: true, nranks: 2, ncclVersion: "2.28.9",
			wrong: []*int64{nil, nil, nil, nil}, samples: 8}},
		{"nccl_invalid_usage.txt", want{failure: true, nranks: 2, ncclVersion: "2.28.9",
			errSub: `NCCL reported "invalid usage" under torch.distributed`}},
		{"debug_mixed.txt", want{rows: 4, complete: true, nranks: 2, ncclVersion: "2.28.9",
			hosts: []string{"fakehost0", "fakehost1"}, wrong: zero4, samples: 8, transport: "Socket"}},
		{"dry_run.jsonl", want{noTable: true, nranks: 1, noteSub: "--dry-run plan"}},
		{"garbage.txt", want{noTable: true}},
		// Sizes past MaxRowBytes and times past MaxBandwidth are dropped as
		// every other parser drops them (were kept: 1 PiB, 1e-300 µs).
		{"bounds.jsonl", want{rows: 1, complete: true, nranks: 2, ncclVersion: "2.28.9", hosts: []string{"fakehost0", "fakehost1"},
			noteSub: "not plausible", samples: 2, time0: 237.309, busbw0: 2.2093}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readTestdata(t, filepath.Join("torch", tt.file))
			r, err := ParseTorch(data)
			checkConsistent(t, data, r, err)
			w := tt.want
			var fe *FailureError
			switch {
			case w.failure && !errors.As(err, &fe):
				t.Fatalf("want a *FailureError, got %v", err)
			case w.noTable && !errors.Is(err, ErrNoTable):
				t.Fatalf("want ErrNoTable, got %v", err)
			case !w.failure && !w.noTable && err != nil:
				t.Fatalf("unexpected error: %v", err)
			}
			if w.errSub != "" && (err == nil || !strings.Contains(err.Error(), w.errSub)) {
				t.Errorf("error %v, want it to say %q", err, w.errSub)
			}
			if r == nil {
				if w.rows > 0 || w.nranks > 0 || w.noteSub != "" {
					t.Fatal("nil result")
				}
				return
			}
			if r.Instrument != InstrumentTorch || r.Collective != "all_reduce" {
				t.Errorf("instrument %q collective %q", r.Instrument, r.Collective)
			}
			if len(r.Rows) != w.rows || r.Complete != w.complete || r.NRanks != w.nranks || r.NCCLVersion != w.ncclVersion {
				t.Errorf("rows %d complete %v nranks %d nccl %q; want %d %v %d %q",
					len(r.Rows), r.Complete, r.NRanks, r.NCCLVersion, w.rows, w.complete, w.nranks, w.ncclVersion)
			}
			if w.hosts != nil {
				var hosts []string
				for _, d := range r.Devices {
					hosts = append(hosts, d.Host)
					if d.Name != "NVIDIA H200" {
						t.Errorf("device %+v", d)
					}
				}
				if !reflect.DeepEqual(hosts, w.hosts) {
					t.Errorf("hosts %v, want %v", hosts, w.hosts)
				}
			}
			if got := r.Invalid(); (w.invalid == "") != (got == "") || !strings.Contains(got, w.invalid) {
				t.Errorf("Invalid() = %q, want %q", got, w.invalid)
			}
			if w.noteSub != "" && !strings.Contains(strings.Join(r.Notes, "\n"), w.noteSub) {
				t.Errorf("notes %q, want one saying %q", r.Notes, w.noteSub)
			}
			if w.wrong != nil {
				for i, row := range r.Rows {
					got, want := row.Out.Wrong, w.wrong[i]
					if (got == nil) != (want == nil) || (got != nil && *got != *want) {
						t.Errorf("row %d wrong %v, want %v", i, ptrText(got), ptrText(want))
					}
				}
			}
			if w.rows > 0 {
				r0 := r.Rows[0]
				if w.time0 != 0 && (r0.Out.TimeUS != w.time0 || r0.Out.BusBW != w.busbw0) {
					t.Errorf("first row time %v busbw %v, want %v %v", r0.Out.TimeUS, r0.Out.BusBW, w.time0, w.busbw0)
				}
				if r0.Bytes != 524288 || r0.Count != 131072 || r0.Type != "float" || r0.Redop != "sum" || r0.In != nil {
					t.Errorf("first row %+v", r0)
				}
				n := 0
				if r0.Out.Iter != nil {
					n = len(r0.Out.Iter.TimesUS)
					// The samples alone: nccl-tests' columns of them are
					// model.IterColumns' (cmd/nccltune's parse tests).
					if it := *r0.Out.Iter; it.MinUS != 0 || it.MaxUS != 0 || it.P99US != 0 || it.CVPct != 0 {
						t.Errorf("iteration stats %+v: the script printed samples, not their summary", it)
					}
				}
				if n != w.samples {
					t.Errorf("first row has %d samples, want %d", n, w.samples)
				}
			}
			gotTransport := ""
			if r.Facts != nil {
				gotTransport = r.Facts.Transport
			}
			if gotTransport != w.transport {
				t.Errorf("facts transport %q, want %q", gotTransport, w.transport)
			}
		})
	}
}

func ptrText(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// TestParseTorchDerived covers lines whose fields must be derived or
// dropped, and the cycles of a repeated sweep.
func TestParseTorchDerived(t *testing.T) {
	in := `{"instrument": "nccltune-torch", "version": 1, "world": 4}
{"bytes": 1048576, "samples_us": [100, 300, 200]}
{"bytes": 2097152, "time_us": 400, "samples_us": [400, -1]}
{"bytes": "x", "time_us": 1}
{"bytes": 4194304, "ok": "yes"}
{"bytes": 1048576, "time_us": 250, "algbw": 4.2, "busbw": 6.3, "ok": true}
{"done": true}
`
	r, err := ParseTorch([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 {
		t.Fatalf("rows %+v", r.Rows)
	}
	if want := (r.Rows[0].Out.BusBW + r.Rows[1].Out.BusBW + r.Rows[2].Out.BusBW) / 3; math.Abs(r.AvgBusBW-want) > 1e-12 {
		t.Errorf("avg busbw %v, want %v", r.AvgBusBW, want)
	}
	a, b, c := r.Rows[0], r.Rows[1], r.Rows[2]
	// time from the median of the samples; algbw and busbw from the time and 4 ranks.
	if a.Out.TimeUS != 200 || a.Out.AlgBW != 1048576/200.0/1e3 || a.Out.BusBW != a.Out.AlgBW*1.5 || a.Out.Wrong != nil {
		t.Errorf("derived row %+v", a.Out)
	}
	if b.Out.Iter != nil || b.Out.TimeUS != 400 {
		t.Errorf("a negative sample must drop the samples, keep the time: %+v", b.Out)
	}
	if c.Cycle != 1 || a.Cycle != 0 || c.Out.BusBW != 6.3 {
		t.Errorf("cycles %d %d, row %+v", a.Cycle, c.Cycle, c.Out)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"median of its samples", "dropped the samples of size 2097152", "skipped size 4194304", "wrong type"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

func TestParseDetectsTorch(t *testing.T) {
	for _, tt := range []struct {
		file  string
		torch bool
	}{
		{"torch/h200_loopback.jsonl", true},
		{"torch/seed_a1_tuned.jsonl", true},
		{"torch/debug_mixed.txt", true}, // metadata after NCCL log lines
		{"torch/truncated.jsonl", true},
		{"torch/real_torch_ar4_algo_tree_failed.txt", true}, // only {"error", "rank"} lines
		{"torch/garbage.txt", false},
		{"fixtures/ar2_full_periter.json", false},
		{"fixtures/ar2_full_periter.txt", false},
	} {
		r, _ := Parse(readTestdata(t, tt.file))
		got := r != nil && r.Instrument == InstrumentTorch
		if got != tt.torch {
			t.Errorf("%s: read as torch output %v, want %v", tt.file, got, tt.torch)
		}
	}
	// nccl-tests' JSON on one line is not a torch line.
	one := bytes.Join(bytes.Fields(readTestdata(t, "fixtures/ar2_full_periter.json")), []byte(" "))
	if looksLikeTorch(one) {
		t.Error("nccl-tests' JSON on one line was taken for torch output")
	}
	// Only the script's failure line, not any JSON that carries "error".
	for _, other := range []string{`{"error": "boom"}`, `{"error": "boom", "rank": 0, "code": 3}`} {
		if looksLikeTorch([]byte(other)) {
			t.Errorf("%s was taken for torch output", other)
		}
	}
}

// FuzzParseTorch feeds arbitrary output to ParseTorch (and through Parse's
// detection): it must never panic and must keep Parse's promises.
func FuzzParseTorch(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "torch", "*"))
	if err != nil || len(files) < 10 {
		f.Fatalf("torch test data: %d files, %v", len(files), err)
	}
	for _, in := range files {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"instrument": "nccltune-torch"}`, `{"done": true}`, `{"done": false}`, `{"error": null, "rank": -1}`,
		`{"bytes": 1e300, "time_us": 1}`, `{"bytes": 8, "time_us": "nan", "samples_us": ["inf", null]}`,
		`{"arm": 3, "bytes": 8, "time_us": 1, "algbw": -1, "busbw": "x", "wrong": -2, "ok": null, "ranks": 1e20}`,
		"{\"bytes\": 8, \"time_us\": 1}\n{\"bytes\": 4, \"time_us\": 1}\n{\"bytes\": 4, \"time_us\": 0}",
		`{"instrument": "x", "world": -3, "devices": [{"rank": "a"}], "hosts": [1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseTorch(data)
		checkConsistent(t, data, r, err)
		if r != nil && (r.NRanks < 0 || r.Instrument != InstrumentTorch) {
			t.Fatalf("nranks %d instrument %q", r.NRanks, r.Instrument)
		}
		r, err = Parse(data)
		checkConsistent(t, data, r, err)
	})
}

// TestParseTorchOps reads the torch instrument's output for every op
// against the real nccl-tests capture of the same op
// (testdata/ops/OP_4r.txt): the op is recorded, every row has nccl-tests'
// size, count, type, redop and root for that size, and busbw is algbw ×
// nccl-tests' factor for the op. Two outputs per op:
// testdata/torch/ops_OP_4r.jsonl (4 ranks, 512K–4M; made from the script's
// own arithmetic with the times of the real nccl-tests captures, so not a
// measurement) and real_ops_OP_4r.jsonl (the script on the real 4-rank
// loopback, torch 2.11 with NCCL 2.28.9, 1M–4M, 2026-12-02).
func TestParseTorchOps(t *testing.T) {
	for _, src := range []struct {
		prefix string
		rows   int
	}{{"ops_", 4}, {"real_ops_", 3}} {
		for _, op := range nccl.Ops {
			t.Run(src.prefix+string(op), func(t *testing.T) { checkTorchOp(t, src.prefix+string(op)+"_4r.jsonl", op, src.rows) })
		}
	}
}

func checkTorchOp(t *testing.T, file string, op nccl.Op, rows int) {
	t.Helper()
	data := readTestdata(t, filepath.Join("torch", file))
	r, err := Parse(data)
	checkConsistent(t, data, r, err)
	if err != nil || r.Op() != op || r.Instrument != InstrumentTorch || r.NRanks != 4 || len(r.Rows) != rows || r.Invalid() != "" {
		t.Fatalf("op %q, instrument %q, %d ranks, %d rows, invalid %q, %v", r.Op(), r.Instrument, r.NRanks, len(r.Rows), r.Invalid(), err)
	}
	nt, err := Parse(readTestdata(t, filepath.Join("ops", string(op)+"_4r.txt")))
	if err != nil || nt.Op() != op {
		t.Fatalf("nccl-tests capture: %v, op %q", err, nt.Op())
	}
	byBytes := map[int64]Row{}
	for _, row := range nt.Rows {
		byBytes[row.Bytes] = row
	}
	for _, row := range r.Rows {
		ref, ok := byBytes[row.Bytes]
		if !ok {
			t.Errorf("torch size %d is no size of nccl-tests' %s table", row.Bytes, op.Benchmark())
			continue
		}
		if row.Count != ref.Count || row.Type != ref.Type || row.Redop != ref.Redop || row.Root != ref.Root {
			t.Errorf("%d bytes: torch count %d %s %s root %d; nccl-tests %d %s %s root %d",
				row.Bytes, row.Count, row.Type, row.Redop, row.Root, ref.Count, ref.Type, ref.Redop, ref.Root)
		}
		m := row.Out
		if f := m.BusBW / m.AlgBW; math.Abs(f-op.BusFactor(4)) > 1e-3 {
			t.Errorf("%d bytes: busbw/algbw %.4f, want %s's %.4f", row.Bytes, f, op, op.BusFactor(4))
		}
		if want := float64(row.Bytes) / m.TimeUS / 1e3; math.Abs(m.AlgBW-want) > 1e-4 {
			t.Errorf("%d bytes: algbw %.4f, want size/time %.4f", row.Bytes, m.AlgBW, want)
		}
	}
	for _, z := range SizesOf(r) {
		if n := z.Nominal(); n&(n-1) != 0 {
			t.Errorf("size %d reads as %d, not the power of two asked for", z.Bytes, n)
		}
	}
}

// TestParseTorchOpLines: a line without count or bandwidths gets them from
// the op (reduce-scatter: count = size / 4 ranks / 4 bytes, busbw ×3/4),
// and output that names two collectives, or one nccltune does not know,
// is refused rather than read as one run.
func TestParseTorchOpLines(t *testing.T) {
	r, err := ParseTorch(readTestdata(t, filepath.Join("torch", "ops_derived.jsonl")))
	if err != nil || r.Op() != nccl.ReduceScatter || len(r.Rows) != 4 {
		t.Fatalf("derived: %v, op %q, %d rows", err, r.Op(), len(r.Rows))
	}
	for _, row := range r.Rows {
		if row.Count != row.Bytes/16 || row.Redop != "sum" || row.Root != -1 || math.Abs(row.Out.BusBW-0.75*row.Out.AlgBW) > 1e-9 || row.Out.AlgBW <= 0 {
			t.Errorf("derived row %+v", row)
		}
	}
	for file, want := range map[string]string{
		"ops_mixed.jsonl":   "the metadata line says all_gather, the line of size 1048576 says all_reduce",
		"ops_unknown.jsonl": `names collective "allgatherv", which nccltune does not know`,
	} {
		data := readTestdata(t, filepath.Join("torch", file))
		r, err := ParseTorch(data)
		checkConsistent(t, data, r, err)
		var fe *FailureError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want a failure saying %q", file, err, want)
		}
	}
	// Output from before --op names no collective: all-reduce, as it was.
	r, err = ParseTorch(readTestdata(t, filepath.Join("torch", "real_torch_ar2.jsonl")))
	if err != nil || r.Op() != nccl.AllReduce || r.Rows[0].Redop != "sum" {
		t.Fatalf("old output: %v, op %q", err, r.Op())
	}
}
