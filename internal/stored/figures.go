package stored

import (
	"encoding/json"
	"slices"

	"github.com/nccltune/nccltune/store"
)

// LaunchStats are the launch-level statistics figures and tables draw,
// computed by internal/launchstats and handed in (Study.LaunchStats), so
// that neither stored nor the printers import a statistics routine. Each
// method is documented where launchstats.Figures defines it.
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

// Round is one complete round of a trial (LaunchStats.Rounds).
type Round struct {
	Phase   string
	ScoreUS float64       // the round's objective
	Last    *store.Launch // the launch that completed it
}

// SizeTimes is one size of a set of launches: the median of their median
// times (µs) with its interval, and how many launches measured it.
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
// arm's band score, the speedup with its interval (NaN when none exists),
// the p-value and whether it is significant.
type BandComparison struct {
	BaselineUS  float64 `json:"baseline_us"`
	CandidateUS float64 `json:"candidate_us"`
	Speedup     float64 `json:"speedup"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
	// CILevel is the decision's own level where the row is the study's
	// decision, else the statistics'.
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

// ArmNote is one of the model's caveats about one arm, on the cells of
// Cells' sizes or on the arm as a whole (OnArm).
type ArmNote struct {
	Text  string
	Cells []int64
	OnArm bool
}
