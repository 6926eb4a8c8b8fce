package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// TestCollectiveNamesItsBenchmark: --collective makes the simulator the
// op's *_perf, in the text and the -J output, so the parser reads the op.
func TestCollectiveNamesItsBenchmark(t *testing.T) {
	for _, op := range nccl.Ops {
		t.Run(string(op), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.json")
			r := runMain(t, nil, "--profile", "h200-loopback", "--collective", string(op), "-b", "1M", "-e", "2M", "-f", "2", "-n", "5", "-J", path)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			res, err := benchfmt.Parse([]byte(r.stdout))
			if err != nil || res.Op() != op {
				t.Fatalf("text: op %q (collective %q), %v; want %s", res.Op(), res.Collective, err, op)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			jr, err := benchfmt.ParseJSON(data)
			if err != nil || jr.Op() != op {
				t.Fatalf("JSON: op %q, %v; want %s", jr.Op(), err, op)
			}
		})
	}
	if r := runMain(t, nil, "--profile", "flat", "--collective", "gather"); r.code != 2 {
		t.Errorf("--collective gather: exit %d, want 2", r.code)
	}
}

// TestOpRowsAsNCCLTests: every op prints nccl-tests' size, count, redop
// and root columns and its busbw factor, and the parser reads them back
// (the factor from its rows, sizes from the size column).
func TestOpRowsAsNCCLTests(t *testing.T) {
	for _, tc := range []struct {
		op    nccl.Op
		ranks int
		size  int64 // asked for 512K
		count int64
		redop string
		root  int
	}{
		{nccl.AllReduce, 4, 524288, 131072, "sum", -1},
		{nccl.AllGather, 3, 524256, 43688, "none", -1}, // as the real ag3.txt
		{nccl.ReduceScatter, 3, 524256, 43688, "sum", -1},
		{nccl.AllToAll, 4, 524288, 32768, "none", -1},
		{nccl.SendRecv, 4, 524288, 131072, "sum", -1},
		{nccl.Broadcast, 4, 524288, 131072, "none", 0},
		{nccl.Reduce, 4, 524288, 131072, "sum", 0},
	} {
		t.Run(string(tc.op), func(t *testing.T) {
			r := runMain(t, nil, "--profile", "h200-loopback", "--ranks", fmt.Sprint(tc.ranks), "--collective", string(tc.op), "--noise", "0", "-b", "512K", "-e", "512K")
			res, err := benchfmt.Parse([]byte(r.stdout))
			if err != nil || r.code != 0 || len(res.Rows) != 1 {
				t.Fatalf("exit %d, %v: %s", r.code, err, r.stdout)
			}
			row := res.Rows[0]
			if row.Bytes != tc.size || row.Count != tc.count || row.Redop != tc.redop || row.Root != tc.root {
				t.Errorf("row %d %d %s %d, want %d %d %s %d", row.Bytes, row.Count, row.Redop, row.Root, tc.size, tc.count, tc.redop, tc.root)
			}
			if got, want := row.Out.BusBW/row.Out.AlgBW, tc.op.BusFactor(tc.ranks); math.Abs(got-want) > 0.02 {
				t.Errorf("busbw/algbw %.3f, want nccl-tests' %.3f", got, want)
			}
			if algbw := float64(row.Bytes) / (row.Out.TimeUS * 1e3); math.Abs(algbw-row.Out.AlgBW) > 0.01 {
				t.Errorf("algbw %.2f, want size/time %.2f", row.Out.AlgBW, algbw)
			}
			if z := benchfmt.SizesOf(res)[0]; z.Nominal() != 524288 {
				t.Errorf("nominal size %d, want the 512K asked for", z.Nominal())
			}
		})
	}
	// -r -1 runs one sweep per root.
	r := runMain(t, nil, "--profile", "h200-loopback", "--ranks", "4", "--collective", "broadcast", "--noise", "0", "-b", "1M", "-e", "1M", "-r", "-1")
	res, err := benchfmt.Parse([]byte(r.stdout))
	if err != nil || len(res.Rows) != 4 || res.Rows[3].Root != 3 {
		t.Errorf("broadcast -r -1: %d rows, %v", len(res.Rows), err)
	}
}

