package search

import (
	"context"
	"math"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// reconfirmOf is a reconfirmation of cand against NCCL's defaults on the
// simulated 4-rank loopback for the workload parts, guarding guardOps.
func reconfirmOf(t *testing.T, noise float64, seed int64, parts nccl.Workload, guardOps []nccl.Op, cand nccl.Config) (Reconfirmation, *simLauncher) {
	t.Helper()
	o := DefaultOptions()
	o.Workload, o.Band = parts, Hull(parts)
	if len(parts) == 1 {
		o.Workload, o.Op, o.Band = nil, parts[0].Op, parts[0].Band
	}
	o.Guard = DefaultGuard(o.Band)
	o.GuardOps, o.GuardLaunches = guardOps, DefaultGuardLaunches
	l := newSimLauncher(t, "h200-loopback", noise, seed).withRanks(t, 4)
	rec := newMemRecorder(t)
	base := &Trial{Number: 0, Config: nccl.Config{}, Role: vocab.RoleBaseline, State: vocab.TrialRunning}
	c := &Trial{Number: 1, Config: cand, Role: vocab.RoleCandidate, State: vocab.TrialRunning}
	for _, tr := range []*Trial{base, c} {
		if err := rec.SaveTrial(tr); err != nil {
			t.Fatal(err)
		}
	}
	return Reconfirmation{Options: o, Baseline: base, Candidate: c, Launches: 6, Launcher: l, Recorder: rec}, l
}

// A workload's reconfirmation measures every part's op in each round,
// compares each part, and decides over the study's objective: at noise 0
// the combined speedup is the parts' speedups weighed geometrically
// (exp Σ wᵢ log speedupᵢ), which a first-op-only comparison is not.
func TestReconfirmWorkload(t *testing.T) {
	t.Parallel()
	parts := nccl.Workload{{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 0.6},
		{Op: nccl.AllToAll, Band: nccl.Band{Min: 512 << 10, Max: 8 << 20}, Weight: 0.4}}
	r, l := reconfirmOf(t, 0, 1, parts, nil, nccl.Config{"NCCL_MAX_NCHANNELS": "1"})
	res, err := Reconfirm(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2*6*2; len(l.launches) != want || res.Launches != want {
		t.Fatalf("%d launches (result %d), want %d: a warm-up and 6 rounds of 2 ops per arm", len(l.launches), res.Launches, want)
	}
	ops := map[nccl.Op]int{}
	for _, req := range l.launches[1:] {
		ops[req.Op]++
		if req.Phase != vocab.PhaseConfirm {
			t.Errorf("launch %d in phase %s", req.Seq, req.Phase)
		}
	}
	if ops[nccl.AllReduce] != 12 || ops[nccl.AllToAll] != 12 {
		t.Errorf("confirmation launches per op %v, want 12 each", ops)
	}
	if res.Decision == nil || len(res.Parts) != 2 {
		t.Fatalf("decision %v, parts %+v", res.Decision, res.Parts)
	}
	logSum := 0.0
	for i, p := range res.Parts {
		logSum += parts.Weights()[i] * math.Log(p.Comparison.Speedup)
	}
	if got, want := res.Decision.Speedup, math.Exp(logSum); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("combined speedup %.6f, want the parts' weighted geometric combination %.6f (parts %.4f, %.4f)",
			got, want, res.Parts[0].Comparison.Speedup, res.Parts[1].Comparison.Speedup)
	}
	if s := res.Parts[0].Comparison.Speedup; !(s > 1.05) {
		t.Errorf("all_reduce part speedup %.3f: one channel is faster on the loopback", s)
	}
}

// A guarded op the candidate makes significantly slower by more than the
// minimum effect refuses it, as the search refuses (op-regression, naming
// the op); the guards are measured only for a candidate the comparison
// recommends, GuardLaunches per arm.
func TestReconfirmGuardRefuses(t *testing.T) {
	t.Parallel()
	parts := nccl.Workload{{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 1}}
	r, l := reconfirmOf(t, 1, 3, parts, []nccl.Op{nccl.Broadcast}, nccl.Config{"NCCL_MAX_NCHANNELS": "1"})
	res, err := Reconfirm(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision == nil || !res.Decision.Recommend {
		t.Fatalf("the all-reduce comparison does not recommend one channel: %+v", res.Decision)
	}
	guards := 0
	for _, req := range l.launches {
		if req.Phase == vocab.PhaseGuard {
			guards++
			if req.Op != nccl.Broadcast {
				t.Errorf("guard launch of %s", req.Op)
			}
		}
	}
	if guards != 2*DefaultGuardLaunches {
		t.Errorf("%d guard launches, want %d", guards, 2*DefaultGuardLaunches)
	}
	if res.Recommend || res.Ending != vocab.EndingOpRegression || len(res.OpGuards) != 1 || !res.OpGuards[0].Refused {
		t.Errorf("recommend %v, ending %s, guards %+v: want refused by broadcast", res.Recommend, res.Ending, res.OpGuards)
	}

	// A candidate the comparison does not recommend measures no guard.
	r, l = reconfirmOf(t, 1, 3, parts, []nccl.Op{nccl.Broadcast}, nccl.Config{"NCCL_MAX_CTAS": "64"})
	if res, err = Reconfirm(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if res.Decision.Recommend || len(l.launches) != 1+2*6 || res.OpGuards != nil {
		t.Errorf("not recommended (%s), yet %d launches and guards %+v", res.Ending, len(l.launches), res.OpGuards)
	}
}
