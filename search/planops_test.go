package search

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/vocab"
)

// loopbackWorkload is the real 4-rank loopback's workload study of issue
// 26 (all-reduce 512K-4M, alltoall and broadcast 512K-8M, default guards,
// scoped lists), on its simulated profile.
func loopbackWorkload(seed int64) Options {
	o := DefaultOptions()
	o.Workload = nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 1},
		{Op: nccl.AllToAll, Band: nccl.Band{Min: 512 << 10, Max: 8 << 20}, Weight: 1},
		{Op: nccl.Broadcast, Band: nccl.Band{Min: 512 << 10, Max: 8 << 20}, Weight: 1},
	}
	o.Band = Hull(o.Workload)
	o.Guard = DefaultGuard(o.Band)
	o.GuardOps, o.ScopeLists = DefaultGuardOps(o.Workload), true
	o.Seed = seed
	o.Budget = o.DefaultBudget()
	return o
}

// runsLikeDefaults is the profile's truth: cfg takes NCCL's defaults'
// noiseless time at every size every op of the workload measures.
func runsLikeDefaults(t *testing.T, p *sim.Profile, o Options, cfg nccl.Config) bool {
	t.Helper()
	for _, op := range o.Parts().Ops() {
		for _, b := range planSizes(o.Parts().Sizes(op), o.Guard) {
			d, err1 := p.OpTimeUS(op, nccl.Config{}, b)
			c, err2 := p.OpTimeUS(op, cfg, b)
			if err1 != nil || err2 != nil || c != d {
				return false
			}
		}
	}
	return true
}

// A workload study of several collectives reads NCCL's plan per op and
// merges by it: on the simulated 4-rank loopback, where NCCL's defaults
// run Ring on 2 channels, no config that runs every op as the defaults do
// (NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=8, NCCL_ALGO=allreduce:Ring…) is
// launched to be measured, or confirmed; such proposals merge into the
// defaults, and the merge reason names the ops.
func TestWorkloadMergesByPlanPerOp(t *testing.T) {
	t.Parallel()
	prof := newSimLauncher(t, "h200-loopback", 0, 0).withRanks(t, 4).prof
	merged, defaultsReason := 0, false
	for seed := int64(1); seed <= 4; seed++ {
		o := loopbackWorkload(seed)
		l := newSimLauncher(t, "h200-loopback", 1, seed).withRanks(t, 4)
		res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !res.Plan.Read {
			t.Errorf("seed %d: NCCL's plan was not read: %s", seed, res.Plan.Note)
		}
		plans, guardPlans := 0, map[nccl.Op]int{}
		for _, req := range l.launches {
			if req.Phase == vocab.PhasePlan && len(req.Config) == 0 {
				if slices.Contains(o.GuardOps, req.Op) {
					guardPlans[req.Op]++
				} else {
					plans++
				}
			}
			switch req.Phase {
			case vocab.PhaseExplore, vocab.PhaseRefine, vocab.PhaseConfirm:
			default:
				continue
			}
			if len(req.Config.Canonical()) > 0 && runsLikeDefaults(t, prof, o, req.Config) {
				t.Errorf("seed %d: %s launch %d of %s, which runs every op as NCCL's defaults do", seed, req.Phase, req.Seq, req.Config)
			}
		}
		if plans != len(o.Parts().Ops()) {
			t.Errorf("seed %d: %d debug launches of NCCL's defaults, want one per op (%d)", seed, plans, len(o.Parts().Ops()))
		}
		// And one per guarded op NCCL's tuner plans (for the tuner CSV's
		// rows); none of sendrecv, which never reaches the tuner.
		for _, op := range o.GuardOps {
			want := 1
			if _, tuned := op.PerFunction(); !tuned {
				want = 0
			}
			if guardPlans[op] != want {
				t.Errorf("seed %d: %d plan launches of guarded %s, want %d", seed, guardPlans[op], op, want)
			}
		}
		if res.Winner != nil && len(res.Winner.Config) > 0 && runsLikeDefaults(t, prof, o, res.Winner.Config) {
			t.Errorf("seed %d: confirmed %s, which runs every op as NCCL's defaults do", seed, res.Winner.Config)
		}
		merged += res.Plan.MergedConfigs
		for _, m := range res.Plan.Merged {
			if strings.HasPrefix(m.Reason, "runs like NCCL's defaults for all_reduce, alltoall and broadcast") {
				defaultsReason = true
			}
		}
		t.Logf("seed %d: plan %+v; %s (%s); %d launches", seed, *res.Plan, res.Env(), res.Ending, res.Launches)
	}
	if merged == 0 || !defaultsReason {
		t.Errorf("%d configs merged over the seeds, reason naming the ops seen: %v; want merges into the defaults, by op", merged, defaultsReason)
	}
}

var workloadMerge = flag.Bool("workload-merge", false, "run the three-op workload table on the simulated 4-rank loopback (seeds 1-N, -quality-seeds)")

