package search

import (
	"math"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
)

// TrialState says whether a trial's config can still be recommended.
type TrialState string

const (
	Running  TrialState = "running"  // measured, usable
	Complete TrialState = "complete" // the study ended with it usable
	// Failed, TimedOut and Invalid configs are never recommended: one bad
	// launch is enough (a config that corrupts data once is not a winner).
	Failed   TrialState = "failed"
	TimedOut TrialState = "timeout"
	Invalid  TrialState = "invalid"
	// Rejected configs broke a rule of NCCL (e.g. MIN > MAX) and were never launched.
	Rejected TrialState = "rejected"
)

// Usable reports whether a trial in this state may still win.
func (s TrialState) Usable() bool { return s == Running || s == Complete }

// Roles of trials in a study.
const (
	RoleBaseline = "baseline"
	RoleExplore  = "explore"
)

// Phases of launches in a study.
const (
	PhaseWarmup  = "warmup"
	PhaseExplore = "explore"
	PhaseRefine  = "refine"
	PhaseConfirm = "confirm"
	// PhaseExplain launches run with NCCL's debug log after the decision,
	// once for the baseline and once for the candidate, to record what NCCL
	// chose per size with each; they are not scored.
	PhaseExplain = "explain"
)

// Trial is one config of a study and what was measured of it.
type Trial struct {
	// Number is the trial's number in its study; 0 is the baseline.
	Number int
	Config nccl.Config
	Role   string
	State  TrialState
	Reason string
	// Explore are the scored launches of exploration and refinement.
	Explore []model.Launch
	// Confirm are the launches of the confirmation stage, measured
	// interleaved with the baseline's; only these decide the recommendation.
	Confirm []model.Launch
	// Launches counts every launch of the trial, failed and warm-up included.
	Launches int
	// ID is the store's identifier, set by the Recorder; search ignores it.
	ID uint64

	// The log score is cached for the number of exploration launches it
	// was computed from: a study ranks its trials after every launch.
	cachedN     int
	cachedScore float64
	guardN      int
	guardMed    map[int64]float64
}

// guardMedian is the median over the trial's exploration launches of each
// launch's median at size g; 0 when no launch measured g. Cached like the
// score.
func (t *Trial) guardMedian(g int64) float64 {
	if t.guardN != len(t.Explore) || t.guardMed == nil {
		t.guardN, t.guardMed = len(t.Explore), map[int64]float64{}
	}
	if m, ok := t.guardMed[g]; ok {
		return m
	}
	var meds []float64
	for _, l := range t.Explore {
		if xs := l.Times[g]; len(xs) > 0 {
			meds = append(meds, model.Median(xs))
		}
	}
	m := 0.0
	if len(meds) > 0 {
		m = model.Median(meds)
	}
	t.guardMed[g] = m
	return m
}

// Score is the trial's current band score estimate in µs: the geometric
// mean of its exploration launch scores. +Inf when it has none.
func (t *Trial) Score(sizes []int64) float64 {
	return math.Exp(t.logScore(sizes))
}

func (t *Trial) logScore(sizes []int64) float64 {
	if t.cachedN == len(t.Explore) && t.cachedN > 0 {
		return t.cachedScore
	}
	t.cachedN, t.cachedScore = len(t.Explore), t.computeLogScore(sizes)
	return t.cachedScore
}

func (t *Trial) computeLogScore(sizes []int64) float64 {
	sum, n := 0.0, 0
	for _, l := range t.Explore {
		s, err := model.LaunchScore(l, sizes)
		if err != nil || s <= 0 {
			continue
		}
		sum += math.Log(s)
		n++
	}
	if n == 0 {
		return math.Inf(1)
	}
	return sum / float64(n)
}

// ModelLaunch converts a parsed benchmark result into the model's input:
// per size, the out-of-place per-iteration times (every cycle of -N), or
// the table's single time when the output has no per-iteration samples.
func ModelLaunch(r *runner.Result) model.Launch {
	l := model.Launch{Times: map[int64][]float64{}}
	if r == nil {
		return l
	}
	for _, row := range r.Rows {
		if row.Out.Iter != nil && len(row.Out.Iter.TimesUS) > 0 {
			l.Times[row.Bytes] = append(l.Times[row.Bytes], row.Out.Iter.TimesUS...)
		} else if row.Out.TimeUS > 0 {
			l.Times[row.Bytes] = append(l.Times[row.Bytes], row.Out.TimeUS)
		}
	}
	return l
}
