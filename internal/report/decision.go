package report

import (
	"fmt"
	"slices"

	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// DecisionFigure is the study's figure of what decided: NCCL defaults and
// the confirmed config over the launches the verdict and the tables use
// (DecisionCurves), with the band speedup in the subtitle. A study with
// nothing confirmed draws every trial over all its launches, and says so.
func (s *Study) DecisionFigure(metric string, exploration bool) (Figure, error) {
	return s.compared().decisionFigure(metric, exploration)
}

func (v compared) decisionFigure(metric string, exploration bool) (Figure, error) {
	s := v.s
	var curves []Curve
	var err error
	var sub []string
	switch {
	case s.Study.Kind != vocab.KindSearch:
		curves, err = s.AllCurves(0) // a sweep's or an import's few configs, all in colour
	case v.c == nil:
		curves, err = s.AllCurves(5)
		sub = []string{"nothing was confirmed against " + stored.ConclusionOf(s.Study).BaselineName() + ": every config, all its launches pooled (exploration only, not a verdict)"}
	default:
		curves, err = s.DecisionCurves(exploration)
		sub = v.decisionSubtitle()
	}
	if err != nil {
		return Figure{}, err
	}
	f := NewFigure(curves, s)
	f.Metric, f.Subtitle = metric, sub
	return f, nil
}

// decisionSubtitle says which launches v.s's decision figure draws, then
// the band speedup with its interval; v.c is not nil.
func (v compared) decisionSubtitle() []string {
	s, c := v.s, v.c
	baseline := stored.ConclusionOf(s.Study).BaselineName()
	out := []string{fmt.Sprintf("%s vs %s: %s (the verdict's)", c.Candidate.Label, baseline, c.launchesText())}
	if b := c.Band; b != nil {
		what := "band " + studiedText(s.Study)
		if store.WorkloadText(s.Study) != "" {
			what = "time per step of " + studiedText(s.Study)
		}
		line := fmt.Sprintf("%s: speedup %s", what, stored.SpeedupText(b.Speedup, [2]float64{b.Lo, b.Hi}))
		if finite(b.Lo) && finite(b.Hi) {
			line += " (" + b.CILevel.Label() + ")"
		} else {
			line += " (no interval: too few launches)"
		}
		line += fmt.Sprintf(", p = %.2g: ", b.P)
		if s.Recommended() {
			line += "recommended"
		} else {
			line += "not recommended, keep " + baseline
		}
		out = append(out, line)
	}
	return out
}

// AllCurves is every trial's curve over all its usable launches, pooled:
// NCCL defaults and the confirmed config first, then the others best
// first. With highlight > 0 only those two and the best highlight others
// are in colour; the rest are Background. Trials with no usable launch
// are left out.
func (s *Study) AllCurves(highlight int) ([]Curve, error) {
	order := slices.Clone(s.Trials)
	if cs, err := s.ScoredConfigs(); err == nil {
		rank := map[int]int{}
		for i, c := range cs {
			for _, n := range c.Trials {
				rank[n] = i
			}
		}
		base, cand := s.Baseline(), s.Candidate()
		first := func(t *store.Trial) int {
			switch {
			case base != nil && t.ID == base.ID:
				return 0
			case cand != nil && t.ID == cand.ID:
				return 1
			}
			return 2
		}
		slices.SortStableFunc(order, func(a, b *store.Trial) int {
			if d := first(a) - first(b); d != 0 {
				return d
			}
			return rank[a.Number] - rank[b.Number]
		})
	}
	var out []Curve
	others := 0
	for _, t := range order {
		c, err := s.TrialCurve(t)
		if err != nil {
			continue
		}
		if len(c.Config) > 0 && c.Note == "" {
			others++
			c.Background = highlight > 0 && others > highlight
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to plot: %s has no successful launch yet — run or resume the study first", s.Name())
	}
	return out, nil
}
