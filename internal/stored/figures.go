package stored

import (
	"encoding/json"
	"slices"

	"github.com/nccltune/nccltune/store"
)

// LaunchStats are the launch-level data kept for figures and
// re-analysis: the medians, intervals and tests of stored launches that
// the report's curves, tables and landscapes draw, and the search's
// rounds. internal/launchstats computes them with model and search; the
// command that loads a study to draw hands them in (Study.LaunchStats), so
// neither stored nor the printers import a statistics routine. The
// decision itself is the stored Recommendation, never rebuilt by them.
// Each is at the study's statistics (StatsOf) but CompareAcross, which
// compares two studies at the defaults, neither study's own; each method
// is documented where launchstats.Figures defines it.
type LaunchStats interface {
	CurveTimes(st *store.Study, ls []*store.Launch) (sizes []SizeTimes, minMax bool)
	BusBWFactor(s *Study) float64
	LaunchScore(l *store.Launch, sizes []int64) float64
	MedianWithInterval(st *store.Study, xs []float64) (med, lo, hi float64, what string)
	CompareSizes(st *store.Study, bl, cl []*store.Launch, sizes []int64) []store.SizeComparison
	CompareBand(st *store.Study, bl, cl []*store.Launch, band []int64) (_ BandComparison, notes []string)
	CompareAcross(a, b []*store.Launch) (rows []store.SizeComparison, band BandComparison, common []int64)
	ArmNotes(st *store.Study, label string, ls []*store.Launch, sizes []int64) []ArmNote
	RoundScores(st *store.Study, trialID uint64, launches []*store.Launch) (explore, confirm []float64, ok bool)
	Rounds(st *store.Study, trialID uint64, launches []*store.Launch) ([]Round, bool)
}

// Round is one complete round of a trial, as LaunchStats.Rounds reads
// it.
type Round struct {
	Phase string
	// ScoreUS is the round's objective.
	ScoreUS float64
	// Last is the launch that completed the round.
	Last *store.Launch
}

// SizeTimes is one size of a set of launches: the median over launches
// of their median times (µs) with its interval (NaN ends below
// model.MinLaunchesForInterval launches) and how many launches measured
// the size.
type SizeTimes struct {
	Bytes              int64
	TimeUS, LoUS, HiUS float64
	Launches           int
}

// MeasuredSizes lists the sizes any of the launches measured, ascending.
func MeasuredSizes(ls []*store.Launch) []int64 {
	var out []int64
	for _, l := range ls {
		for _, z := range l.Sizes {
			out = append(out, z.Nominal())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BandComparison is two sets of launches compared over a band: each
// arm's band score, the speedup BaselineUS/CandidateUS with its interval
// from the launch scores (NaN when none exists for these launches), the
// p-value and whether it is significant. The report's table shows it, or
// the study's decision in its shape (its band row), and compare A B.
type BandComparison struct {
	BaselineUS  float64 `json:"baseline_us"`
	CandidateUS float64 `json:"candidate_us"`
	Speedup     float64 `json:"speedup"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
	// CILevel is the confidence [Lo, Hi] was taken at: the study's
	// decision's own where the row is that decision (a sequential look's
	// level), the statistics' where it was compared from the launches.
	CILevel     store.CILevel `json:"ci_level,omitempty"`
	P           float64       `json:"p"`
	Significant bool          `json:"significant"`
}

// MarshalJSON writes an unknown speedup interval as null.
func (b BandComparison) MarshalJSON() ([]byte, error) {
	type f = store.JSONFloat
	return json.Marshal(struct {
		BaselineUS  f             `json:"baseline_us"`
		CandidateUS f             `json:"candidate_us"`
		Speedup     f             `json:"speedup"`
		Lo          f             `json:"lo"`
		Hi          f             `json:"hi"`
		CILevel     store.CILevel `json:"ci_level,omitempty"`
		P           f             `json:"p"`
		Significant bool          `json:"significant"`
	}{f(b.BaselineUS), f(b.CandidateUS), f(b.Speedup), f(b.Lo), f(b.Hi), b.CILevel, f(b.P), b.Significant})
}

// ArmNote is one of the model's caveats about one arm of a comparison,
// in words: on the cells of the sizes Cells names, or on the arm as a
// whole (OnArm).
type ArmNote struct {
	Text  string
	Cells []int64
	OnArm bool
}
