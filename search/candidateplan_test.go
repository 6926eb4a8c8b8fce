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
