package model

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nccltune/nccltune/internal/vocab"
)

// ConfirmDesign is a group-sequential plan for confirming a candidate
// against the baseline: launches alternate (B C B C …) and the data are
// looked at when both arms reach Looks[k] launches. At look k the
// candidate is recommended when Compare, run at the two-sided level
// Levels[k], recommends it; the study may stop early for futility; the
// last look decides.
//
// The levels are the exact group-sequential boundaries (nominalLevels) of
// Hwang–Shih–DeCani alpha spending with γ = −2, α(t) = α (1 − e^{2t}) /
// (1 − e²): the looks' Mann-Whitney statistics are asymptotically a
// Brownian motion, so the chance that any look rejects a true null is α,
// and the exact discrete p of each look is conservative at that level
// (TestSequentialFalseRecommendations measures it). Futility stops never
// reject. The interval at look k is Compare's at 1 − Levels[k], a repeated
// confidence interval (Jennison and Turnbull 1989), honest when stopping
// early.
//
// γ = −2 rather than O'Brien–Fleming (γ ≈ −4) so that the first look can
// decide: the exact test's smallest p at 6 launches per arm is 0.0022,
// above O'Brien–Fleming's first level (0.0019 at 6 of 15) but below
// γ = −2's (0.0096), which still keeps most of α for the last look.
type ConfirmDesign struct {
	// Looks are the launches per arm at each look, increasing.
	Looks []int
	// Levels are the nominal two-sided levels of the looks (nominalLevels);
	// they sum to more than Alpha, the looks being correlated.
	Levels []float64
	// Alpha is the overall false-positive level.
	Alpha float64
}

// lookGrowth spaces the looks after the first: each at least two launches
// per arm past the one before and a quarter more; with exact boundaries a
// look costs the last one little level (TestSequentialTable).
const lookGrowth = 1.25

// PlanConfirm builds the design for at least first and at most maxN
// launches per arm: looks at first, then spaced by lookGrowth up to maxN.
// Fewer than first + 2 is one look at maxN: a fixed-size test at alpha.
func PlanConfirm(first, maxN int, alpha float64) ConfirmDesign {
	first = max(first, 1)
	maxN = max(maxN, first)
	looks := []int{first}
	if maxN < first+2 {
		looks[0] = maxN
	} else {
		for {
			prev := looks[len(looks)-1]
			next := max(prev+2, int(math.Round(float64(prev)*lookGrowth)))
			if next > maxN-2 {
				break
			}
			looks = append(looks, next)
		}
		looks = append(looks, maxN)
	}
	d := ConfirmDesign{Looks: looks, Alpha: alpha}
	d.Levels = d.levelsTo(len(looks)-1, maxN)
	return d
}

// levelsTo are the nominal levels of the looks up to look k, taken at n
// launches per arm instead of Looks[k], spending all of alpha at k.
func (d ConfirmDesign) levelsTo(k, n int) []float64 {
	maxN := float64(d.MaxLaunches())
	ts := make([]float64, k+1)
	cum := make([]float64, k+1)
	for i := 0; i < k; i++ {
		ts[i] = float64(d.Looks[i]) / maxN
		cum[i] = spent(d.Alpha, ts[i])
	}
	ts[k], cum[k] = float64(n)/maxN, d.Alpha
	if k > 0 && n <= d.Looks[k-1] {
		// No launch since the look before: what is left of alpha is spent
		// by the union bound on top of the earlier looks (cum[k-1]).
		levels := nominalLevels(ts[:k], cum[:k])
		return append(levels, d.Alpha-cum[k-1])
	}
	return nominalLevels(ts, cum)
}

// spendGamma is the Hwang–Shih–DeCani spending parameter (see
// ConfirmDesign): −4 is close to O'Brien–Fleming, 1 to Pocock.
const spendGamma = -2.0

// spent is the part of a two-sided alpha spent by information fraction t:
// the Hwang–Shih–DeCani function α (1 − e^{−γt}) / (1 − e^{−γ}).
func spent(alpha, t float64) float64 {
	if t >= 1 {
		return alpha
	}
	if t <= 0 {
		return 0
	}
	return alpha * (1 - math.Exp(-spendGamma*t)) / (1 - math.Exp(-spendGamma))
}

// CanDecide reports whether the design's last look can recommend at all:
// whether the smallest exact p at its launches per arm, 2/C(2n, n), is
// below the level left to it.
func (d ConfirmDesign) CanDecide() bool {
	n := d.MaxLaunches()
	return 2*uCDF(n, n, 0) < d.Levels[len(d.Levels)-1]
}

