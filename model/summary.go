package model

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/aclements/go-moremath/stats"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// SizeSummary describes one message size over a config's launches.
type SizeSummary struct {
	Bytes int64 `json:"bytes"`
	// Median is the median over launches of the per-launch median times
	// (µs); Lo and Hi bound it at Options.Confidence, NaN (null in JSON)
	// with too few launches.
	Median float64 `json:"median_us"`
	Lo     float64 `json:"lo_us"`
	Hi     float64 `json:"hi_us"`
	// Confidence is the exact coverage of [Lo, Hi] (≥ the one asked, since
	// order statistics come in steps); NaN without an interval.
	Confidence float64 `json:"confidence"`
	// Launches counts the launches that had valid samples at this size.
	Launches int `json:"launches"`
	// SpreadPct is 100·1.4826·MAD/median of the per-launch medians; NaN
	// below two launches.
	SpreadPct float64 `json:"spread_pct"`
}

// Summary describes one config over its launches.
type Summary struct {
	Sizes []SizeSummary `json:"sizes"`
	// ScoreUS is the band score: the geometric mean over sizes of the
	// per-size medians (µs); NaN when a size has no valid launch.
	ScoreUS float64 `json:"score_us"`
	// Launches counts the launches used (those not rejected as invalid).
	Launches int `json:"launches"`
	// LaunchScores are the scores of the launches valid at every size, in
	// input order; LaunchIndex holds their indices in the input.
	LaunchScores []float64 `json:"launch_scores"`
	LaunchIndex  []int     `json:"launch_index"`
	Warnings     []Warning `json:"warnings,omitempty"`
}

// Summarize reduces a config's launches: per size the median of the
// per-launch medians with its interval and spread, the band score, and
// warnings. Sizes are used sorted and without duplicates.
func Summarize(launches []Launch, sizes []int64, opt Options) Summary {
	opt, warns := opt.resolve()
	a := analyse(launches, sizes, true)
	s := a.summary(opt)
	s.Warnings = append(warns, s.Warnings...)
	return s
}

// analysis is the per-launch reduction shared by Summarize, Compare and
// PlanNext: every launch's median at every size, computed once.
type analysis struct {
	sizes   []int64
	n       int         // launches passed
	valid   []bool      // not rejected for impossible times
	medians [][]float64 // [launch][size]; NaN when missing or invalid
	scores  []float64   // [launch]; NaN unless valid at every size
	// iterBimodal lists (launch, size) pairs whose iterations fall in two
	// groups; filled only when detail was asked.
	iterBimodal []launchSizeRef
	warnings    []Warning
}

type launchSizeRef struct {
	launch int
	bytes  int64
}

// analyse validates and reduces launches. detail adds the per-iteration
// bimodality check, which Summarize reports and planning does not need.
func analyse(launches []Launch, sizes []int64, detail bool) *analysis {
	a := &analysis{n: len(launches)}
	a.sizes, a.warnings = cleanSizes(sizes)
	a.valid = make([]bool, len(launches))
	a.medians = make([][]float64, len(launches))
	a.scores = make([]float64, len(launches))
	flat := make([]float64, len(launches)*len(a.sizes))
	var buf []float64
	var invalid, missingL []int
	var invalidMsg string
	missingSizes := map[int64]bool{}
launches:
	for li, l := range launches {
		meds := flat[li*len(a.sizes) : (li+1)*len(a.sizes)]
		a.medians[li] = meds
		a.scores[li] = math.NaN()
		for i := range meds {
			meds[i] = math.NaN()
		}
		for _, b := range a.sizes {
			if err := checkTimes(l.Times[b], b); err != nil {
				invalid = append(invalid, li)
				invalidMsg = cmp.Or(invalidMsg, err.Error())
				continue launches
			}
		}
		a.valid[li] = true
		logSum, complete := 0.0, len(a.sizes) > 0
		for si, b := range a.sizes {
			xs := l.Times[b]
			if len(xs) == 0 {
				complete = false
				missingSizes[b] = true
				continue
			}
			buf = append(buf[:0], xs...)
			if detail {
				slices.Sort(buf)
				meds[si] = sortedMedian(buf)
			} else {
				meds[si] = selectMedian(buf) // planning needs only the median
			}
			logSum += math.Log(meds[si])
			if detail && len(buf) >= minIterationsForBimodal {
				for i := range buf {
					buf[i] = math.Log(buf[i])
				}
				if bimodal(buf, max(minGroupIterations, (len(buf)+9)/10)) {
					a.iterBimodal = append(a.iterBimodal, launchSizeRef{li, b})
				}
			}
		}
		if complete {
			a.scores[li] = math.Exp(logSum / float64(len(a.sizes)))
		} else if len(a.sizes) > 0 {
			missingL = append(missingL, li)
		}
	}
	a.warnLeftOut(invalid, invalidMsg, missingL, missingSizes)
	return a
}