// TestWorkloadMergeTable: over seeds, what the three-op workload study of
// the simulated 4-rank loopback spends on configs that run every op as
// NCCL's defaults do (launched to be measured, or confirmed), and what it
// merges. docs/PERFORMANCE.md prints the table.
func TestWorkloadMergeTable(t *testing.T) {
	t.Parallel()
	if !*workloadMerge {
		t.Skip("pass -workload-merge to run the table")
	}
	prof := newSimLauncher(t, "h200-loopback", 0, 0).withRanks(t, 4).prof
	wasted, confirmed, merged, launches, debug := 0, 0, 0, 0, 0
	endings := map[string]int{}
	n := *qualitySeeds
	for seed := *qualityFirst; seed < *qualityFirst+int64(n); seed++ {
		o := loopbackWorkload(seed)
		l := newSimLauncher(t, "h200-loopback", 1, seed).withRanks(t, 4)
		res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, req := range l.launches {
			switch req.Phase {
			case vocab.PhaseExplore, vocab.PhaseRefine, vocab.PhaseConfirm:
				if len(req.Config.Canonical()) > 0 && runsLikeDefaults(t, prof, o, req.Config) {
					wasted++
				}
			case vocab.PhasePlan, vocab.PhaseExplain:
				debug++
			}
		}
		if res.Winner != nil && len(res.Winner.Config) > 0 && runsLikeDefaults(t, prof, o, res.Winner.Config) {
			confirmed++
		}
		merged += res.Plan.MergedConfigs
		launches += res.Launches
		endings[res.Ending]++
	}
	var ends []string
	for e, c := range endings {
		ends = append(ends, fmt.Sprintf("%s %d", e, c))
	}
	sort.Strings(ends)
	fmt.Printf("| seeds | default-equivalent confirmed | launches on default-equivalent configs | configs merged (mean) | debug launches (mean) | launches (mean) | endings |\n|---|---|---|---|---|---|---|\n")
	fmt.Printf("| %d | %d/%d | %d (%.1f per study) | %.1f | %.1f | %.1f | %s |\n", n, confirmed, n, wasted, float64(wasted)/float64(n),
		float64(merged)/float64(n), float64(debug)/float64(n), float64(launches)/float64(n), strings.Join(ends, ", "))
}

// A config's resolution in a study of several ops is the tuple of its
// per-op ones: it runs NCCL's defaults only when every op does, a knob is
// dropped only when every op drops it, and a list is conditional when it
// is for one op and a no-op for the others.
func TestCombinedResolution(t *testing.T) {
	t.Parallel()
	sizes := []int64{1 << 20, 4 << 20}
	w := nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 1 << 20, Max: 4 << 20}, Weight: 1},
		{Op: nccl.AllToAll, Band: nccl.Band{Min: 1 << 20, Max: 4 << 20}, Weight: 1},
		{Op: nccl.Broadcast, Band: nccl.Band{Min: 1 << 20, Max: 4 << 20}, Weight: 1},
	}
	p := newWorkloadPlanner(w, nil, false)
	ring := func(ch int) nccl.Plan {
		return nccl.Plan{1 << 20: {Algo: "RING", Proto: "SIMPLE", Channels: ch}, 4 << 20: {Algo: "RING", Proto: "SIMPLE", Channels: ch}}
	}
	p.ops[0].native = &nccl.Native{Collective: "AllReduce", Plan: ring(2), Channels: 2, NICs: 1}
	p.ops[1].native = &nccl.Native{Collective: "AlltoAll", SendRecv: true, Plan: nccl.SendRecvPlan(sizes, 2), Channels: 2, NICs: 1}
	p.ops[2].native = &nccl.Native{Collective: "Broadcast", Plan: ring(4), Channels: 4, NICs: 1}
	defaults := p.keyOf(nccl.Config{})
	for _, tc := range []struct {
		cfg          nccl.Config
		runsDefaults bool
		reduced      string
		conditional  []string
	}{
		{nccl.Config{"NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "8"}, true, "NCCL defaults", nil},
		{nccl.Config{"NCCL_ALGO": "allreduce:Ring;broadcast:Ring", "NCCL_CROSS_NIC": "0"}, true, "NCCL defaults", nil},
		// A cap of 2 is the all-reduce's and alltoall's channels, below broadcast's 4.
		{nccl.Config{"NCCL_MAX_NCHANNELS": "2"}, false, "NCCL_MAX_NCHANNELS=2", nil},
		{nccl.Config{"NCCL_ALGO": "allreduce:Tree"}, false, "NCCL_ALGO=allreduce:Tree", nil},
		{nccl.Config{"NCCL_ALGO": "allreduce:Ring", "NCCL_MAX_NCHANNELS": "1"}, false, "NCCL_ALGO=allreduce:Ring NCCL_MAX_NCHANNELS=1", []string{"NCCL_ALGO"}},
	} {
		r := p.resolve(tc.cfg)
		var cond []string
		for _, d := range r.Conditional {
			cond = append(cond, d.Knob)
		}
		if (r.Key == defaults) != tc.runsDefaults || r.Reduced.String() != tc.reduced || strings.Join(cond, " ") != strings.Join(tc.conditional, " ") {
			t.Errorf("%s: runs the defaults %v (want %v), reduced %q (want %q), conditional %v (want %v); key %s", tc.cfg,
				r.Key == defaults, tc.runsDefaults, r.Reduced, tc.reduced, cond, tc.conditional, r.Key)
		}
	}
	// The merge reason names the ops whose plans were the same.
	base := &Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}
	p.noteMerge(nccl.Config{"NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "8"}, base)
	if got := p.merged[nccl.Config{"NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "8"}.Key()]; len(got) == 0 || got[0] != "runs like NCCL's defaults for all_reduce, alltoall and broadcast" {
		t.Errorf("merge reasons %q", got)
	}
}
