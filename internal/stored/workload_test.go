package stored

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

func TestLaunchesByOp(t *testing.T) {
	ls := []*store.Launch{
		{Phase: vocab.PhaseWarmup}, // stored before ops were recorded: all-reduce
		{Op: nccl.AllReduce, Phase: vocab.PhaseExplore},
		{Op: nccl.Broadcast, Phase: vocab.PhaseGuard},
		{Op: nccl.AllGather, Phase: vocab.PhaseExplore},
		{Op: nccl.Broadcast, Phase: vocab.PhaseGuard},
	}
	study := &store.Study{Workload: []store.Part{
		{Op: nccl.AllReduce, Band: "32K-64K", BandMin: 32 << 10, BandMax: 64 << 10, Weight: 1},
		{Op: nccl.AllGather, Band: "1M", BandMin: 1 << 20, BandMax: 1 << 20, Weight: 1},
		{Op: nccl.AllReduce, Band: "1M-2M", BandMin: 1 << 20, BandMax: 2 << 20, Weight: 2}},
		GuardOps: []nccl.Op{nccl.Broadcast}}
	got := LaunchesByOp(study, ls)
	want := []OpLaunches{
		{Op: nccl.AllReduce, Role: RolePart, Bands: []string{"32K-64K", "1M-2M"}, Launches: 2, Phases: map[string]int{vocab.PhaseWarmup: 1, vocab.PhaseExplore: 1}},
		{Op: nccl.AllGather, Role: RolePart, Bands: []string{"1M"}, Launches: 1, Phases: map[string]int{vocab.PhaseExplore: 1}},
		{Op: nccl.Broadcast, Role: RoleGuard, Launches: 2, Phases: map[string]int{vocab.PhaseGuard: 2}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Op != want[i].Op || got[i].Role != want[i].Role || strings.Join(got[i].Bands, " ") != strings.Join(want[i].Bands, " ") ||
			got[i].Launches != want[i].Launches || len(got[i].Phases) != len(want[i].Phases) {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
		for p, n := range want[i].Phases {
			if got[i].Phases[p] != n {
				t.Errorf("%s %s: %d, want %d", want[i].Op, p, got[i].Phases[p], n)
			}
		}
	}
	if spend := SpendOf(got); spend != (LaunchSpend{Parts: 3, Guards: 2}) {
		t.Errorf("spend %+v, want 3 on parts and 2 on guards", spend)
	}
	if LaunchesByOp(study, nil) == nil {
		t.Error("no launches: want an empty list (JSON []), not nil")
	}
	// An op the study neither tuned nor guarded (an old study's stray
	// launch) is counted apart.
	if got := LaunchesByOp(&store.Study{Collective: "all_gather"}, ls[:1]); got[0].Role != RoleOther || SpendOf(got).Other != 1 {
		t.Errorf("a launch of an op outside the study: %+v", got)
	}
}

func TestOpVerdicts(t *testing.T) {
	rec := &store.Recommendation{
		Parts: []store.PartComparison{
			{Op: nccl.AllReduce, Band: "512K-4M", Speedup: 1.2, SpeedupCI: [2]float64{1.1, 1.3}, Significant: true,
				PerSize: []store.SizeComparison{{Bytes: 1 << 20, Speedup: 1.3}, {Bytes: 4 << 20, Speedup: 1.05}}},
			{Op: nccl.AllToAll, Band: "512K-8M", Speedup: 0.9, SpeedupCI: [2]float64{0.85, 0.95}, Significant: true, Slower: true, Refused: true},
			{Op: nccl.AllReduce, Band: "8K", Speedup: 1.02, SpeedupCI: [2]float64{0.95, 1.09}, Refused: true, NotShownSafe: true},
			{Op: nccl.Broadcast, Band: "1M", Speedup: 0.98, SpeedupCI: [2]float64{0.9, 1.07}, NotShownSafe: true},
			// Refused at the size it calls, off the 2M its interval is of
			// (the real loopback's all-gathers): the words name that size,
			// not the interval's bound.
			{Op: nccl.AllGather, Band: "2M", Speedup: 1.25, SpeedupCI: [2]float64{1.08, 1.8}, Significant: true, Refused: true, NotShownSafe: true, RefusedAt: 2048000},
			{Op: nccl.AllGather, Band: "8M", Speedup: 1.25, SpeedupCI: [2]float64{1.08, 1.8}, Significant: true, Refused: true, RefusedAt: 9701523},
		},
		OpGuards: []store.OpGuard{
			{Op: nccl.Broadcast, Sizes: []int64{512 << 10, 1 << 20, 2 << 20}, Speedup: 0.97, SpeedupCI: [2]store.JSONFloat{0.9, 1.05}, WorstBytes: 1 << 20, WorstSpeedup: 0.8,
				Slower: true, Refused: true, PerSize: []store.GuardSize{{Bytes: 1 << 20, Speedup: 0.8, Significant: true, Slower: true}}},
			{Op: nccl.AllGather, Sizes: []int64{1 << 20, 8 << 20}, Speedup: 1.0, SpeedupCI: [2]store.JSONFloat{0.98, 1.02}, WorstBytes: 8 << 20, WorstSpeedup: 0.99,
				PerSize: []store.GuardSize{{Bytes: 8 << 20, Speedup: 0.99, Significant: true}}},
			{Op: nccl.Reduce, Failed: "the candidate failed", Refused: true},
			{Op: nccl.SendRecv, Speedup: 1.01, SpeedupCI: [2]store.JSONFloat{0.99, 1.03}},
		},
	}
	want := []struct{ op, kind, sizes, change, worst, verdict string }{
		{"all_reduce", "part", "512K-4M", "-16.7% [-23.1, -9.1]", "4M -4.8%", "significantly faster"},
		{"alltoall", "part", "512K-8M", "+11.1% [+5.3, +17.6]", "", "REFUSED the recommendation: slower by more than the minimum effect"},
		{"all_reduce", "part", "8K", "-2.0% [-8.3, +5.3]", "", "REFUSED the recommendation: not shown safe (its upper bound is over the margin)"},
		// Another call not shown safe beside the one that refused.
		{"broadcast", "part", "1M", "+2.0% [-6.5, +11.1]", "", "not shown safe either (its upper bound is over the margin)"},
		{"all_gather", "part", "2M", "-20.0% [-44.4, -7.4]", "", "REFUSED the recommendation: not shown safe at 2048000 bytes, the size it calls"},
		{"all_gather", "part", "8M", "-20.0% [-44.4, -7.4]", "", "REFUSED the recommendation: slower at 9701523 bytes, the size it calls"},
		{"broadcast", "guard", "512K-2M", "+3.1% [-4.8, +11.1]", "1M +25.0%", "REFUSED the recommendation: significantly slower at 1M"},
		{"all_gather", "guard", "1M, 8M", "+0.0% [-2.0, +2.0]", "8M +1.0%", "significantly slower somewhere, below the minimum effect"},
		{"reduce", "guard", "no sizes", "—", "", "the candidate failed: REFUSED the recommendation"},
		{"sendrecv", "guard", "no sizes", "-1.0% [-2.9, +1.0]", "", "not significantly slower"},
	}
	got := OpVerdicts(rec)
	if len(got) != len(want) {
		t.Fatalf("%d verdicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if string(g.Op) != w.op || g.Kind != w.kind || g.Sizes != w.sizes || g.Change != w.change || g.Worst != w.worst || g.Verdict != w.verdict {
			t.Errorf("row %d: %+v\nwant %+v", i, g, w)
		}
	}
	lines := OpVerdictLines(rec)
	if len(lines) != len(want) || !strings.HasPrefix(lines[6], "broadcast (guard) 512K-2M: +3.1%") {
		t.Errorf("lines %q", lines)
	}
	if OpVerdicts(&store.Recommendation{}) != nil {
		t.Error("a one-op study without guards has no per-op verdicts")
	}
}

// TestTimedPartsNamedByCalls: a timed part is named by its calls as the
// user gave them (merged calls on one power of two: each size), in the
// per-collective lines and in what refused the candidate; a band part,
// and a timed part stored before its calls were kept, by its band.
func TestTimedPartsNamedByCalls(t *testing.T) {
	rec := &store.Recommendation{Parts: []store.PartComparison{
		{Op: nccl.AllReduce, Band: "8K", Calls: 240, Logged: []int64{10240}, LoggedCalls: []float64{240}, Speedup: 1.2, Refused: true, NotShownSafe: true},
		{Op: nccl.AllReduce, Band: "64K", Calls: 30, Logged: []int64{70000, 81920}, LoggedCalls: []float64{10, 20}, Speedup: 1.1},
		{Op: nccl.AllGather, Band: "1M", Calls: 13, Speedup: 1.1},
		{Op: nccl.Broadcast, Band: "512K-4M", Speedup: 1},
	}}
	lines := OpVerdictLines(rec)
	for i, want := range []string{"all_reduce (part) 10240×240: ", "all_reduce (part) 70000×10, 81920×20: ", "all_gather (part) 1M: ", "broadcast (part) 512K-4M: "} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: %q, want it to start %q", i, lines, want)
		}
	}
	if what, _ := rec.RefusedBy(); what != "its call all_reduce 10240×240" {
		t.Errorf("RefusedBy = %q, want its call all_reduce 10240×240", what)
	}
	// Refused at one of a part's calls, at its own size: that call is
	// named, and how (shown slower there, or not shown safe).
	for _, c := range []struct {
		notShown bool
		how      string
	}{{true, store.RefusedNotShownSafe}, {false, store.RefusedSlower}} {
		rec.Parts[0] = store.PartComparison{Op: nccl.AllReduce, Band: "64K", Calls: 30, Logged: []int64{70000, 81920}, LoggedCalls: []float64{10, 20},
			Speedup: 1.1, Refused: true, NotShownSafe: c.notShown, RefusedAt: 70000}
		if what, how := rec.RefusedBy(); what != "its call all_reduce of 70000 bytes" || how != c.how {
			t.Errorf("RefusedBy = %q, %q; want its call all_reduce of 70000 bytes, %q", what, how, c.how)
		}
	}
}