// warnLeftOut warns about the launches analyse left out: impossible times
// (invalidMsg the first one's trouble) and missing sizes.
func (a *analysis) warnLeftOut(invalid []int, invalidMsg string, missingL []int, missingSizes map[int64]bool) {
	if len(invalid) > 0 {
		a.warnings = append(a.warnings, Warning{Code: WarnInvalidLaunch, Launches: invalid,
			Message: fmt.Sprintf("%s left out: %s", countLaunches(len(invalid)), invalidMsg)})
	}
	if len(missingL) > 0 {
		bs := slices.Sorted(maps.Keys(missingSizes))
		a.warnings = append(a.warnings, Warning{Code: WarnMissingSize, Launches: missingL, Bytes: bs,
			Message: fmt.Sprintf("%s no samples at %s, so %s no band score and %s left out of comparisons — the benchmark's size range must cover the band",
				plural(len(missingL), "one launch has", fmt.Sprintf("%d launches have", len(missingL))), nccl.FormatSizes(bs, ", "),
				plural(len(missingL), "it has", "they have"), plural(len(missingL), "is", "are"))})
	}
}

// cleanSizes sorts and de-duplicates sizes and drops non-positive ones.
func cleanSizes(sizes []int64) ([]int64, []Warning) {
	var out []int64
	var bad []int64
	for _, b := range sizes {
		if b <= 0 {
			bad = append(bad, b)
			continue
		}
		out = append(out, b)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	var w []Warning
	if len(bad) > 0 {
		w = append(w, Warning{Code: WarnNoSizes, Bytes: bad,
			Message: fmt.Sprintf("message sizes %v are not positive and were ignored — pass sizes in bytes", bad)})
	}
	if len(out) == 0 {
		w = append(w, Warning{Code: WarnNoSizes, Message: "no message sizes to summarise — pass the band's sizes"})
	}
	return out, w
}

// validScores returns the scores of launches valid at every size, and
// their input indices.
func (a *analysis) validScores() ([]float64, []int) {
	var xs []float64
	var idx []int
	for i, s := range a.scores {
		if !math.IsNaN(s) {
			xs = append(xs, s)
			idx = append(idx, i)
		}
	}
	return xs, idx
}

// column appends to buf the launches' medians at the si-th size, those
// without one left out.
func (a *analysis) column(si int, buf []float64) []float64 {
	for _, meds := range a.medians {
		if m := meds[si]; !math.IsNaN(m) {
			buf = append(buf, m)
		}
	}
	return buf
}

// summary is the Summary of the analysed launches.
func (a *analysis) summary(opt Options) Summary {
	s := Summary{ScoreUS: math.NaN(), Warnings: a.warnings}
	for _, v := range a.valid {
		if v {
			s.Launches++
		}
	}
	s.LaunchScores, s.LaunchIndex = a.validScores()
	if a.n == 0 {
		s.Warnings = append(s.Warnings, Warning{Code: WarnNoLaunches, Message: "no launches to summarise"})
	}
	s.Sizes, s.ScoreUS, s.Warnings = a.summariseSizes(opt, s.Warnings)
	s.Warnings = scoreWarnings(s.LaunchScores, s.LaunchIndex, opt, s.Warnings)
	s.Warnings = a.warnIterBimodal(s.Warnings)
	return s
}

// summariseSizes returns each size's summary and the band score (NaN
// unless every size has a median), warning of too few launches and high
// spread.
func (a *analysis) summariseSizes(opt Options, warns []Warning) (sizes []SizeSummary, score float64, _ []Warning) {
	score = math.NaN()
	needCI := MinLaunchesForInterval(opt)
	var few []int64
	fewN := math.MaxInt
	var spreadMsgs []string
	var spreadSizes []int64
	meds := make([]float64, 0, a.n)
	medsPerSize := make([]float64, 0, len(a.sizes))
	for si, b := range a.sizes {
		meds = a.column(si, meds[:0])
		ss := SizeSummary{Bytes: b, Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN(),
			Confidence: math.NaN(), SpreadPct: math.NaN(), Launches: len(meds)}
		if len(meds) > 0 {
			sorted := slices.Sorted(slices.Values(meds))
			ss.Median = sortedMedian(sorted)
			ss.SpreadPct = robustCVPct(sorted)
			ci := quantileCI(len(sorted), opt.Confidence)
			if ci.LoOrder >= 1 && ci.HiOrder <= len(sorted) {
				ss.Lo, ss.Hi, ss.Confidence = sorted[ci.LoOrder-1], sorted[ci.HiOrder-1], ci.Confidence
			} else {
				few = append(few, b)
				fewN = min(fewN, len(sorted))
			}
			if len(sorted) >= minLaunchesForSpread && ss.SpreadPct > opt.HighSpreadPct {
				spreadSizes = append(spreadSizes, b)
				spreadMsgs = append(spreadMsgs, fmt.Sprintf("%.0f %% at %s", ss.SpreadPct, nccl.FormatSize(b)))
			}
		}
		medsPerSize = append(medsPerSize, ss.Median)
		sizes = append(sizes, ss)
	}
	if len(a.sizes) > 0 && !slices.ContainsFunc(medsPerSize, math.IsNaN) {
		score = stats.GeoMean(medsPerSize)
	}
	if len(few) > 0 {
		warns = append(warns, Warning{Code: WarnFewLaunches, Bytes: few,
			Message: fmt.Sprintf("%s cannot give a %s interval on the median at %s; %d are needed, so Lo and Hi are unknown",
				countLaunches(fewN), pct(opt.Confidence), nccl.FormatSizes(few, ", "), needCI)})
	}
	if len(spreadSizes) > 0 {
		warns = append(warns, Warning{Code: WarnHighSpread, Bytes: spreadSizes,
			Message: fmt.Sprintf("launch-to-launch spread (robust CV) is %s, above %.0f %%: small differences need many launches to resolve",
				strings.Join(spreadMsgs, ", "), opt.HighSpreadPct)})
	}
	return sizes, score, warns
}

// scoreWarnings adds to warns the outlier launches and launch scores in
// two groups, judged on log launch scores (the noise is multiplicative).
// index holds each score's launch index.
func scoreWarnings(scores []float64, index []int, opt Options, warns []Warning) []Warning {
	scoreLogs := logs(scores)
	if out := robustOutliers(scoreLogs, opt.OutlierZ); len(out) > 0 {
		med := Median(scores)
		var ls []int
		var parts []string
		for _, i := range out {
			ls = append(ls, index[i])
			parts = append(parts, fmt.Sprintf("launch %d scores ×%.2f the median", index[i], scores[i]/med))
		}
		warns = append(warns, Warning{Code: WarnOutliers, Launches: ls,
			Message: fmt.Sprintf("%s far from the others (%s): the medians and the rank test are robust to %s, but a disturbed fabric may be worth checking",
				plural(len(ls), "one launch is", fmt.Sprintf("%d launches are", len(ls))), strings.Join(parts, "; "),
				plural(len(ls), "it", "them"))})
	}
	if len(scoreLogs) >= minLaunchesForBimodal {
		slices.Sort(scoreLogs)
		if bimodal(scoreLogs, max(2, (len(scoreLogs)+9)/10)) {
			warns = append(warns, Warning{Code: WarnBimodal,
				Message: fmt.Sprintf("the %d launch scores fall in two groups: something changes between launches (placement, protocol, clocks) and the median hides it — look at the launches", len(scoreLogs))})
		}
	}
	return warns
}

// warnIterBimodal adds to warns the launches whose iterations fell in
// two groups at some size, when analyse found any.
func (a *analysis) warnIterBimodal(warns []Warning) []Warning {
	if len(a.iterBimodal) == 0 {
		return warns
	}
	var ls []int
	var bs []int64
	for _, r := range a.iterBimodal {
		ls = append(ls, r.launch)
		bs = append(bs, r.bytes)
	}
	ls = slices.Compact(ls) // iterBimodal is in launch order
	slices.Sort(bs)
	bs = slices.Compact(bs)
	return append(warns, Warning{Code: WarnBimodal, Launches: ls, Bytes: bs,
		Message: fmt.Sprintf("iterations fall in two groups inside %s at %s: the launch switched behaviour mid-run; its median may not describe either mode",
			plural(len(ls), "one launch", fmt.Sprintf("%d launches", len(ls))), nccl.FormatSizes(bs, ", "))})
}

// Thresholds of the robust rules; see robustOutliers and bimodal.
const (
	minLaunchesForSpread    = 5
	minLaunchesForOutliers  = 5
	minLaunchesForBimodal   = 10
	minIterationsForBimodal = 20
	minGroupIterations      = 5
	// scaleFloor is the smallest log-scale spread (1 %) the robust rules
	// assume, lest tiny differences look extreme.
	scaleFloor = 0.01
)

// robustOutliers returns the indices of values (log times) farther from
// their median than z·(1 + 6/n) robust standard deviations (1.4826·MAD,
// at least 1 %): Iglewicz and Hoaglin's modified z-score widened for small
// samples, which flags about 3 % of clean samples whatever n
// (TestWarningRates). Below 5 values nothing is flagged.
func robustOutliers(logs []float64, z float64) []int {
	n := len(logs)
	if n < minLaunchesForOutliers {
		return nil
	}
	s := slices.Sorted(slices.Values(logs))
	m := sortedMedian(s)
	sd := max(madToSD*mad(s, m, nil), scaleFloor)
	limit := z * (1 + 6/float64(n)) * sd
	var out []int
	for i, x := range logs {
		if math.Abs(x-m) > limit {
			out = append(out, i)
		}
	}
	return out
}

// bimodal reports whether sorted values v (log times) split into two
// groups far apart for their own spread: the exact 2-means split (groups
// of at least minGroup) whose means lie more than 4 + 25/n pooled
// within-group standard deviations (at least 1 %) apart, like Ashman's D.
// The threshold sits above a single normal sample's best split (99.5th
// percentile ≈6.5 at n = 10, ≈3.3 at 100).
func bimodal(v []float64, minGroup int) bool {
	n := len(v)
	if n < 2*minGroup || n < 4 {
		return false
	}
	// Shift by the median so the prefix sums of squares stay exact enough.
	c := v[n/2]
	var s1, q1, sAll, qAll float64
	for _, x := range v {
		sAll += x - c
		qAll += (x - c) * (x - c)
	}
	bestSS, bestGap := math.Inf(1), 0.0
	for k := 1; k < n; k++ {
		x := v[k-1] - c
		s1 += x
		q1 += x * x
		if k < minGroup || n-k < minGroup {
			continue
		}
		s2, q2 := sAll-s1, qAll-q1
		ss := q1 - s1*s1/float64(k) + q2 - s2*s2/float64(n-k)
		if ss < bestSS {
			bestSS, bestGap = ss, s2/float64(n-k)-s1/float64(k)
		}
	}
	if math.IsInf(bestSS, 1) {
		return false
	}
	sd := max(math.Sqrt(max(bestSS, 0)/float64(n-2)), scaleFloor)
	return bestGap > (4+25/float64(n))*sd
}

// quantileCI caches go-moremath's order-statistic interval of the median.
func quantileCI(n int, conf float64) stats.QuantileCIResult {
	key := ciKey{n, n, conf}
	if v, ok := medianCICache.Load(key); ok {
		return v.(stats.QuantileCIResult)
	}
	r := stats.QuantileCI(n, 0.5, conf)
	medianCICache.Store(key, r)
	return r
}

type ciKey struct {
	m, n int
	conf float64
}

var medianCICache sync.Map

// MinLaunchesForInterval is the fewest launches for which the per-size
// order-statistic interval of the median reaches opt.Confidence (6 at 95 %,
// 8 at 99 %). Below it SizeSummary.Lo and Hi are NaN.
func MinLaunchesForInterval(opt Options) int {
	opt, _ = opt.resolve()
	for n := 1; ; n++ {
		ci := quantileCI(n, opt.Confidence)
		if ci.LoOrder >= 1 && ci.HiOrder <= n {
			return n
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func countLaunches(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "launch", "launches"))
}

// pct writes a confidence like 0.95 as "95 %".
func pct(c float64) string {
	return vocab.Percent(c) + " %"
}
