package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nccltune/nccltune/internal/vocab"
)

// Comparison is the verdict on a candidate config against a baseline.
type Comparison struct {
	// Speedup is the baseline's band score ÷ the candidate's (Summary.ScoreUS):
	// above 1 the candidate is faster; 1.12 reads "12 % faster".
	Speedup float64 `json:"speedup"`
	// Lo and Hi bound the speedup with at least Options.Confidence: the
	// Hodges–Lehmann/Moses rank interval of the shift between log launch
	// scores, exponentiated. NaN when CIOK is false.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// CIOK is false when no interval of the promised coverage exists for
	// these numbers of launches (a "ci-unavailable" warning says why).
	CIOK bool `json:"ci_ok"`
	// Confidence is the exact coverage of [Lo, Hi] (≥ the one asked).
	Confidence float64 `json:"confidence"`
	// CILevel is the confidence asked of [Lo, Hi] (at a sequential look 1 −
	// its level), the level a printer names; set with or without an interval.
	CILevel float64 `json:"ci_level"`
	// SpeedupHL is the Hodges–Lehmann estimate (the median ratio over all
	// launch pairs), always inside [Lo, Hi].
	SpeedupHL float64 `json:"speedup_hl"`
	// P is the two-sided Mann-Whitney U p-value over launch scores; 1 when
	// no test is possible (an arm has no scored launch, or all scores tie).
	P float64 `json:"p"`
	// Significant is P < Alpha.
	Significant bool `json:"significant"`
	// Recommend: significant, in the candidate's favour, with an interval
	// above 1, and Speedup ≥ 1+MinEffect (see Compare).
	Recommend bool `json:"recommend"`
	// Slower: significant, in the baseline's favour, and
	// Speedup ≤ 1/(1+MinEffect) (used for guard sizes).
	Slower bool `json:"slower"`
	// BaselineN and CandidateN count the launches scored (valid at every size).
	BaselineN  int `json:"baseline_n"`
	CandidateN int `json:"candidate_n"`
	// Baseline and Candidate are the two configs' summaries.
	Baseline  Summary   `json:"baseline"`
	Candidate Summary   `json:"candidate"`
	Warnings  []Warning `json:"warnings,omitempty"`
	// Reason is one plain sentence: why recommend or not.
	Reason string `json:"reason"`
	// Verdict names the rule that decided, one of vocab.Verdict*.
	Verdict string `json:"verdict"`
}

// Compare decides whether the candidate config beats the baseline over the
// band's sizes. The launches should have been interleaved (A B A B …):
// Compare cannot see drift. Recommend is true if and only if
//
//  1. both arms have scored launches and the two-sided Mann-Whitney U test
//     over launch scores gives P < Alpha;
//  2. the candidate's launch scores are the lower ones (U statistic above
//     its null mean m·n/2);
//  3. the speedup interval exists at Options.Confidence (CIOK) and Lo > 1
//     (which follows from 1 and 2 at Confidence = 1−Alpha);
//  4. Speedup (band-score ratio) ≥ 1 + MinEffect.
//
// Otherwise Reason says which condition failed. Slower mirrors 1, 2 and 4:
// P < Alpha, the candidate's scores higher, Speedup ≤ 1/(1+MinEffect).
//
// The interval: of the m·n sorted differences xᵢ−yⱼ of baseline and
// candidate log scores, [d₍ₖ₎, d₍ₘₙ₊₁₋ₖ₎], k the largest count with
// P(U < k) ≤ (1−Confidence)/2 under U's exact null distribution (normal
// above 50 launches per arm). Where k would be 0 (3 and 3 launches at
// 95 %), CIOK is false, Lo and Hi are NaN, and a "ci-unavailable" warning
// names the launches needed.
func Compare(baseline, candidate []Launch, sizes []int64, opt Options) Comparison {
	opt, warns := opt.resolve()
	ab, ac := analyse(baseline, sizes, true), analyse(candidate, sizes, true)
	c := Comparison{Baseline: ab.summary(opt), Candidate: ac.summary(opt),
		Lo: math.NaN(), Hi: math.NaN(), Confidence: math.NaN(), CILevel: opt.Confidence, SpeedupHL: math.NaN(), P: 1}
	c.Warnings = warns
	c.addArmWarnings()
	xb, xc := c.Baseline.LaunchScores, c.Candidate.LaunchScores
	m, n := len(xb), len(xc)
	c.BaselineN, c.CandidateN = m, n
	c.Speedup = c.Baseline.ScoreUS / c.Candidate.ScoreUS
	if m == 0 || n == 0 {
		c.refuseNoData()
		return c
	}
	faster, slower, minP := c.test(xb, xc, opt)
	c.interval(xb, xc, opt)
	c.decide(faster, slower, minP, opt)
	return c
}

