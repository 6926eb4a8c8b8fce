package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ConfirmDesign is a group-sequential plan for confirming a candidate
// against the baseline: launches alternate (B C B C …) and the data are
// looked at when both arms reach Looks[k] launches. At look k the
// candidate is recommended when Compare, run at the nominal two-sided level
// Levels[k], recommends it; the study may also stop early when the data
// already exclude a gain worth recommending (futility). The last look
// decides whatever the data say.
//
// Validity. The levels come from alpha spending (Lan and DeMets 1983)
// with the Hwang–Shih–DeCani function of γ = −2,
// α(t) = α (1 − e^{2t}) / (1 − e²), t the fraction of the planned
// launches, and each look is given the increment α(tₖ) − α(tₖ₋₁). By the
// union bound the chance that any look rejects a true null is at most
// Σ increments = α, whatever the correlation between looks and whatever the
// (exact, discrete) distribution of the Mann-Whitney statistic, so the
// false-recommendation rate stays at or below α (below α/2 in practice:
// only rejections in the candidate's favour recommend). Futility stops
// never reject, so they cannot raise it. The interval reported at look k is
// Compare's rank interval at 1 − Levels[k]: with the same union bound, the
// intervals of all looks hold the true shift together with probability at
// least 1 − α (a repeated confidence interval, Jennison and Turnbull 1989),
// so stopping early does not make the reported interval dishonest.
//
// Why γ = −2 and not O'Brien–Fleming (γ ≈ −4): the first look must be able
// to decide. The smallest p the exact test reaches with 6 launches per arm
// is 2/924 = 0.0022; O'Brien–Fleming gives a first look at 6 of 15
// launches 0.0019 and at 6 of 18 0.0007, so no confirmation could stop
// there however clear the gain (a ×1.44 gain on the replayed loopback
// fabric ran 15 + 15 launches for p = 1e-8). γ = −2 gives 0.0096 and
// 0.0074 there (a first look with at most one of 36 pairs out of order
// decides), and still keeps most of α for the last look (0.034 of 0.05
// with three looks, 0.037 with two), so the last look keeps most of the
// power of a fixed test of the same size.
type ConfirmDesign struct {
	// Looks are the launches per arm at each look, increasing.
	Looks []int
	// Levels are the nominal two-sided significance levels of the looks;
	// they sum to Alpha.
	Levels []float64
	// Alpha is the overall false-positive level.
	Alpha float64
}

// maxLooks bounds the looks of a design: each look costs a little of the
// last look's level (0.05 → 0.037 with two looks, 0.034 with three).
const maxLooks = 3