// TestLoopbackOpsCalibration: the 4-rank loopback reproduces what
// REFERENCE.md measured of one channel against NCCL's defaults per
// collective: faster for all-reduce and all-gather at 512K–4M, truly
// slower for alltoall at 8M and broadcast at 1M, about even for sendrecv;
// and the defaults' medians within 30 %.
func TestLoopbackOpsCalibration(t *testing.T) {
	p, err := mustProfile(t, "h200-loopback").WithRanks(4)
	if err != nil {
		t.Fatal(err)
	}
	one := env("NCCL_MAX_NCHANNELS=1")
	ratio := func(op nccl.Op, b int64) float64 {
		d, err1 := p.OpTimeUS(op, nccl.Config{}, b)
		o, err2 := p.OpTimeUS(op, one, b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		return d / o
	}
	for _, op := range []nccl.Op{nccl.AllReduce, nccl.AllGather} {
		for b := int64(512 << 10); b <= 4<<20; b *= 2 {
			if r := ratio(op, b); r < 1.05 {
				t.Errorf("%s %s: defaults/one channel %.2f, want > 1.05 (one channel faster)", op, nccl.FormatSize(b), r)
			}
		}
	}
	for _, c := range []struct {
		op nccl.Op
		b  int64
	}{{nccl.AllToAll, 8 << 20}, {nccl.Broadcast, 1 << 20}} {
		if r := ratio(c.op, c.b); r > 1/1.05 {
			t.Errorf("%s %s: defaults/one channel %.2f, want one channel > 5 %% slower", c.op, nccl.FormatSize(c.b), r)
		}
	}
	for b := int64(32 << 10); b <= 8<<20; b *= 2 {
		if r := ratio(nccl.SendRecv, b); math.Abs(r-1) > 0.06 {
			t.Errorf("sendrecv %s: %.2f, want within 6 %% of even", nccl.FormatSize(b), r)
		}
	}
	medians := map[nccl.Op][]float64{
		nccl.AllReduce: {237, 270, 373, 440, 652, 1021, 1606, 2687, 4705}, nccl.AllGather: {124, 203, 210, 260, 381, 567, 867, 1349, 2265},
		nccl.ReduceScatter: {116, 181, 196, 222, 342, 503, 817, 1295, 2214}, nccl.AllToAll: {81, 95, 111, 191, 290, 508, 974, 1578, 2827},
		nccl.SendRecv: {52, 82, 118, 207, 362, 585, 1146, 2071, 4557}, nccl.Broadcast: {42, 45, 68, 114, 226, 329, 799, 1516, 3350},
	}
	for op, want := range medians {
		for i, b := 0, int64(32<<10); b <= 8<<20; i, b = i+1, b*2 {
			got, _ := p.OpTimeUS(op, nccl.Config{}, b)
			if math.Abs(math.Log(got/want[i])) > math.Log(1.4) {
				t.Errorf("%s %s: %.0f µs, REFERENCE.md's median %.0f (want within ×1.4)", op, nccl.FormatSize(b), got, want[i])
			}
		}
	}
}

// TestOpAlgorithmLists: NCCL_ALGO/NCCL_PROTO reach the ops NCCL runs as
// collectives, with the per-function form scoped to its function; the
// send/recv ops take neither.
func TestOpAlgorithmLists(t *testing.T) {
	p := mustProfile(t, "h200-loopback")
	for _, tc := range []struct {
		op      nccl.Op
		cfg     nccl.Config
		refused bool
	}{
		{nccl.AllGather, env("NCCL_ALGO=Tree"), true}, // Tree runs all-reduce only
		{nccl.AllReduce, env("NCCL_ALGO=Tree"), false},
		{nccl.AllGather, env("NCCL_ALGO=allreduce:Tree"), false}, // scoped to all-reduce
		{nccl.AllGather, env("NCCL_PROTO=allgather:^LL,LL128,Simple"), true},
		{nccl.AllReduce, env("NCCL_PROTO=allgather:^LL,LL128,Simple"), false},
		{nccl.AllToAll, env("NCCL_ALGO=Tree"), false},
		{nccl.SendRecv, env("NCCL_PROTO=LL128"), false},
	} {
		_, err := p.OpTimeUS(tc.op, tc.cfg, 1<<20)
		if (err != nil) != tc.refused {
			t.Errorf("%s under %s: %v, want refused %v", tc.op, tc.cfg, err, tc.refused)
		}
	}
	c, _ := p.ChooseOp(nccl.AllGather, env("NCCL_PROTO=allgather:LL"), 1<<20)
	if c.Proto != protoLL {
		t.Errorf("allgather:LL chose %s", c.Proto)
	}
}
