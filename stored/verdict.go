package stored

import (
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// Verdict is a study's conclusion in plain words: a headline ("keep NCCL
// defaults: no significant gain", or the recommended env) and the lines
// that support it.
type Verdict struct {
	Headline string
	Details  []string
	// Change is true when the study recommends changing the defaults.
	Change bool
	// Decided is false while there is no recommendation at all.
	Decided bool
}

// VerdictOf states the study's conclusion.
func VerdictOf(s *store.Study) Verdict {
	r := s.Recommendation
	var v Verdict
	switch {
	case r == nil && s.Status == vocab.StatusRunning:
		v.Headline = "not decided yet (the study is still running)"
		return v
	case r == nil:
		v.Headline = fmt.Sprintf("none (the study is %s)", s.Status)
		return v
	case !r.Significant || len(nccl.Config(r.Env).Clone()) == 0 && len(nccl.Config(s.BaselineEnv).Clone()) == 0:
		v.Decided = true
		v.Headline = "keep " + baselineName(s) + ": no significant gain"
		if op, ok := refusingOp(r); ok {
			v.Headline = "keep " + baselineName(s) + ": the candidate makes " + op + " significantly slower"
		}
	default:
		v.Decided, v.Change = true, true
		v.Headline = nccl.Config(r.Env).Key()
		if v.Headline == "" {
			// Against the user's settings, NCCL's defaults can win.
			v.Headline = "NCCL defaults (unset your baseline's " + strings.Join(nccl.Config(s.BaselineEnv).Clone().Names(), " ") + ")"
		}
		v.Details = append(v.Details, fmt.Sprintf("band speedup %s (95%% CI), p=%.3g", SpeedupText(r.Speedup, r.SpeedupCI), r.PValue))
		if r.BaselineScoreUS > 0 && r.ScoreUS > 0 {
			v.Details = append(v.Details, fmt.Sprintf("band score %.1f µs with "+baselineName(s)+" → %.1f µs", r.BaselineScoreUS, r.ScoreUS))
		}
		if r.BaselineLaunches > 0 || r.CandidateLaunches > 0 {
			v.Details = append(v.Details, fmt.Sprintf("confirmed by %d vs %d interleaved launches", r.BaselineLaunches, r.CandidateLaunches))
		}
	}
	// A recommendation's reason restates the lines above (speedup,
	// interval, p, launches); keeping the defaults needs its reason.
	if r.Reason != "" && !v.Change {
		v.Details = append(v.Details, r.Reason)
	}
	if s.Simulated {
		v.Details = append(v.Details, "(SIMULATED fabric: a demonstration, not a measurement of real hardware)")
	}
	return v
}

// baselineName is what a study compared with: NCCL's defaults, or the
// user's own settings (--baseline-env).
func baselineName(s *store.Study) string {
	if len(nccl.Config(s.BaselineEnv).Clone()) == 0 {
		return "NCCL defaults"
	}
	return "your baseline (" + nccl.Config(s.BaselineEnv).Key() + ")"
}

// SpeedupText is "×8.12 [7.88, 8.38]", without the interval when it is
// unknown.
func SpeedupText(speedup float64, ci [2]float64) string {
	s := fmt.Sprintf("×%.2f", speedup)
	if ci[0] > 0 && ci[1] > 0 {
		s += fmt.Sprintf(" [%.2f, %.2f]", ci[0], ci[1])
	}
	return s
}

// refusingOp names the part or guarded op that refused the
// recommendation ("broadcast at 1M"), if one did.
func refusingOp(r *store.Recommendation) (string, bool) {
	for _, p := range r.Parts {
		if p.Refused {
			return fmt.Sprintf("its part %s %s", p.Op, p.Band), true
		}
	}
	for _, g := range r.OpGuards {
		if g.Refused && g.Failed != "" {
			return fmt.Sprintf("%s fail (%s)", g.Op, g.Failed), true
		}
		if g.Refused {
			return fmt.Sprintf("%s at %s", g.Op, nccl.FormatSize(g.WorstBytes)), true
		}
	}
	return "", false
}