// addArmWarnings adds each arm's summary warnings, named by arm, except
// those about per-size medians' intervals, which play no part here.
func (c *Comparison) addArmWarnings() {
	for _, arm := range []struct {
		name string
		s    Summary
	}{{"baseline", c.Baseline}, {"candidate", c.Candidate}} {
		for _, w := range arm.s.Warnings {
			if w.Code == WarnFewLaunches || w.Code == WarnBadOptions {
				continue // per-size medians' intervals play no part here
			}
			w.Message = arm.name + ": " + w.Message
			c.Warnings = append(c.Warnings, w)
		}
	}
}

// refuseNoData is the verdict when an arm has no launch scored.
func (c *Comparison) refuseNoData() {
	m, n := c.BaselineN, c.CandidateN
	c.Speedup = math.NaN()
	who := "the baseline has"
	if n == 0 {
		who = "the candidate has"
		if m == 0 {
			who = "neither config has"
		}
	}
	c.Verdict = vocab.VerdictNoData
	c.Reason = "cannot compare: " + who + " no launch with valid times at every size of the band — measure it first"
	c.Warnings = append(c.Warnings, Warning{Code: WarnNoLaunches, Message: c.Reason})
}

// test runs the Mann-Whitney test on the launch scores. It returns the
// direction the ranks lean and the smallest p these sample sizes can
// reach, warning when that cannot be below alpha.
func (c *Comparison) test(xb, xc []float64, opt Options) (faster, slower bool, minP float64) {
	m, n := len(xb), len(xc)
	res, err := stats.MannWhitneyUTest(xb, xc, stats.LocationDiffers)
	switch {
	case errors.Is(err, stats.ErrSamplesEqual):
		c.P = 1 // every launch scored the same: no evidence of a difference
	case err != nil:
		c.P = 1 // cannot happen with non-empty samples; stay conservative
	default:
		c.P = res.P
		half := float64(m*n) / 2
		faster, slower = res.U > half, res.U < half
	}
	c.Significant = c.P < opt.Alpha
	minP = min(1, 2*uCDF(m, n, 0))
	if minP >= opt.Alpha {
		c.Warnings = append(c.Warnings, Warning{Code: WarnTooFewForDecision,
			Message: fmt.Sprintf("with %d and %d launches the Mann-Whitney test cannot reach p < %g (the smallest possible p is %.3g): measure at least %d launches of each",
				m, n, opt.Alpha, minP, MinLaunchesForDecision(opt))})
	}
	return faster, slower, minP
}

// interval computes the speedup's rank interval on log launch scores,
// warning when none exists or the band-score ratio lies outside it.
func (c *Comparison) interval(xb, xc []float64, opt Options) {
	m, n := len(xb), len(xc)
	iv := shiftInterval(logs(xb), logs(xc), opt.Confidence)
	c.SpeedupHL = math.Exp(iv.estimate)
	if iv.ok {
		c.CIOK = true
		c.Lo, c.Hi, c.Confidence = math.Exp(iv.lo), math.Exp(iv.hi), iv.coverage
		if c.Speedup < c.Lo || c.Speedup > c.Hi {
			c.Warnings = append(c.Warnings, Warning{Code: WarnEstimateOutsideCI,
				Message: fmt.Sprintf("the band-score ratio %.3f lies outside the launch-score interval [%.3f, %.3f]: the per-size medians and the launch scores tell different stories — look at the per-size spread",
					c.Speedup, c.Lo, c.Hi)})
		}
	} else {
		c.Warnings = append(c.Warnings, Warning{Code: WarnNoCI,
			Message: fmt.Sprintf("with %d and %d launches no %s interval on the speedup exists (the rank interval needs at least %d launches per arm): measure more launches",
				m, n, pct(opt.Confidence), minEqualForCI(opt.Confidence))})
	}
}

