package nccl

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestParseOp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Op
		err  bool
	}{
		{"all_reduce", AllReduce, false},
		{"all_gather_perf", AllGather, false},
		{"AllGather", AllGather, false},
		{"reducescatter", ReduceScatter, false},
		{"AlltoAll", AllToAll, false},
		{"sendrecv", SendRecv, false},
		{"broadcast", Broadcast, false},
		{"reduce", Reduce, false},
		{"all_reduse", "", true},
		{"", "", true},
	} {
		got, err := ParseOp(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseOp(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// The factors are nccl-tests' (src/*.cu GetBw): a wrong one would make every
// busbw of that op wrong.
func TestBusFactor(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		n    int
		want float64
	}{
		{AllReduce, 4, 1.5}, {AllReduce, 2, 1}, {AllGather, 4, 0.75}, {ReduceScatter, 8, 0.875},
		{AllToAll, 4, 0.75}, {SendRecv, 4, 1}, {Broadcast, 4, 1}, {Reduce, 4, 1}, {"", 4, 1.5},
		{AllReduce, 1, 0}, {AllGather, 1, 0}, {Broadcast, 1, 1},
	} {
		if got := tc.op.BusFactor(tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s.BusFactor(%d) = %g, want %g", tc.op, tc.n, got, tc.want)
		}
	}
}

// The rows are nccl-tests 2.19.6's (benchfmt/testdata/ops, 4 ranks) and
// the 3-rank rounding of AllGatherGetCollByteCount and its kin.
func TestRowShape(t *testing.T) {
	for _, tc := range []struct {
		op                 Op
		size, elt          int64
		n                  int
		wantBytes, wantCnt int64
	}{
		{AllReduce, 32768, 4, 4, 32768, 8192}, {AllGather, 32768, 4, 4, 32768, 2048},
		{ReduceScatter, 8 << 20, 4, 4, 8 << 20, 524288}, {AllToAll, 32768, 4, 4, 32768, 2048},
		{SendRecv, 32768, 4, 4, 32768, 8192}, {Broadcast, 32768, 4, 4, 32768, 8192}, {Reduce, 32768, 4, 4, 32768, 8192},
		{AllGather, 512 << 10, 4, 3, 524256, 43688}, {AllGather, 32, 4, 4, 0, 0}, {AllGather, 64, 4, 4, 64, 4},
		{AllToAll, 512 << 10, 8, 3, 524256, 21844}, {AllReduce, 1002, 4, 2, 1000, 250}, {"", 4096, 4, 4, 4096, 1024},
	} {
		b, c := tc.op.RowShape(tc.size, tc.elt, tc.n)
		if b != tc.wantBytes || c != tc.wantCnt {
			t.Errorf("%s.RowShape(%d, %d, %d) = %d, %d; want %d, %d", tc.op, tc.size, tc.elt, tc.n, b, c, tc.wantBytes, tc.wantCnt)
		}
	}
	// MinBytes is the smallest size RowShape gives a float count at.
	for _, o := range Ops {
		for _, n := range []int{1, 3, 4, 8} {
			m := o.MinBytes(n)
			if _, c := o.RowShape(m, 4, n); c == 0 {
				t.Errorf("%s.MinBytes(%d) = %d: no float count there", o, n, m)
			}
			if _, c := o.RowShape(m-1, 4, n); c != 0 {
				t.Errorf("%s.MinBytes(%d) = %d: %d bytes run already", o, n, m, m-1)
			}
		}
	}
	var splits, reduces, rooted []Op
	for _, o := range Ops {
		if o.Splits() {
			splits = append(splits, o)
		}
		if o.Reduces() {
			reduces = append(reduces, o)
		}
		if o.Rooted() {
			rooted = append(rooted, o)
		}
	}
	if fmt.Sprint(splits) != "[all_gather reduce_scatter alltoall]" || fmt.Sprint(reduces) != "[all_reduce reduce_scatter sendrecv reduce]" ||
		fmt.Sprint(rooted) != "[broadcast reduce]" {
		t.Errorf("splits %v, reduces %v, rooted %v", splits, reduces, rooted)
	}
}

func TestOpNames(t *testing.T) {
	if got := AllToAll.Benchmark(); got != "alltoall_perf" {
		t.Errorf("Benchmark = %q", got)
	}
	if f, ok := AllGather.PerFunction(); !ok || f != "allgather" {
		t.Errorf("PerFunction = %q, %v", f, ok)
	}
	if _, ok := SendRecv.PerFunction(); ok {
		t.Error("sendrecv has no per-function name in NCCL")
	}
	for _, o := range Ops {
		back, ok := OpFromFunction(o.Function())
		if !ok || back != o {
			t.Errorf("OpFromFunction(%q) = %q, %v", o.Function(), back, ok)
		}
	}
}

func TestParsePartAndWorkload(t *testing.T) {
	p, err := ParsePart("all_gather:1M-8M:0.2")
	if err != nil || p.Op != AllGather || p.Band.Min != 1<<20 || p.Band.Max != 8<<20 || p.Weight != 0.2 {
		t.Fatalf("ParsePart = %+v, %v", p, err)
	}
	if back, err := ParsePart(p.String()); err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("round trip %q = %+v, %v", p.String(), back, err)
	}
	q, err := ParsePart("all_reduce:512K-4M")
	if err != nil || q.Weight != 1 {
		t.Fatalf("default weight: %+v, %v", q, err)
	}
	for _, bad := range []string{"all_reduce", "x:1M-2M", "all_reduce:1M-2M:0", "all_reduce:1M-2M:-1", "all_reduce:1M-2M:a", "a:b:c:d"} {
		if _, err := ParsePart(bad); err == nil {
			t.Errorf("ParsePart(%q) accepted", bad)
		}
	}
	w := Workload{q, p}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	if ws := w.Weights(); math.Abs(ws[0]-1/1.2) > 1e-12 || math.Abs(ws[1]-0.2/1.2) > 1e-12 {
		t.Errorf("Weights = %v", ws)
	}
	if ops := w.Ops(); len(ops) != 2 || ops[0] != AllReduce || ops[1] != AllGather {
		t.Errorf("Ops = %v", ops)
	}
	if others := w.OtherOps(); len(others) != len(Ops)-2 || slices.Contains(others, AllReduce) || slices.Contains(others, AllGather) {
		t.Errorf("OtherOps = %v", others)
	}
	overlap := Workload{q, {Op: AllReduce, Band: Band{Min: 4 << 20, Max: 8 << 20}, Weight: 1}}
	if overlap.Validate() == nil {
		t.Error("overlapping parts of one op accepted")
	}
	two := Workload{q, {Op: AllReduce, Band: Band{Min: 8 << 20, Max: 16 << 20}, Weight: 1}}
	if got := two.Sizes(AllReduce); len(got) != 4+2 {
		t.Errorf("Sizes = %v", got)
	}
}

func TestJoinOps(t *testing.T) {
	for _, tc := range []struct {
		ops  []Op
		want string
	}{
		{nil, ""},
		{[]Op{Broadcast}, "broadcast"},
		{[]Op{AllGather, Broadcast}, "all_gather, broadcast"},
	} {
		if got := JoinOps(tc.ops); got != tc.want {
			t.Errorf("JoinOps(%v) = %q, want %q", tc.ops, got, tc.want)
		}
	}
}

// SmallestSafe never asks a split op for a size below its real smallest
// on ranks nobody counted; with the ranks known it is MinBytes.
func TestSmallestSafe(t *testing.T) {
	for _, tc := range []struct {
		op   Op
		n    int
		want int64
	}{
		{AllReduce, 0, 4},
		{Broadcast, 0, 4},
		{AllGather, 0, UnknownRanksFloor},
		{AllToAll, 0, UnknownRanksFloor},
		{AllGather, 4, AllGather.MinBytes(4)},
		{ReduceScatter, 2048, ReduceScatter.MinBytes(2048)},
	} {
		if got := tc.op.SmallestSafe(tc.n); got != tc.want {
			t.Errorf("%s.SmallestSafe(%d) = %d, want %d", tc.op, tc.n, got, tc.want)
		}
	}
	if AllGather.MinBytes(2048) > UnknownRanksFloor {
		t.Errorf("UnknownRanksFloor %d is below all_gather's smallest size on 2048 ranks (%d)", UnknownRanksFloor, AllGather.MinBytes(2048))
	}
}