// MaxLaunches is the most launches per arm the design plans.
func (d ConfirmDesign) MaxLaunches() int { return d.Looks[len(d.Looks)-1] }

// String is "looks at 6, 9, 13 launches per arm (levels 0.0011, 0.016, 0.033)".
func (d ConfirmDesign) String() string {
	looks, levels := make([]string, len(d.Looks)), make([]string, len(d.Levels))
	for i, n := range d.Looks {
		looks[i] = fmt.Sprintf(" %d", n)
	}
	for i, l := range d.Levels {
		levels[i] = fmt.Sprintf(" %.2g", l)
	}
	return "looks at" + strings.Join(looks, ",") + " launches per arm (levels" + strings.Join(levels, ",") + ")"
}

// Look is the verdict at one look of a ConfirmDesign.
type Look struct {
	// Comparison is Compare at the look's nominal level.
	Comparison
	// Stop is true when the confirmation ends here: a recommendation, a
	// significant slowdown, futility, or the last look.
	Stop bool
	// Futile: it stopped because the data already exclude a gain of MinEffect.
	Futile bool
}

// Decide judges look k (0-based) of the design on the launches so far.
// final (the budget or time ran out) spends here what is left of alpha.
func (d ConfirmDesign) Decide(k int, baseline, candidate []Launch, sizes []int64, opt Options, final bool) Look {
	opt, _ = opt.resolve()
	k = min(max(k, 0), len(d.Looks)-1)
	last := final || k == len(d.Looks)-1
	level := d.Levels[k]
	if final && k < len(d.Looks)-1 {
		// Ended early: this look spends what is left of alpha.
		level = d.levelsTo(k, min(len(baseline), len(candidate)))[k]
	}
	at := opt
	at.Alpha, at.Confidence = level, 1-level
	lk := Look{Comparison: Compare(baseline, candidate, sizes, at)}
	switch {
	case lk.Recommend, lk.Slower, last:
		lk.Stop = true
	default:
		// Futility (non-binding): the plain (1 − Alpha) interval already
		// lies below the minimum effect.
		plain := Compare(baseline, candidate, sizes, opt)
		if plain.CIOK && plain.Hi < 1+opt.MinEffect {
			lk.Stop, lk.Futile = true, true
			lk.Verdict = vocab.VerdictFutile
			// Report the interval that decided: the look's own may not exist.
			lk.Lo, lk.Hi, lk.CIOK, lk.Confidence, lk.CILevel = plain.Lo, plain.Hi, true, plain.Confidence, plain.CILevel
			lk.Reason = fmt.Sprintf("keep the baseline: after %d and %d launches the %s interval on the speedup, %.3f–%.3f, already excludes the %.0f %% minimum effect",
				plain.BaselineN, plain.CandidateN, pct(opt.Confidence), plain.Lo, plain.Hi, 100*opt.MinEffect)
		}
	}
	return lk
}

// PlanLaunches is the launches per arm a fixed-size two-sided Mann-Whitney
// test at alpha needs for the given power when log launch scores are
// normal with standard deviation sigma and the candidate is faster by gain
// (0.1 = 10 %): Noether's (1987) formula
// n = (z₁₋α/₂ + z_power)² / (6 (p − ½)²), p = Φ(log(1+gain) / (σ√2)).
// It returns math.MaxInt32 when gain ≤ 0.
func PlanLaunches(sigma, gain, alpha, power float64) int {
	if !(gain > 0) {
		return math.MaxInt32
	}
	sigma = max(sigma, scaleFloor)
	z := distuv.UnitNormal
	p := z.CDF(math.Log1p(gain) / (sigma * math.Sqrt2))
	zz := z.Quantile(1-alpha/2) + z.Quantile(power)
	n := zz * zz / (6 * (p - 0.5) * (p - 0.5))
	if n > math.MaxInt32/2 {
		return math.MaxInt32
	}
	// The formula never goes below zz²/1.5; the exact test needs only
	// MinLaunchesForDecision.
	if n <= math.Ceil(zz*zz/1.5)+0.5 {
		return MinLaunchesForDecision(DefaultOptions())
	}
	return int(math.Ceil(n))
}

// PooledSD is the pooled within-group standard deviation of groups of
// values (each config's log launch scores). df is the degrees of freedom
// (0: no estimate, and sd is NaN).
func PooledSD(groups [][]float64) (sd float64, df int) {
	ss := 0.0
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		m := mean(g)
		for _, x := range g {
			ss += (x - m) * (x - m)
		}
		df += len(g) - 1
	}
	if df == 0 {
		return math.NaN(), 0
	}
	return math.Sqrt(ss / float64(df)), df
}