// decide gives the verdict and its reason (Compare's rule).
func (c *Comparison) decide(faster, slower bool, minP float64, opt Options) {
	m, n := c.BaselineN, c.CandidateN
	gain := c.Speedup - 1
	switch {
	case !c.Significant && minP >= opt.Alpha:
		c.Verdict = vocab.VerdictTooFew
		c.Reason = fmt.Sprintf("keep the baseline: %d and %d launches cannot show a significant difference at alpha %g whatever they measure — measure at least %d of each",
			m, n, opt.Alpha, MinLaunchesForDecision(opt))
	case !c.Significant:
		c.Verdict = vocab.VerdictNotSignificant
		c.Reason = fmt.Sprintf("keep the baseline: no significant difference (speedup %.3f%s, p = %.2g ≥ %.2g over %d and %d launches)",
			c.Speedup, c.ciText(opt.Confidence), c.P, opt.Alpha, m, n)
	case slower:
		c.Slower = c.Speedup <= 1/(1+opt.MinEffect)
		c.Verdict = vocab.VerdictSlightlySlower
		if c.Slower {
			c.Verdict = vocab.VerdictSlower
			c.Reason = fmt.Sprintf("keep the baseline: the candidate is %.1f %% slower (speedup %.3f%s, p = %.2g)",
				100*(1/c.Speedup-1), c.Speedup, c.ciText(opt.Confidence), c.P)
		} else {
			c.Reason = fmt.Sprintf("keep the baseline: the candidate is significantly but only slightly slower (speedup %.3f, p = %.2g), within the %.0f %% minimum effect",
				c.Speedup, c.P, 100*opt.MinEffect)
		}
	case !faster:
		c.Verdict = vocab.VerdictNoDirection
		c.Reason = fmt.Sprintf("keep the baseline: the test is significant (p = %.2g) but shows no direction", c.P)
	case !c.CIOK:
		c.Verdict = vocab.VerdictNoInterval
		c.Reason = fmt.Sprintf("keep the baseline: the candidate looks faster (p = %.2g) but no %s interval on the speedup exists with %d and %d launches",
			c.P, pct(opt.Confidence), m, n)
	case c.Lo <= 1:
		c.Verdict = vocab.VerdictIntervalHasOne
		c.Reason = fmt.Sprintf("keep the baseline: the candidate looks faster (p = %.2g) but the speedup interval%s still includes no change",
			c.P, c.ciText(opt.Confidence))
	case c.Speedup < 1+opt.MinEffect:
		c.Verdict = vocab.VerdictBelowMinEffect
		c.Reason = fmt.Sprintf("keep the baseline: the candidate is faster by %.1f %%%s (p = %.2g), below the %.0f %% minimum effect",
			100*gain, c.ciText(opt.Confidence), c.P, 100*opt.MinEffect)
	default:
		c.Recommend = true
		c.Verdict = vocab.VerdictRecommend
		c.Reason = fmt.Sprintf("recommend the candidate: %.1f %% faster (speedup %.3f%s, p = %.2g over %d and %d launches)",
			100*gain, c.Speedup, c.ciText(opt.Confidence), c.P, m, n)
	}
}

// ciText is ", 95 % CI 1.041–1.123" (the confidence asked; the exact
// coverage is in Confidence) or "" without an interval.
func (c Comparison) ciText(conf float64) string {
	if !c.CIOK {
		return ""
	}
	return fmt.Sprintf(", %s CI %.3f–%.3f", pct(conf), c.Lo, c.Hi)
}

