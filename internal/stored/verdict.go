package stored

import (
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Verdict is a study's conclusion in plain words: a headline ("keep NCCL
// defaults: no significant gain", or the recommended env) and the lines
// that support it.
type Verdict struct {
	Headline string
	Details  []string
	Change   bool // the study recommends changing the defaults
	Decided  bool // false while there is no recommendation at all
}

// Conclusion is what a study concluded, as far as its summary tells.
type Conclusion struct {
	Status string
	Rec    *store.RecommendationSummary // nil until decided
	// Baseline is --baseline-env, empty for NCCL's defaults.
	Baseline nccl.Config
	// Refused and Ending are store.Recommendation.RefusedBy's and Ending.
	Refused string
	Ending  string
}

// ConclusionOf is a stored study's conclusion.
func ConclusionOf(s *store.Study) Conclusion {
	c := Conclusion{Status: s.Status, Baseline: nccl.Config(s.BaselineEnv).Clone()}
	if r := s.Recommendation; r != nil {
		headline := r.Summary()
		c.Rec, c.Refused, c.Ending = &headline, headline.Refused, headline.Ending
	}
	return c
}

// SummaryConclusion is the conclusion of a study's summary (history).
func SummaryConclusion(s store.StudySummary) Conclusion {
	c := Conclusion{Status: s.Status, Rec: s.Recommendation, Baseline: nccl.Config(s.BaselineEnv).Clone()}
	if c.Rec != nil {
		c.Refused, c.Ending = c.Rec.Refused, c.Rec.Ending
	}
	return c
}

// Keeps reports whether the study keeps what it compared with: no
// significant gain, or nothing to change from NCCL's defaults.
func (c Conclusion) Keeps() bool {
	return c.Rec != nil && (!c.Rec.Significant || len(nccl.Config(c.Rec.Env).Clone()) == 0 && len(c.Baseline) == 0)
}

// RunEnv is the env to run after the study: the recommendation, or the
// baseline when the study keeps it; none when undecided.
func (c Conclusion) RunEnv() nccl.Config {
	switch {
	case c.Rec == nil:
		return nccl.Config{}
	case c.Keeps():
		return c.Baseline.Clone()
	}
	return nccl.Config(c.Rec.Env).Clone()
}

// BaselineName is what the study compared with, in words: "NCCL
// defaults", or "your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128)".
func (c Conclusion) BaselineName() string {
	if len(c.Baseline) == 0 {
		return "NCCL defaults"
	}
	return "your baseline (" + c.Baseline.Key() + ")"
}

// refusal is what the candidate did, in the words after "the candidate".
func (c Conclusion) refusal() string {
	how := ""
	if c.Rec != nil {
		how = c.Rec.RefusedHow
	}
	switch how {
	case store.RefusedNotShownSafe:
		return "is not shown safe for " + c.Refused
	case store.RefusedFails:
		return "makes " + c.Refused
	}
	return "makes " + c.Refused + " significantly slower"
}

// Headline is the conclusion in one phrase, and whether it changes what
// the study compared with and whether it decided at all.
func (c Conclusion) Headline() (text string, change, decided bool) {
	r := c.Rec
	switch {
	case r == nil && c.Status == vocab.StatusRunning:
		return "not decided yet (the study is still running)", false, false
	case r == nil:
		return fmt.Sprintf("none (the study is %s)", c.Status), false, false
	case c.Keeps() && c.Refused != "":
		return "keep " + c.BaselineName() + ": the candidate " + c.refusal(), false, true
	case c.Keeps():
		return "keep " + c.BaselineName() + ": " + keepWhy(c.Ending), false, true
	}
	if key := nccl.Config(r.Env).Key(); key != "" {
		return key, true, true
	}
	// Against the user's settings, NCCL's defaults can win.
	return "NCCL defaults (unset your baseline's " + strings.Join(c.Baseline.Names(), " ") + ")", true, true
}

// keepWhy says in a few words why a study kept its baseline, from the
// ending it stored: the one place these words are written.
func keepWhy(ending string) string {
	if why, ok := keepWords[ending]; ok {
		return why
	}
	return "no significant gain"
}

var keepWords = map[string]string{
	vocab.VerdictBelowMinEffect:    "the gain is below the minimum effect",
	vocab.VerdictFutile:            "the confirmation excluded a gain worth having",
	vocab.VerdictSlower:            "the candidate is slower",
	vocab.VerdictSlightlySlower:    "the candidate is slower",
	vocab.EndingOpRegression:       "the candidate makes another collective significantly slower",
	vocab.EndingGuard:              "the candidate is slower at a guard size",
	vocab.EndingSwitchesOnDisabled: "the candidate switches on what NCCL's defaults disabled",
	vocab.EndingCandidateFailed:    "the candidate failed during confirmation",
	vocab.EndingNoCandidate:        "no other config ran successfully",
	vocab.EndingSameAsBaseline:     "the best config found runs the same plan as the baseline",
	vocab.EndingInterrupted:        "interrupted before a decision",
	vocab.EndingCannotDecide:       "the budget left cannot decide a confirmation",
}

// DefaultsExplored is how NCCL's defaults did while exploring, for a
// decided study against the user's baseline: their trial, the gain of its
// score over the baseline's, and the verdict at the study's minimum
// effect.
func DefaultsExplored(s *store.Study, trials []*store.Trial) (def *store.Trial, gain float64, verdict string) {
	if len(nccl.Config(s.BaselineEnv).Clone()) == 0 || s.Recommendation == nil {
		return nil, 0, ""
	}
	for _, t := range trials {
		if len(t.Config.Clone()) == 0 {
			def = t
		}
	}
	base := s.Recommendation.BaselineScoreUS
	if def == nil || def.ScoreUS <= 0 || base <= 0 {
		return nil, 0, ""
	}
	switch gain = base/def.ScoreUS - 1; {
	case gain <= StatsOf(s).MinEffect:
		return def, gain, "not better than your baseline (exploration only, not confirmed)"
	case s.Recommendation.TrialID != 0 && s.Recommendation.TrialID == def.ID:
		return def, gain, "better than your baseline (confirmed above)"
	}
	return def, gain, "may be better than your baseline (exploration only, not confirmed)"
}

// VerdictOf states the study's conclusion.
func VerdictOf(s *store.Study) Verdict {
	r := s.Recommendation
	var v Verdict
	v.Headline, v.Change, v.Decided = ConclusionOf(s).Headline()
	switch {
	case !v.Decided:
		// Its refusals so far, or the candidate under confirmation reads
		// as its only one.
		v.Details = RefusalLines(s.Refusals, 0)
		return v
	case v.Change:
		if w := s.Parts(); w.Timed() && r.BaselineScoreUS > 0 && r.ScoreUS > 0 {
			v.Details = append(v.Details, fmt.Sprintf("time per step %.1f → %.1f µs, %s (%s), p=%.3g",
				w.StepUS(r.BaselineScoreUS), w.StepUS(r.ScoreUS), SpeedupText(r.Speedup, r.SpeedupCI), r.CILevel.Label(), r.PValue))
		} else {
			v.Details = append(v.Details, fmt.Sprintf("band speedup %s (%s), p=%.3g", SpeedupText(r.Speedup, r.SpeedupCI), r.CILevel.Label(), r.PValue))
			if r.BaselineScoreUS > 0 && r.ScoreUS > 0 {
				v.Details = append(v.Details, fmt.Sprintf("band score %.1f µs with "+ConclusionOf(s).BaselineName()+" → %.1f µs", r.BaselineScoreUS, r.ScoreUS))
			}
		}
		if r.BaselineLaunches > 0 || r.CandidateLaunches > 0 {
			v.Details = append(v.Details, fmt.Sprintf("confirmed by %d vs %d interleaved launches", r.BaselineLaunches, r.CandidateLaunches))
		}
	}
	// A recommendation's reason restates the lines above.
	if r.Reason != "" && !v.Change {
		v.Details = append(v.Details, r.Reason)
	}
	v.Details = append(v.Details, RefusalLines(r.Refusals, r.CandidateTrialID)...)
	if s.Simulated {
		v.Details = append(v.Details, "(SIMULATED fabric: a demonstration, not a measurement of real hardware)")
	}
	return v
}

// ConfirmationSpan is where the confirmation under way at launch seq
// began and ended, launches from <= seq < to (to -1: not ended): after a
// refusal both arms restart (store.Refusal.Restart), so the baseline's
// launches outside it were paired with another candidate.
func ConfirmationSpan(s *store.Study, seq int) (from, to int) {
	refusals := s.Refusals
	if s.Recommendation != nil {
		refusals = s.Recommendation.Refusals
	}
	to = -1
	for _, r := range refusals {
		switch x := r.Restart; {
		case x == nil:
		case x.Seq <= seq:
			from = max(from, x.Seq)
		case to < 0 || x.Seq < to:
			to = x.Seq
		}
	}
	return from, to
}

// RefusalLines say which candidates the study confirmed and refused
// before its last confirmation, and why: one line each. A last refusal of
// answer (Recommendation.CandidateTrialID) is the answer itself, which
// the decision already says.
func RefusalLines(refusals []store.Refusal, answer uint64) []string {
	if n := len(refusals); n > 0 && answer != 0 && refusals[n-1].TrialID == answer {
		refusals = refusals[:n-1]
	}
	var out []string
	for _, f := range refusals {
		// Its advice ("; keep NCCL's defaults…") was replaced since.
		why := f.Reason
		if i := strings.LastIndex(why, "; keep "); i >= 0 {
			why = why[:i]
		}
		speedup := SpeedupText(f.Speedup, f.SpeedupCI)
		if f.SpeedupCI[0] > 0 && f.SpeedupCI[1] > 0 {
			speedup += ", " + f.CILevel.Label()
		}
		out = append(out, fmt.Sprintf("refused earlier (its speedup %s): %s", speedup, why))
	}
	return out
}

// TakenOutLines say, one line each, the calls taken out of the study
// (store.Study.TakenOut), and what each export does with them.
func TakenOutLines(s *store.Study) []string {
	var out []string
	for _, ch := range s.TakenOut() {
		out = append(out, fmt.Sprintf("not guarded: %s at %d bytes, in chose: but not in calls: (a call taken out of the study): neither weighed nor guarded; a tuner CSV export keeps NCCL's own choice there, an env export changes it too", ch.Op, ch.Bytes))
	}
	return out
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
