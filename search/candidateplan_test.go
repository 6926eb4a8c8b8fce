package search

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// TestNoRefusalWhereTheCandidatesPlanIsTheDefaults: a call NCCL runs
// alike under the candidate and the defaults (its TUNING lines from the
// candidate's own debug launch) is equal there by rule, so it never
// refuses the candidate. On the real 4-rank loopback the one-CTA cap (×1.27
// a step in interleaved truth) was refused for the start-up 4-byte
// all-reduce, made once: NCCL runs it Tree/LL on one channel with the cap
// and without, but the candidate's debug launch came after the guard
// judged the calls, so the cap's plan was still "uncertain by rule" and
// the call, 55 µs of launch noise, could not be shown within 5 %.
func TestNoRefusalWhereTheCandidatesPlanIsTheDefaults(t *testing.T) {
	t.Parallel()
	f := timedFabric{name: "spark4 with a start-up call", profile: "spark4",
		calls: []string{"all_reduce:4:1", "all_reduce:524288:300", "all_reduce:1048576:300", "all_reduce:2097152:100"}}
	w := f.workload(t)
	prof := f.launcher(t, 0).prof
	alike := func(cfg nccl.Config) bool {
		a, errA := prof.ChooseOp(nccl.AllReduce, cfg, 4)
		b, errB := prof.ChooseOp(nccl.AllReduce, nccl.Config{}, 4)
		return errA == nil && errB == nil && a == b
	}
	for seed := int64(1); seed <= 4; seed++ {
		res := f.timedStudy(t, w, seed)
		var refused []nccl.Config
		for _, r := range res.Refused {
			if strings.Contains(r.Reason, "all_reduce:4:1") {
				refused = append(refused, r.Trial.Config)
			}
		}
		for _, p := range res.Parts {
			if p.Refused && p.Part.Band.Min == 4 && res.Winner != nil {
				refused = append(refused, res.Winner.Config)
			}
		}
		for _, cfg := range refused {
			if alike(cfg) {
				t.Errorf("seed %d: %s refused for the 4-byte call, which NCCL runs with it as with its defaults (%s)", seed, cfg, res.Reason)
			}
		}
		t.Logf("seed %d: %s (%s), %d refused", seed, res.Env(), res.Ending, len(res.Refused))
	}
}

// A candidate whose plan was read before its calls were judged
// (readCandidate) and then refused gives the explain reserve back: the
// candidate confirmed after it, when recommended, still has its own
// debug launch, which the tuner CSV reads. Without it the reserve stayed
// spent, the last confirmation could use the whole budget, and explain
// skipped the winner (review of 73529a8; seed 260 took that path).
func TestReadCandidateKeepsTheWinnersExplain(t *testing.T) {
	t.Parallel()
	f := timedFabric{name: "spark4 with a start-up call", profile: "spark4",
		calls: []string{"all_reduce:4:1", "all_reduce:524288:300", "all_reduce:1048576:300", "all_reduce:2097152:100"}}
	w := f.workload(t)
	afterRefusal := 0
	for seed := int64(255); seed <= 265; seed++ {
		res, rec := f.timedRun(t, w, seed)
		if !res.Recommend || res.Winner == nil || res.Winner == res.Baseline {
			continue
		}
		if len(res.Refused) > 0 {
			afterRefusal++
		}
		if rec.debugged[res.Winner] == 0 {
			t.Errorf("seed %d: recommended %s (after %d refusals) with no debug launch of its own: the tuner CSV has no choices for it", seed, res.Winner.Config, len(res.Refused))
		}
	}
	if afterRefusal == 0 {
		t.Error("no seed recommended after a refusal: the test no longer reaches the path")
	}
}
