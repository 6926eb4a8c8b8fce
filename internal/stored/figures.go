package stored

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// Launch-level data kept for figures and re-analysis: the medians,
// intervals and tests of stored launches that the report's curves,
// tables and landscapes draw, built here as plain data so the printers
// call no statistics routine (the decision itself is the stored
// Recommendation, never rebuilt here).

// SizeTimes is one size of a set of launches: the median over launches
// of their median times (µs) with its interval (NaN ends below
// model.MinLaunchesForInterval launches) and how many launches measured
// the size.
type SizeTimes struct {
	Bytes              int64
	TimeUS, LoUS, HiUS float64
	Launches           int
}

func timesOf(s model.SizeSummary) SizeTimes {
	return SizeTimes{Bytes: s.Bytes, TimeUS: s.Median, LoUS: s.Lo, HiUS: s.Hi, Launches: s.Launches}
}

// modelLaunches are stored launches in the model's form, each by
// model.LaunchOf (per size the per-iteration samples, or nccl-tests'
// summary time when the output had none; -N cycles pooled).
func modelLaunches(ls []*store.Launch) []model.Launch {
	out := make([]model.Launch, 0, len(ls))
	for _, l := range ls {
		out = append(out, model.LaunchOf(l.Sizes))
	}
	return out
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

// CurveTimes summarises a trial's launches size by size for a curve, one
// size at a time as a comparison does (a launch that missed another size
// still counts at this one), at the study's statistics (StatsOf). minMax
// is true when the launches are too few for a confidence interval; a
// size's interval is then, as where its own is missing, the smallest and
// largest launch median.
func CurveTimes(st *store.Study, ls []*store.Launch) (sizes []SizeTimes, minMax bool) {
	opt := StatsOf(st)
	minMax = len(ls) < model.MinLaunchesForInterval(opt)
	mls := modelLaunches(ls)
	for _, b := range MeasuredSizes(ls) {
		sum := model.Summarize(mls, []int64{b}, opt)
		if len(sum.Sizes) != 1 || sum.Sizes[0].Launches == 0 || math.IsNaN(sum.Sizes[0].Median) {
			continue
		}
		t := timesOf(sum.Sizes[0])
		if minMax || math.IsNaN(t.LoUS) || math.IsNaN(t.HiUS) {
			t.LoUS, t.HiUS = launchRange(mls, b)
		}
		sizes = append(sizes, t)
	}
	return sizes, minMax
}

// launchRange is the smallest and largest per-launch median time at a size.
func launchRange(ls []model.Launch, b int64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range ls {
		xs := slices.DeleteFunc(slices.Clone(l.Times[b]), func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) })
		if len(xs) == 0 {
			continue
		}
		m := model.Median(xs)
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	if math.IsInf(lo, 0) {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// BusBWFactor is busbw ÷ algbw for this study's collective: nccl-tests'
// own ratio read from the stored rows (it depends on the collective and
// the number of ranks only), else nccl-tests' factor for the study's op
// over the fabric's ranks, else 1 (algbw).
func (s *Study) BusBWFactor() float64 {
	var fs []float64
	for _, l := range s.Launches {
		for _, z := range l.Sizes {
			if z.AlgBW > 0 && z.BusBW > 0 && !math.IsInf(z.BusBW/z.AlgBW, 0) {
				fs = append(fs, z.BusBW/z.AlgBW)
			}
		}
	}
	if len(fs) > 0 {
		// algbw and busbw are printed with two decimals, so one row's ratio
		// is rough; the median over many rows is not.
		return model.Median(fs)
	}
	if n := s.Study.Platform.Ranks; n > 1 {
		if op, err := nccl.ParseOp(s.Study.Collective); err == nil || s.Study.Collective == "" {
			return op.BusFactor(n)
		}
	}
	return 1
}

// LaunchScore is a launch's band score as the study stored it: each
// launch is scored once, as it is measured (search.Measure), over the
// sizes its op scores. Imported launches are stored without one (import
// does not score); theirs is computed from their sizes over the study's.
// NaN for a launch with no score.
func LaunchScore(l *store.Launch, sizes []int64) float64 {
	if l.Scored && l.ScoreUS > 0 {
		return l.ScoreUS
	}
	if l.Phase != vocab.PhaseImport {
		return math.NaN()
	}
	sc, err := model.LaunchScore(model.LaunchOf(l.Sizes), sizes)
	if err != nil {
		return math.NaN()
	}
	return sc
}

// MedianWithInterval is the median of xs with the model's order-statistic
// interval at the study's confidence (from model.MinLaunchesForInterval
// values), else the min–max (from 2), else none; what names the interval.
func MedianWithInterval(st *store.Study, xs []float64) (med, lo, hi float64, what string) {
	opt := StatsOf(st)
	switch n := len(xs); {
	case n == 0:
		return math.NaN(), math.NaN(), math.NaN(), "none"
	case n == 1:
		return xs[0], math.NaN(), math.NaN(), "1 launch"
	case n < model.MinLaunchesForInterval(opt):
		return model.Median(xs), slices.Min(xs), slices.Max(xs), "min–max"
	}
	// The model's per-size summary over one pseudo-size whose
	// per-launch value is the launch's score gives the same interval as
	// every other median in the report.
	ls := make([]model.Launch, len(xs))
	for i, x := range xs {
		ls[i] = model.Launch{Times: map[int64][]float64{1: {x}}}
	}
	ss := model.Summarize(ls, []int64{1}, opt).Sizes[0]
	if math.IsNaN(ss.Lo) || math.IsInf(ss.Lo, 0) || math.IsNaN(ss.Hi) || math.IsInf(ss.Hi, 0) {
		return ss.Median, slices.Min(xs), slices.Max(xs), "min–max"
	}
	return ss.Median, ss.Lo, ss.Hi, fmt.Sprintf("%.0f%% CI", 100*opt.Confidence)
}

// ComparedSize is one size of two sets of launches compared at that size
// alone (model.CompareSizes, the one per-size comparison): each arm's
// times there, the test's two-sided p-value and whether it is
// significant, and the speedup's rank interval (NaN when the launches are
// too few for one).
type ComparedSize struct {
	Bytes                   int64
	Baseline, Candidate     SizeTimes
	P, SpeedupLo, SpeedupHi float64
	Significant             bool
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
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// MarshalJSON writes an unknown speedup interval as null.
func (b BandComparison) MarshalJSON() ([]byte, error) {
	type f = store.JSONFloat
	return json.Marshal(struct {
		BaselineUS  f    `json:"baseline_us"`
		CandidateUS f    `json:"candidate_us"`
		Speedup     f    `json:"speedup"`
		Lo          f    `json:"lo"`
		Hi          f    `json:"hi"`
		P           f    `json:"p"`
		Significant bool `json:"significant"`
	}{f(b.BaselineUS), f(b.CandidateUS), f(b.Speedup), f(b.Lo), f(b.Hi), f(b.P), b.Significant})
}

func compareSizes(bm, cm []model.Launch, sizes []int64, opt model.Options) []ComparedSize {
	var out []ComparedSize
	for _, r := range model.CompareSizes(bm, cm, sizes, opt) {
		out = append(out, ComparedSize{Bytes: r.Bytes, Baseline: timesOf(r.Baseline), Candidate: timesOf(r.Candidate),
			P: r.Comparison.P, SpeedupLo: r.Comparison.Lo, SpeedupHi: r.Comparison.Hi, Significant: r.Comparison.Significant})
	}
	return out
}

// compareBand is bm and cm compared over band, with the model's caveats
// on the interval or the decision.
func compareBand(bm, cm []model.Launch, band []int64, opt model.Options) (BandComparison, []string) {
	cmp := model.Compare(bm, cm, band, opt)
	var notes []string
	for _, w := range cmp.Warnings {
		if w.Code == model.WarnNoCI || w.Code == model.WarnTooFewForDecision {
			notes = append(notes, w.Message)
		}
	}
	return BandComparison{BaselineUS: cmp.Baseline.ScoreUS, CandidateUS: cmp.Candidate.ScoreUS,
		Speedup: cmp.Speedup, Lo: cmp.Lo, Hi: cmp.Hi, P: cmp.P, Significant: cmp.Significant}, notes
}

// CompareSizes compares a study's baseline and candidate launches size by
// size at the study's statistics, leaving out a size either did not
// measure.
func CompareSizes(st *store.Study, bl, cl []*store.Launch, sizes []int64) []ComparedSize {
	return compareSizes(modelLaunches(bl), modelLaunches(cl), sizes, StatsOf(st))
}

// CompareBand compares a study's baseline and candidate launches over
// band at the study's statistics; notes are the caveats on its interval
// or decision.
func CompareBand(st *store.Study, bl, cl []*store.Launch, band []int64) (_ BandComparison, notes []string) {
	return compareBand(modelLaunches(bl), modelLaunches(cl), band, StatsOf(st))
}

// CompareAcross compares two studies' launches (compare A B, not
// interleaved) at model's default statistics, neither study's own: size
// by size and over the sizes the first launch of each measured in common
// (nil when none).
func CompareAcross(a, b []*store.Launch) (rows []ComparedSize, band BandComparison, common []int64) {
	am, bm := modelLaunches(a), modelLaunches(b)
	for z := range am[0].Times {
		if _, ok := bm[0].Times[z]; ok {
			common = append(common, z)
		}
	}
	slices.Sort(common)
	if len(common) == 0 {
		return nil, BandComparison{}, nil
	}
	opt := model.DefaultOptions()
	band, _ = compareBand(am, bm, common, opt)
	return compareSizes(am, bm, common, opt), band, common
}

// ArmNote is one of the model's caveats about one arm of a comparison,
// in words: on the cells of the sizes Cells names, or on the arm as a
// whole (OnArm).
type ArmNote struct {
	Text  string
	Cells []int64
	OnArm bool
}

// ArmNotes are the caveats the report's table footnotes about one arm
// (named label) over sizes, at the study's statistics: too few launches
// for an interval, spread, bimodality, outliers (named by their place in
// the study), missing sizes and invalid launches.
func ArmNotes(st *store.Study, label string, ls []*store.Launch, sizes []int64) []ArmNote {
	opt := StatsOf(st)
	var out []ArmNote
	for _, w := range model.Summarize(modelLaunches(ls), sizes, opt).Warnings {
		switch w.Code {
		case model.WarnFewLaunches:
			out = append(out, ArmNote{Text: fmt.Sprintf("need ≥ %d launches for a %.0f%% confidence interval of the median (as benchstat: \"± ∞\")",
				model.MinLaunchesForInterval(opt), 100*opt.Confidence), Cells: w.Bytes})
		case model.WarnHighSpread, model.WarnBimodal:
			out = append(out, ArmNote{Text: label + ": " + w.Message, Cells: w.Bytes, OnArm: len(w.Bytes) == 0})
		case model.WarnOutliers:
			out = append(out, ArmNote{Text: label + ": " + outlierText(w, ls), OnArm: true})
		case model.WarnMissingSize, model.WarnInvalidLaunch:
			out = append(out, ArmNote{Text: label + ": " + w.Message, OnArm: true})
		}
	}
	return out
}

// outlierText names outlier launches by their place in the study (the
// launch's sequence number, as the search log printed them), not by their
// index in the slice the model saw.
func outlierText(w model.Warning, stored []*store.Launch) string {
	var seqs []string
	for _, i := range w.Launches {
		if i >= 0 && i < len(stored) {
			seqs = append(seqs, strconv.Itoa(stored[i].Seq+1))
		}
	}
	if len(seqs) == 0 {
		return w.Message
	}
	if len(seqs) == 1 {
		return "launch " + seqs[0] + " of the study is far from the others (an outlier by a robust rule): the medians and the rank test are robust to it, but a disturbed fabric may be worth checking"
	}
	return "launches " + strings.Join(seqs, ", ") + " of the study are far from the others (outliers by a robust rule): the medians and the rank test are robust to them, but a disturbed fabric may be worth checking"
}
