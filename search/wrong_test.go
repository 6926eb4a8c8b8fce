package search

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestNoLaunchAfterWrongResults: on spark4, forcing LL128 gives wrong
// results from 1M up (the profile's fault, as the seed reports say). Once
// one config that forces it did, no later config that allows LL128 by
// name is launched (a red team saw two more launched), while ^LL128 and
// the other protocols still are.
func TestNoLaunchAfterWrongResults(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		o := spark4Options(seed)
		o.Sampler = "grid"
		o.Space = Space{
			{Knob: "NCCL_PROTO", Choices: []string{"", "LL128", "LL,LL128", "Simple", "^LL128"}},
			{Knob: "NCCL_MAX_NCHANNELS", Choices: []string{"", "8", "16"}},
		}
		res, _, l := runStudy(t, "spark4", o)
		wrong := 0
		for _, tr := range res.Trials {
			if tr.State == vocab.TrialInvalid {
				wrong++
			}
		}
		if wrong == 0 {
			t.Fatalf("seed %d: no config gave wrong results; the test needs one", seed)
		}
		if wrong > 1 {
			t.Errorf("seed %d: %d configs gave wrong results; after the first, no config allowing LL128 by name may launch", seed, wrong)
		}
		first := -1
		for i, r := range l.launches {
			allows := strings.Contains(strings.ToLower(r.Config["NCCL_PROTO"]), "ll128") && !strings.HasPrefix(r.Config["NCCL_PROTO"], "^")
			if allows && first >= 0 && r.Trial != first {
				t.Errorf("seed %d: launch %d runs %s after trial %d gave wrong results with LL128", seed, i, r.Config, first)
			}
			if allows && first < 0 {
				for _, tr := range res.Trials {
					if tr.Number == r.Trial && tr.State == vocab.TrialInvalid {
						first = tr.Number
					}
				}
			}
		}
		if len(res.Plan.WrongResults) != 1 || !strings.Contains(res.Plan.WrongResults[0], "NCCL_PROTO ll128 gave wrong results") {
			t.Errorf("seed %d: the plan's account of wrong results: %q", seed, res.Plan.WrongResults)
		}
		if env := res.Env(); strings.Contains(strings.ToLower(env["NCCL_PROTO"]), "ll128") && !strings.HasPrefix(env["NCCL_PROTO"], "^") {
			t.Errorf("seed %d: recommended %s", seed, nccl.Config(env))
		}
	}
}