// PlanConfirm builds the design for at least first and at most maxN
// launches per arm: looks at first, then spaced geometrically up to maxN
// (two looks from maxN = 2·first, three from 3·first). Below 2·first it is
// one look at maxN: a fixed-size test at alpha.
func PlanConfirm(first, maxN int, alpha float64) ConfirmDesign {
	first = max(first, 1)
	maxN = max(maxN, first)
	looks := []int{first}
	if maxN < 2*first {
		// Too close for an early look to be worth the level it costs:
		// one look with every planned launch.
		looks[0] = maxN
	} else {
		// Three looks when maxN is at least 3× first, two otherwise.
		k := 2
		if maxN >= 3*first {
			k = maxLooks
		}
		ratio := math.Pow(float64(maxN)/float64(first), 1/float64(k-1))
		for i := 1; i < k; i++ {
			n := int(math.Round(float64(first) * math.Pow(ratio, float64(i))))
			if i == k-1 {
				n = maxN
			}
			if n > looks[len(looks)-1] {
				looks = append(looks, n)
			}
		}
	}
	d := ConfirmDesign{Looks: looks, Alpha: alpha}
	sofar := 0.0
	for i, n := range looks {
		s := spent(alpha, float64(n)/float64(maxN))
		if i == len(looks)-1 {
			s = alpha
		}
		d.Levels = append(d.Levels, s-sofar)
		sofar = s
	}
	return d
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
// whether the exact two-sided Mann-Whitney p at its launches per arm can
// go below the level left to it (2/C(2n, n) with every launch of one arm
// faster than every launch of the other). A design that cannot is not
// worth a launch: the budget left cannot decide.
func (d ConfirmDesign) CanDecide() bool {
	n := d.MaxLaunches()
	spentBefore := 0.0
	for _, l := range d.Levels[:len(d.Levels)-1] {
		spentBefore += l
	}
	return 2*uCDF(n, n, 0) < d.Alpha-spentBefore
}

// MaxLaunches is the most launches per arm the design plans.
func (d ConfirmDesign) MaxLaunches() int { return d.Looks[len(d.Looks)-1] }

// String is "looks at 6, 9, 13 launches per arm (levels 0.0011, 0.016, 0.033)".
func (d ConfirmDesign) String() string {
	s := "looks at"
	for i, n := range d.Looks {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", n)
	}
	s += " launches per arm (levels"
	for i, l := range d.Levels {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %.2g", l)
	}
	return s + ")"
}

// Look is the verdict at one look of a ConfirmDesign.
type Look struct {
	// Comparison is Compare at the look's nominal level: its interval is the
	// look's repeated confidence interval, its Recommend the decision.
	Comparison
	// Level is the nominal two-sided level the look was tested at.
	Level float64
	// Stop is true when the confirmation ends here: a recommendation, a
	// significant slowdown, futility, or the last look.
	Stop bool
	// Futile is true when it stopped because the data already exclude a
	// gain of MinEffect (the candidate cannot be worth recommending).
	Futile bool
	// Last is true when this was the design's last look (or the budget
	// ran out before it).
	Last bool
}

// Decide judges look k (0-based) of the design on the launches so far.
// final forces the last look's rule (the budget or the time ran out
// early): whatever of alpha the earlier looks did not spend is spent here,
// which keeps the union bound.
func (d ConfirmDesign) Decide(k int, baseline, candidate []Launch, sizes []int64, opt Options, final bool) Look {
	opt, _ = opt.resolve()
	k = min(max(k, 0), len(d.Looks)-1)
	last := final || k == len(d.Looks)-1
	level := d.Levels[k]
	if last {
		spent := 0.0
		for _, l := range d.Levels[:k] {
			spent += l
		}
		level = d.Alpha - spent
	}
	at := opt
	at.Alpha, at.Confidence = level, 1-level
	lk := Look{Comparison: Compare(baseline, candidate, sizes, at), Level: level, Last: last}
	switch {
	case lk.Recommend, lk.Slower, last:
		lk.Stop = true
	default:
		// Futility (non-binding): the plain (1 − Alpha) interval already
		// lies below the minimum effect. Stopping here never recommends,
		// so it cannot raise the false-recommendation rate.
		plain := Compare(baseline, candidate, sizes, opt)
		if plain.CIOK && plain.Hi < 1+opt.MinEffect {
			lk.Stop, lk.Futile = true, true
			lk.Verdict = VerdictFutile
			// The interval that decided is the one reported: the look's own
			// (at its far smaller level) may not exist yet at these counts,
			// and a study would store [NaN, NaN] beside a reason quoting
			// this one.
			lk.Lo, lk.Hi, lk.CIOK, lk.Confidence = plain.Lo, plain.Hi, true, plain.Confidence
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
// docs/PERFORMANCE.md shows it agrees with the simulated power of Compare
// within about 10 %. It returns math.MaxInt32 when gain ≤ 0.
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
	// However large the gain, the formula never goes below zz²/1.5 (p → 1),
	// where the exact test needs only MinLaunchesForDecision: a gain that
	// large is planned at that floor.
	if n <= math.Ceil(zz*zz/1.5)+0.5 {
		return MinLaunchesForDecision(DefaultOptions())
	}
	return int(math.Ceil(n))
}

// PooledSD is the pooled within-group standard deviation of groups of
// values (each config's log launch scores): the launch-to-launch spread
// with each config's own mean removed. Groups of one value carry no
// information about it. df is the degrees of freedom (0: no estimate, and
// sd is NaN).
func PooledSD(groups [][]float64) (sd float64, df int) {
	ss := 0.0
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		mean := 0.0
		for _, x := range g {
			mean += x
		}
		mean /= float64(len(g))
		for _, x := range g {
			ss += (x - mean) * (x - mean)
		}
		df += len(g) - 1
	}
	if df == 0 {
		return math.NaN(), 0
	}
	return math.Sqrt(ss / float64(df)), df
}
