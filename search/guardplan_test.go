package search

import (
	"context"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// A band study that guards ops reads NCCL's defaults' plan of each guarded
// op NCCL's tuner plans: one debug launch of the defaults per op, in the
// plan phase beside the studied op's and before the first measured launch,
// over the same wide range (from the op's own smallest size), counted in the budget (the default budget
// grows by one launch per such op). alltoall never reaches the tuner: no
// launch. Its choices are what the tuner CSV keeps for the guarded ops'
// calls, which otherwise run on the example plugin's one channel.
func TestGuardedOpsPlanRead(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	o.Band = nccl.Band{Min: 64 << 10, Max: 512 << 10}
	o.Guard = DefaultGuard(o.Band)
	o.Seed = 1
	o.GuardOps = []nccl.Op{nccl.AllGather, nccl.Broadcast, nccl.AllToAll}
	o.Ranks = 4
	withoutPlans := DefaultBudgetLaunches + o.guardReserve()
	o.Budget = o.DefaultBudget()
	if o.Budget != withoutPlans+2 {
		t.Errorf("default budget %d, want %d: the guards' reserve and one plan launch per tuned guarded op", o.Budget, withoutPlans+2)
	}
	if o.MinBudget() != (Options{ConfirmLaunches: o.ConfirmLaunches}).MinBudget()+o.guardReserve()+2 {
		t.Errorf("minimum budget %d does not count the guarded ops' plan launches", o.MinBudget())
	}
	l := newSimLauncher(t, "h200-loopback", 1, o.Seed).withRanks(t, 4)
	res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var studied *Request
	plans := map[nccl.Op][]Request{}
	firstMeasured := -1
	for i, req := range l.launches {
		switch {
		case req.Phase == vocab.PhasePlan && len(req.Config.Canonical()) == 0 && req.Op == "":
			if studied == nil {
				studied = &l.launches[i]
			}
		case req.Phase == vocab.PhasePlan && len(req.Config.Canonical()) == 0:
			plans[req.Op] = append(plans[req.Op], req)
		case req.Phase == vocab.PhaseExplore && firstMeasured < 0:
			firstMeasured = req.Seq
		}
	}
	if studied == nil {
		t.Fatal("no plan launch of NCCL's defaults for the studied op")
	}
	for _, op := range []nccl.Op{nccl.AllGather, nccl.Broadcast} {
		ps := plans[op]
		if len(ps) != 1 {
			t.Errorf("%d plan launches of NCCL's defaults for guarded %s, want 1", len(ps), op)
			continue
		}
		// The studied op's wide range, from the smallest size nccl-tests
		// runs of the op on 4 ranks: 4 bytes, or 64 for an all-gather
		// (one 16-byte share per rank).
		p, lo := ps[0], int64(4)
		if op == nccl.AllGather {
			lo = 64
		}
		if !p.Debug || p.MinBytes != lo || p.MaxBytes != studied.MaxBytes || studied.MinBytes != 4 {
			t.Errorf("%s's plan launch: debug %v, %d-%d; want a debug launch over %d-%d (the studied op's: %d-%d)", op, p.Debug, p.MinBytes, p.MaxBytes, lo, studied.MaxBytes, studied.MinBytes, studied.MaxBytes)
		}
		if firstMeasured >= 0 && p.Seq > firstMeasured {
			t.Errorf("%s's plan launch is launch %d, after the first measured launch %d: want it in the plan phase", op, p.Seq, firstMeasured)
		}
	}
	if n := len(plans[nccl.AllToAll]); n != 0 {
		t.Errorf("%d plan launches of alltoall, which never reaches NCCL's tuner", n)
	}
	if res.Launches != len(l.launches) || res.Launches > o.Budget {
		t.Errorf("%d launches made, %d counted, budget %d", len(l.launches), res.Launches, o.Budget)
	}
	if !res.Plan.Read {
		t.Errorf("NCCL's plan was not read: %s", res.Plan.Note)
	}
}

// A guarded op's plan launch that fails is the guard's business, not the
// trial's: the baseline goes on, and the study decides.
func TestGuardedOpPlanFailureKeepsBaseline(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	o.Band = nccl.Band{Min: 64 << 10, Max: 512 << 10}
	o.Guard = DefaultGuard(o.Band)
	o.Seed = 1
	o.GuardOps = []nccl.Op{nccl.Broadcast}
	o.Budget = o.DefaultBudget()
	l := &failOpLauncher{simLauncher: newSimLauncher(t, "h200-loopback", 1, o.Seed).withRanks(t, 4), op: nccl.Broadcast, phase: vocab.PhasePlan}
	res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
	if err != nil {
		t.Fatalf("the study failed for a guarded op's failed plan launch: %v", err)
	}
	if l.failed == 0 {
		t.Fatal("no plan launch of broadcast failed: the test checks nothing")
	}
	if !res.Baseline.State.Usable() || res.Decision == nil {
		t.Errorf("baseline %s (%s), decision %v", res.Baseline.State, res.Baseline.Reason, res.Decision)
	}
}

// failOpLauncher fails every launch of op in phase, as a benchmark that
// dies before its first size does.
type failOpLauncher struct {
	*simLauncher
	op     nccl.Op
	phase  string
	failed int
}

func (f *failOpLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	if req.Op.OrAllReduce() == f.op && req.Phase == f.phase {
		f.failed++
		f.launches = append(f.launches, req)
		return &benchfmt.Launch{Op: req.Op, Outcome: benchfmt.Failed, Reason: "exit 1", Simulated: true}, nil
	}
	return f.simLauncher.Launch(ctx, req)
}

// Without the ranks (Ranks 0: mpirun with a hostfile, no --np), the wide
// range of an op that splits its buffer keeps the 32K floor: its smallest
// size grows with ranks the study cannot count, and below it nccl-tests
// prints rows of 0 bytes on many ranks. An op that does not split starts
// at its one element whatever the ranks; with the ranks known, a split
// op starts at one 16-byte share per rank.
func TestExplainRangeWithoutRanks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op    nccl.Op
		ranks int
		lo    int64
	}{
		{nccl.AllGather, 0, 32 << 10},
		{nccl.ReduceScatter, 0, 32 << 10},
		{nccl.AllToAll, 0, 32 << 10},
		{nccl.AllGather, -1, 32 << 10},
		{"", 0, 4},
		{nccl.AllReduce, 0, 4},
		{nccl.Broadcast, 0, 4},
		{nccl.AllGather, 4, 64},
		{nccl.ReduceScatter, 16, 256},
	} {
		o := DefaultOptions()
		o.Ranks = tc.ranks
		if lo, hi := o.explainRange(tc.op); lo != tc.lo || hi != explainMax {
			t.Errorf("%s on %d ranks: wide range %d-%d, want %d-%d", tc.op, tc.ranks, lo, hi, tc.lo, explainMax)
		}
	}

	// A study's own launches: the guarded all-gather's plan launch from
	// 32K, the studied all-reduce's from 4 bytes.
	o := DefaultOptions()
	o.Band = nccl.Band{Min: 64 << 10, Max: 512 << 10}
	o.Guard = DefaultGuard(o.Band)
	o.Seed = 1
	o.GuardOps = []nccl.Op{nccl.AllGather}
	o.Budget = o.DefaultBudget()
	l := newSimLauncher(t, "h200-loopback", 1, o.Seed)
	if _, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[nccl.Op]int64{}
	for _, req := range l.launches {
		if req.Phase == vocab.PhasePlan && len(req.Config.Canonical()) == 0 {
			seen[req.Op.OrAllReduce()] = req.MinBytes
		}
	}
	if lo, ok := seen[nccl.AllGather]; !ok || lo != 32<<10 {
		t.Errorf("guarded all_gather's plan launch from %d (made: %v), want from 32K", lo, ok)
	}
	if lo, ok := seen[nccl.AllReduce]; !ok || lo != 4 {
		t.Errorf("studied all_reduce's plan launch from %d (made: %v), want from 4", lo, ok)
	}
}