// interval is the Hodges–Lehmann estimate and Moses interval of the shift
// x − y between two samples (log launch scores).
type interval struct {
	estimate, lo, hi, coverage float64
	ok                         bool
}

// shiftInterval computes the Hodges–Lehmann estimate (median of the m·n
// differences xᵢ − yⱼ) and, when one exists at conf, the Moses interval
// [d₍ₖ₎, d₍ₘₙ₊₁₋ₖ₎]. Both samples must be non-empty.
func shiftInterval(x, y []float64, conf float64) interval {
	m, n := len(x), len(y)
	diffs := make([]float64, 0, m*n)
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, a-b)
		}
	}
	slices.Sort(diffs)
	iv := interval{estimate: sortedMedian(diffs), lo: math.NaN(), hi: math.NaN(), coverage: math.NaN()}
	if k, cover := mosesK(m, n, conf); k >= 1 {
		iv.lo, iv.hi, iv.coverage, iv.ok = diffs[k-1], diffs[m*n-k], cover, true
	}
	return iv
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// exactULimit bounds the arm sizes for which the exact U distribution is
// used, as go-moremath's own test does (MannWhitneyExactLimit).
const exactULimit = 50

// uCDF is P(U ≤ u) under the null for arms of m and n, without ties.
func uCDF(m, n, u int) float64 {
	if m <= exactULimit && n <= exactULimit {
		return stats.UDist{N1: m, N2: n}.CDF(float64(u))
	}
	mu, sd := float64(m*n)/2, math.Sqrt(float64(m*n*(m+n+1))/12)
	return distuv.UnitNormal.CDF((float64(u) + 0.5 - mu) / sd)
}

// mosesK returns the rank k of the Moses interval for confidence conf and
// its exact coverage 1 − 2·P(U ≤ k−1), or k = 0 when none exists. Cached:
// planning asks for the same few (m, n) over and over.
func mosesK(m, n int, conf float64) (int, float64) {
	key := ciKey{m, n, conf}
	if v, ok := mosesCache.Load(key); ok {
		r := v.([2]float64)
		return int(r[0]), r[1]
	}
	tail := (1 - conf) / 2
	const eps = 1e-12 // P(U ≤ c) is a sum of floats; do not lose an exact tie with the tail
	// Largest c with P(U ≤ c) ≤ tail, by bisection on [−1, m·n/2]: the CDF
	// is monotone and each evaluation costs O(m·n·c).
	lo, hi := -1, m*n/2
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if uCDF(m, n, mid) <= tail+eps {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	k := lo + 1
	cover := math.NaN()
	if k >= 1 {
		cover = 1 - 2*uCDF(m, n, k-1)
	}
	mosesCache.Store(key, [2]float64{float64(k), cover})
	return k, cover
}

var mosesCache sync.Map

// minEqualForCI is the fewest launches per arm (equal arms) for which a
// speedup interval of confidence conf exists (4 at 95 %).
func minEqualForCI(conf float64) int {
	for n := 1; ; n++ {
		if k, _ := mosesK(n, n, conf); k >= 1 {
			return n
		}
	}
}

// MinLaunchesForDecision is the fewest launches per arm (both arms equal)
// with which Compare can recommend at all: the exact two-sided
// Mann-Whitney p can go below Alpha (its smallest value is 2/C(2n, n): 0.1
// at 3 per arm, 0.029 at 4) and the speedup interval exists at
// Confidence. It is 4 with the defaults and 5 at alpha 0.01. It is a floor,
// not a plan: at 4 per arm only a perfect separation of all launches is
// significant; docs/PERFORMANCE.md tabulates the launches needed for 80 %
// power.
func MinLaunchesForDecision(opt Options) int {
	opt, _ = opt.resolve()
	for n := 1; ; n++ {
		if 2*uCDF(n, n, 0) < opt.Alpha {
			return max(n, minEqualForCI(opt.Confidence))
		}
	}
}
