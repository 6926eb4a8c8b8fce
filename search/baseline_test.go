package search

import (
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestBaselineStudy: against the user's settings (spark4's hole: Tree with
// two channels), the study's trial 0 is those settings, its plan launch is
// of NCCL's defaults, the defaults are explored as a trial of their own,
// and the recommendation beats the baseline.
func TestBaselineStudy(t *testing.T) {
	t.Parallel()
	o := spark4Options(3)
	o.Baseline = nccl.Config{"NCCL_ALGO": "Tree", "NCCL_MAX_NCHANNELS": "2"}
	o.Space = o.Space.WithBaseline(o.Baseline)
	res, _, l := runStudy(t, "spark4", o)
	if res.Baseline == nil || res.Baseline.Number != 0 || res.Baseline.Config.Key() != o.Baseline.Key() {
		t.Fatalf("baseline trial %+v, want trial 0 with %s", res.Baseline, o.Baseline)
	}
	var defaults *Trial
	for _, tr := range res.Trials {
		if len(tr.Config.Canonical()) == 0 {
			defaults = tr
		}
	}
	if defaults == nil || len(defaults.Explore) == 0 {
		t.Fatalf("NCCL's defaults were not explored: %+v", defaults)
	}
	for _, req := range l.launches {
		if req.Phase == vocab.PhasePlan {
			if len(req.Config.Canonical()) != 0 {
				t.Errorf("the first plan launch ran %s, want NCCL's defaults", req.Config)
			}
			break
		}
	}
	if !res.Recommend || res.Decision == nil || res.Decision.Speedup < 2 {
		t.Fatalf("no clear gain over Tree with two channels: %+v", res.Decision)
	}
}

func TestSpaceWithBaseline(t *testing.T) {
	t.Parallel()
	sp := Space{{Knob: "NCCL_PROTO", Choices: []string{"", "LL", "Simple"}}}
	got := sp.WithBaseline(nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "6"})
	want := map[string][]string{"NCCL_PROTO": {"", "LL", "Simple", "^LL128"}, "NCCL_MAX_NCHANNELS": {"", "6"}}
	if len(got) != len(want) {
		t.Fatalf("space %+v", got)
	}
	for _, d := range got {
		if w := want[d.Knob]; len(w) != len(d.Choices) || d.Choices[len(w)-1] != w[len(w)-1] {
			t.Errorf("%s: %v, want %v", d.Knob, d.Choices, w)
		}
	}
	if len(sp[0].Choices) != 3 {
		t.Errorf("WithBaseline changed its receiver: %v", sp[0].Choices)
	}
}
