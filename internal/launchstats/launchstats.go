// Package launchstats reads stored launches as the statistics read them:
// a study's statistics as model's options (OptionsOf), a launch as the
// search reads it back (SearchLaunch), and the launch-level data figures
// and tables draw (Figures, stored.LaunchStats), so that the printers
// import no statistics routine.
package launchstats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// Figures is stored.LaunchStats: the launch-level data figures and tables
// draw, computed by model and search at the study's statistics.
type Figures struct{}

// OptionsOf are the statistics a stored study decided with
// (stored.StatsOf) as model's options.
func OptionsOf(st *store.Study) model.Options {
	s, opt := stored.StatsOf(st), model.DefaultOptions()
	opt.Alpha, opt.Confidence, opt.MinEffect = s.Alpha, s.Confidence, s.MinEffect
	return opt
}

// modelLaunches are stored launches in the model's form (model.LaunchOf).
func modelLaunches(ls []*store.Launch) []model.Launch {
	out := make([]model.Launch, 0, len(ls))
	for _, l := range ls {
		out = append(out, model.LaunchOf(l.Sizes))
	}
	return out
}

// CurveTimes summarises a trial's launches size by size for a curve, one
// size at a time as a comparison does. minMax is true when the launches
// are too few for a confidence interval; a size's interval is then, as
// where its own is missing, the smallest and largest launch median.
func (Figures) CurveTimes(st *store.Study, ls []*store.Launch) (sizes []stored.SizeTimes, minMax bool) {
	opt := OptionsOf(st)
	minMax = len(ls) < model.MinLaunchesForInterval(opt)
	mls := modelLaunches(ls)
	for _, b := range stored.MeasuredSizes(ls) {
		sum := model.Summarize(mls, []int64{b}, opt)
		if len(sum.Sizes) != 1 || sum.Sizes[0].Launches == 0 || math.IsNaN(sum.Sizes[0].Median) {
			continue
		}
		s := sum.Sizes[0]
		t := stored.SizeTimes{Bytes: s.Bytes, TimeUS: s.Median, LoUS: s.Lo, HiUS: s.Hi, Launches: s.Launches}
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
// own ratio read from the stored rows, else its factor for the study's op
// over the fabric's ranks, else 1.
func (Figures) BusBWFactor(s *stored.Study) float64 {
	var fs []float64
	for _, l := range s.Launches {
		for _, z := range l.Sizes {
			if z.AlgBW > 0 && z.BusBW > 0 && !math.IsInf(z.BusBW/z.AlgBW, 0) {
				fs = append(fs, z.BusBW/z.AlgBW)
			}
		}
	}
	if len(fs) > 0 {
		return model.Median(fs) // one row's two-decimal ratio is rough
	}
	if n := s.Study.Platform.Ranks; n > 1 {
		if op, err := nccl.ParseOp(s.Study.Collective); err == nil || s.Study.Collective == "" {
			return op.BusFactor(n)
		}
	}
	return 1
}

// LaunchScore is a launch's band score as the study stored it; an
// imported launch's is computed over sizes. NaN for a launch with none.
func (Figures) LaunchScore(l *store.Launch, sizes []int64) float64 {
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

// MedianWithInterval is the median of xs with the model's interval at the
// study's confidence, else the min–max, else none; what names the
// interval.
func (Figures) MedianWithInterval(st *store.Study, xs []float64) (med, lo, hi float64, what string) {
	opt := OptionsOf(st)
	switch n := len(xs); {
	case n == 0:
		return math.NaN(), math.NaN(), math.NaN(), "none"
	case n == 1:
		return xs[0], math.NaN(), math.NaN(), "1 launch"
	case n < model.MinLaunchesForInterval(opt):
		return model.Median(xs), slices.Min(xs), slices.Max(xs), "min–max"
	}
	// One pseudo-size gives the same interval as every other median.
	ls := make([]model.Launch, len(xs))
	for i, x := range xs {
		ls[i] = model.Launch{Times: map[int64][]float64{1: {x}}}
	}
	ss := model.Summarize(ls, []int64{1}, opt).Sizes[0]
	if math.IsNaN(ss.Lo) || math.IsInf(ss.Lo, 0) || math.IsNaN(ss.Hi) || math.IsInf(ss.Hi, 0) {
		return ss.Median, slices.Min(xs), slices.Max(xs), "min–max"
	}
	return ss.Median, ss.Lo, ss.Hi, store.CILevel(opt.Confidence).Label()
}

// SizeComparisons compares baseline and candidate launches size by size,
// each size alone, leaving out a size either arm did not measure: a
// missing interval stays NaN (null), an undefined p-value is 1.
func SizeComparisons(base, cand []model.Launch, sizes []int64, opt model.Options) []store.SizeComparison {
	var out []store.SizeComparison
	for _, b := range sizes {
		cmp := model.Compare(base, cand, []int64{b}, opt)
		if len(cmp.Baseline.Sizes) != 1 || len(cmp.Candidate.Sizes) != 1 {
			continue
		}
		b0, c0 := cmp.Baseline.Sizes[0], cmp.Candidate.Sizes[0]
		if b0.Launches == 0 || c0.Launches == 0 || math.IsNaN(b0.Median) || math.IsNaN(c0.Median) {
			continue
		}
		out = append(out, store.SizeComparison{Bytes: b,
			BaselineUS: b0.Median, BaselineLo: b0.Lo, BaselineHi: b0.Hi, BaselineLaunches: b0.Launches,
			CandidateUS: c0.Median, CandidateLo: c0.Lo, CandidateHi: c0.Hi, CandidateLaunches: c0.Launches,
			Speedup: cmp.Speedup, SpeedupLo: cmp.Lo, SpeedupHi: cmp.Hi, Significant: cmp.Significant, PValue: store.FiniteOr(cmp.P, 1),
			CILevel: store.CILevel(cmp.CILevel)})
	}
	return out
}

// compareBand is bm and cm compared over band, with the model's caveats.
func compareBand(bm, cm []model.Launch, band []int64, opt model.Options) (stored.BandComparison, []string) {
	cmp := model.Compare(bm, cm, band, opt)
	var notes []string
	for _, w := range cmp.Warnings {
		if w.Code == model.WarnNoCI || w.Code == model.WarnTooFewForDecision {
			notes = append(notes, w.Message)
		}
	}
	return stored.BandComparison{BaselineUS: cmp.Baseline.ScoreUS, CandidateUS: cmp.Candidate.ScoreUS,
		Speedup: cmp.Speedup, Lo: cmp.Lo, Hi: cmp.Hi, CILevel: store.CILevel(cmp.CILevel), P: cmp.P, Significant: cmp.Significant}, notes
}

// CompareSizes is SizeComparisons at the study's statistics.
func (Figures) CompareSizes(st *store.Study, bl, cl []*store.Launch, sizes []int64) []store.SizeComparison {
	return SizeComparisons(modelLaunches(bl), modelLaunches(cl), sizes, OptionsOf(st))
}

// CompareBand compares a study's baseline and candidate launches over
// band at the study's statistics, with caveats.
func (Figures) CompareBand(st *store.Study, bl, cl []*store.Launch, band []int64) (_ stored.BandComparison, notes []string) {
	return compareBand(modelLaunches(bl), modelLaunches(cl), band, OptionsOf(st))
}

// CompareAcross compares two studies' launches at model's default
// statistics, neither study's own, over the sizes the first launch of
// each measured in common (nil when none).
func (Figures) CompareAcross(a, b []*store.Launch) (rows []store.SizeComparison, band stored.BandComparison, common []int64) {
	am, bm := modelLaunches(a), modelLaunches(b)
	for z := range am[0].Times {
		if _, ok := bm[0].Times[z]; ok {
			common = append(common, z)
		}
	}
	slices.Sort(common)
	if len(common) == 0 {
		return nil, stored.BandComparison{}, nil
	}
	opt := model.DefaultOptions()
	band, _ = compareBand(am, bm, common, opt)
	return SizeComparisons(am, bm, common, opt), band, common
}

// ArmNotes are the caveats the report's table footnotes about one arm
// (named label) over sizes, at the study's statistics.
func (Figures) ArmNotes(st *store.Study, label string, ls []*store.Launch, sizes []int64) []stored.ArmNote {
	opt := OptionsOf(st)
	var out []stored.ArmNote
	for _, w := range model.Summarize(modelLaunches(ls), sizes, opt).Warnings {
		switch w.Code {
		case model.WarnFewLaunches:
			out = append(out, stored.ArmNote{Text: fmt.Sprintf("need ≥ %d launches for a %.0f%% confidence interval of the median (as benchstat: \"± ∞\")",
				model.MinLaunchesForInterval(opt), 100*opt.Confidence), Cells: w.Bytes})
		case model.WarnHighSpread, model.WarnBimodal:
			out = append(out, stored.ArmNote{Text: label + ": " + w.Message, Cells: w.Bytes, OnArm: len(w.Bytes) == 0})
		case model.WarnOutliers:
			out = append(out, stored.ArmNote{Text: label + ": " + outlierText(w, ls), OnArm: true})
		case model.WarnMissingSize, model.WarnInvalidLaunch:
			out = append(out, stored.ArmNote{Text: label + ": " + w.Message, OnArm: true})
		}
	}
	return out
}

// outlierText names outlier launches by their place in the study, as the
// search log printed them.
func outlierText(w model.Warning, ls []*store.Launch) string {
	var seqs []string
	for _, i := range w.Launches {
		if i >= 0 && i < len(ls) {
			seqs = append(seqs, strconv.Itoa(ls[i].Seq+1))
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

// SearchLaunch is a stored launch as the search reads it back: a
// measurement when it ran to a result and was scored.
func SearchLaunch(l *store.Launch) search.StoredLaunch {
	sl := search.StoredLaunch{Op: l.Op, Phase: l.Phase, Scored: l.Outcome == benchfmt.OK && l.Scored, Failed: l.Outcome != benchfmt.OK, Batch: l.Batch,
		MinBytes: l.MinBytes, MaxBytes: l.MaxBytes, Debug: l.Debug}
	if l.Phase == vocab.PhaseExact && !l.Debug && l.Outcome == benchfmt.OK {
		// At the calls' own sizes: never scored, judged apart.
		sl.Launch = model.LaunchOf(l.Sizes)
	}
	if sl.Scored {
		sl.Launch, sl.ScoreUS = model.LaunchOf(l.Sizes), l.ScoreUS
	}
	return sl
}

// RoundScores are the objective of each of trial's rounds, exploration's
// and confirmation's, as the search scored them (search.Options.
// RoundScores); ok is false for a one-part study, whose launches' stored
// scores are its objective's.
func (Figures) RoundScores(s *store.Study, trialID uint64, launches []*store.Launch) (explore, confirm []float64, ok bool) {
	return search.Options{Workload: s.Parts()}.RoundScores(searchLaunchesOf(trialLaunches(trialID, launches)))
}

// Rounds are trial's complete rounds in order, each with its objective
// and the launch that completed it (search.Options.Rounds); ok is false
// for a one-part study.
func (Figures) Rounds(s *store.Study, trialID uint64, launches []*store.Launch) ([]stored.Round, bool) {
	of := trialLaunches(trialID, launches)
	rs, ok := search.Options{Workload: s.Parts()}.Rounds(searchLaunchesOf(of))
	out := make([]stored.Round, len(rs))
	for i, r := range rs {
		out[i] = stored.Round{Phase: r.Phase, ScoreUS: r.ScoreUS, Last: of[r.Last]}
	}
	return out, ok
}

func trialLaunches(trialID uint64, launches []*store.Launch) []*store.Launch {
	of := slices.DeleteFunc(slices.Clone(launches), func(l *store.Launch) bool { return l.TrialID != trialID })
	slices.SortStableFunc(of, func(a, b *store.Launch) int { return cmp.Compare(a.Seq, b.Seq) })
	return of
}

func searchLaunchesOf(of []*store.Launch) []search.StoredLaunch {
	ls := make([]search.StoredLaunch, len(of))
	for i, l := range of {
		ls[i] = SearchLaunch(l)
	}
	return ls
}
