package search

import (
	"math"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// DebugLaunch is a stored debug launch of a trial: its phase and the
// launch, whose Result.Facts hold what NCCL's log said.
type DebugLaunch struct {
	Phase  string
	Launch *benchfmt.Launch
	// MinBytes and MaxBytes are the sizes it swept (an exact read's ladder).
	MinBytes, MaxBytes int64
}

// Trial is one config of a study and what was measured of it.
type Trial struct {
	// Number is the trial's number in its study; 0 is the baseline.
	Number int
	Config nccl.Config
	Role   string
	State  vocab.TrialState
	Reason string
	// Explore are the scored launches of exploration and refinement.
	Explore []model.Launch
	// scores are Explore's band scores as Measure made them, index for
	// index; NaN is scored when first needed.
	scores []float64
	// Confirm are the launches of the confirmation stage: only these
	// decide the recommendation.
	Confirm []model.Launch
	// exploreOps and confirmOps are a workload's rounds, each op's launch,
	// index for index with Explore and Confirm; nil for a one-part study.
	exploreOps, confirmOps []map[nccl.Op]model.Launch
	// Guards are the launches of each guarded op.
	Guards map[nccl.Op][]model.Launch
	// guardFailed counts failed guard launches (they spend the reserve).
	guardFailed int
	// pastPlan is set when a stored launch of the trial was of a phase
	// after the plan phase (madePastPlan).
	pastPlan bool
	// failedOp is the op whose launch failed the trial ("" when none did).
	failedOp nccl.Op
	// exact are the trial's measurements at a timed workload's called
	// sizes that a resumed study read back.
	exact []exactRun
	// blocks are the batches that measured the trial's exploration results.
	blocks []benchfmt.BatchMember
	// Launches counts every launch of the trial, failed and warm-up included.
	Launches int
	// ID is the store's identifier, set by the Recorder; search ignores it.
	ID uint64
	// Debug are the trial's stored debug launches, oldest first: a resumed
	// study reads NCCL's plan and choices back from them.
	Debug []DebugLaunch

	// The log score is cached for the number of exploration launches it
	// was computed from.
	cachedN     int
	cachedScore float64
	cachedSS    float64 // sum of squared deviations of the log launch scores
	cachedK     int     // launches with a valid score
	guardN      int
	guardMed    map[opSize]float64
	guardLogs   map[opSize][]float64
}

// guardAt is the median at g of t's exploration launches, and each
// launch's log median. Cached like the score.
func (t *Trial) guardAt(g opSize) (median float64, logs []float64) {
	if t.guardN != len(t.Explore) || t.guardMed == nil {
		t.guardN, t.guardMed, t.guardLogs = len(t.Explore), map[opSize]float64{}, map[opSize][]float64{}
	}
	if m, ok := t.guardMed[g]; ok {
		return m, t.guardLogs[g]
	}
	var meds, lg []float64
	for _, l := range t.exploreOf(g.op) {
		if xs := l.Times[g.bytes]; len(xs) > 0 {
			m := model.Median(xs)
			meds = append(meds, m)
			if m > 0 {
				lg = append(lg, math.Log(m))
			}
		}
	}
	m := 0.0
	if len(meds) > 0 {
		m = model.Median(meds)
	}
	t.guardMed[g], t.guardLogs[g] = m, lg
	return m, lg
}

// Score is the trial's current band score estimate in µs: the geometric
// mean of its exploration launch scores. +Inf when it has none.
func (t *Trial) Score(sizes []int64) float64 {
	return math.Exp(t.logScore(sizes))
}

func (t *Trial) logScore(sizes []int64) float64 {
	t.cacheScore(sizes)
	return t.cachedScore
}

// scoreStats are the number of scored exploration launches and the sum of
// squared deviations of their log scores.
func (t *Trial) scoreStats(sizes []int64) (n int, ss float64) {
	t.cacheScore(sizes)
	return t.cachedK, t.cachedSS
}

func (t *Trial) cacheScore(sizes []int64) {
	if t.cachedN == len(t.Explore) && t.cachedN > 0 {
		return
	}
	t.cachedN = len(t.Explore)
	var xs []float64
	sum := 0.0
	for _, s := range t.exploreScores(sizes) {
		if s > 0 {
			xs = append(xs, math.Log(s))
			sum += xs[len(xs)-1]
		}
	}
	t.cachedScore, t.cachedSS, t.cachedK = math.Inf(1), 0, len(xs)
	if len(xs) == 0 {
		return
	}
	t.cachedScore = sum / float64(len(xs))
	for _, x := range xs {
		t.cachedSS += (x - t.cachedScore) * (x - t.cachedScore)
	}
}

// addExplore keeps an exploration measurement with its band score.
func (t *Trial) addExplore(l model.Launch, score float64) {
	for len(t.scores) < len(t.Explore) {
		t.scores = append(t.scores, math.NaN()) // added without a score
	}
	t.Explore = append(t.Explore, l)
	t.scores = append(t.scores, score)
}

// addRound keeps a workload's round of t and its score.
func (t *Trial) addRound(phase string, round map[nccl.Op]model.Launch, score float64) {
	if phase == vocab.PhaseConfirm {
		t.Confirm = append(t.Confirm, scoreLaunch(score))
		t.confirmOps = append(t.confirmOps, round)
		return
	}
	t.addExplore(scoreLaunch(score), score)
	t.exploreOps = append(t.exploreOps, round)
}

// restartConfirm drops t's confirmation launches for a fresh confirmation.
func (t *Trial) restartConfirm() { t.Confirm, t.confirmOps = nil, nil }

// ConfirmOf are t's confirmation launches of op: a workload's op's launch
// of each round, a one-part study's launches as they are.
func (t *Trial) ConfirmOf(op nccl.Op) []model.Launch { return launchesOf(t.Confirm, t.confirmOps, op) }

// exploreOf are t's exploration launches of op, as ConfirmOf.
func (t *Trial) exploreOf(op nccl.Op) []model.Launch { return launchesOf(t.Explore, t.exploreOps, op) }

// launchesOf are op's launches of rounds, or ls where there are no rounds.
func launchesOf(ls []model.Launch, rounds []map[nccl.Op]model.Launch, op nccl.Op) []model.Launch {
	if rounds == nil {
		return ls
	}
	out := make([]model.Launch, len(rounds))
	for i, r := range rounds {
		out[i] = r[op.OrAllReduce()]
	}
	return out
}

// exploreScores are the band scores of t's exploration launches.
func (t *Trial) exploreScores(sizes []int64) []float64 {
	for len(t.scores) < len(t.Explore) {
		t.scores = append(t.scores, math.NaN())
	}
	for i, sc := range t.scores[:len(t.Explore)] {
		if math.IsNaN(sc) {
			t.scores[i], _ = model.LaunchScore(t.Explore[i], sizes)
		}
	}
	return t.scores[:len(t.Explore)]
}

// madePastPlan reports whether t has a launch after the plan phase.
func (t *Trial) madePastPlan() bool {
	return t.pastPlan || len(t.Explore) > 0 || len(t.Confirm) > 0 || len(t.Guards) > 0
}
