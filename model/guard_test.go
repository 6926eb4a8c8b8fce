package model

import (
	"math"
	"math/rand"
	"testing"
)

// guardArm makes n launches with per-size medians base[size]·factor and
// multiplicative launch noise of sd.
func guardArm(rng *rand.Rand, n int, base map[int64]float64, factor, sd float64) []Launch {
	out := make([]Launch, n)
	for i := range out {
		off := math.Exp(rng.NormFloat64() * sd)
		l := Launch{Times: map[int64][]float64{}}
		for s, t := range base {
			l.Times[s] = []float64{t * factor * off}
		}
		out[i] = l
	}
	return out
}

func TestCompareGuards(t *testing.T) {
	t.Parallel()
	base := map[int64]float64{1 << 20: 100, 2 << 20: 200, 4 << 20: 400}
	sizes := []int64{1 << 20, 2 << 20, 4 << 20}
	opt := DefaultOptions()
	for _, tc := range []struct {
		name       string
		factors    []float64 // candidate time ÷ baseline time, per guarded op
		wantSlower []bool
	}{
		{"none slower", []float64{1, 1, 1}, []bool{false, false, false}},
		{"one 25% slower", []float64{1, 1.25, 1}, []bool{false, true, false}},
		// Slower, and significantly, but within the minimum effect: reported, not refused.
		{"2% slower", []float64{1.02, 1, 1}, []bool{false, false, false}},
		{"faster", []float64{0.8, 0.8, 0.8}, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(7))
			var in []GuardInput
			for i, f := range tc.factors {
				in = append(in, GuardInput{Name: string(rune('a' + i)), Sizes: sizes,
					Baseline: guardArm(rng, 4, base, 1, 0.01), Candidate: guardArm(rng, 4, base, f, 0.01)})
			}
			rs := CompareGuards(in, opt)
			for i, r := range rs {
				if r.Slower != tc.wantSlower[i] {
					t.Errorf("op %s (×%.2f): Slower %v, want %v (speedup %.3f p %.4g level %.4g)", r.Name, tc.factors[i], r.Slower, tc.wantSlower[i], r.Speedup, r.P, r.Level)
				}
				if want := 1 / tc.factors[i]; math.Abs(r.Speedup-want) > 0.03 || !(r.Lo <= r.Speedup && r.Speedup <= r.Hi) {
					t.Errorf("op %s: speedup %.3f [%.3f, %.3f], want about %.3f inside its interval", r.Name, r.Speedup, r.Lo, r.Hi, want)
				}
			}
		})
	}
}

// The worst size is named: a slowdown at one size only.
func TestCompareGuardsWorstSize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	sizes := []int64{1 << 20, 2 << 20}
	b := guardArm(rng, 5, map[int64]float64{1 << 20: 100, 2 << 20: 200}, 1, 0.01)
	c := guardArm(rng, 5, map[int64]float64{1 << 20: 150, 2 << 20: 200}, 1, 0.01)
	r := CompareGuards([]GuardInput{{Name: "broadcast", Sizes: sizes, Baseline: b, Candidate: c}}, DefaultOptions())[0]
	if r.Worst != 1<<20 || math.Abs(r.WorstSpeedup-2.0/3) > 0.02 || !r.Slower {
		t.Errorf("worst %d ×%.3f slower %v, want 1M ×0.667 slower", r.Worst, r.WorstSpeedup, r.Slower)
	}
}

// Holm holds the family's error rate: with no true slowdown, refusing for
// any of 5 guarded ops happens in at most about alpha of the studies.
func TestCompareGuardsFamilyErrorRate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	base := map[int64]float64{1 << 20: 100}
	opt := DefaultOptions()
	opt.MinEffect = 1e-9 // the test alone decides
	const trials = 1000
	refused := 0
	for k := 0; k < trials; k++ {
		var in []GuardInput
		for i := 0; i < 5; i++ {
			in = append(in, GuardInput{Name: "op", Sizes: []int64{1 << 20},
				Baseline: guardArm(rng, 4, base, 1, 0.1), Candidate: guardArm(rng, 4, base, 1, 0.1)})
		}
		for _, r := range CompareGuards(in, opt) {
			if r.Slower {
				refused++
				break
			}
		}
	}
	if rate := float64(refused) / trials; rate > 0.07 {
		t.Errorf("family-wise false refusal rate %.3f, want ≤ alpha 0.05 (+ sampling error)", rate)
	}
}

// A size's Upper bound is a one-sided confidence bound on the time ratio:
// it falls below the true ratio in at most about BoundAlpha of the
// studies (coverage), so "Upper < 1.05" ships a truly 7.4 % slower size
// (the simulated loopback's alltoall 8M) almost never, while a size the
// candidate leaves as fast is shown under 1.05 with enough launches.
func TestCompareGuardsUpperBound(t *testing.T) {
	t.Parallel()
	base := map[int64]float64{8 << 20: 3000}
	sizes := []int64{8 << 20}
	for _, tc := range []struct {
		name   string
		factor float64 // candidate time ÷ baseline time
		n      int     // launches per arm
		alpha  float64 // BoundAlpha
		// below is the threshold; want the share of studies whose Upper is
		// below it within [lo, hi].
		below, lo, hi float64
	}{
		{"covers the truth", 1.074, 16, 0.05, 1.074, 0, 0.07},
		{"covers at a smaller alpha", 1.074, 16, 0.05 / 3, 1.074, 0, 0.03},
		{"a 7.4% slowdown is not shown under 5%", 1.074, 16, 0.05 / 3, 1.05, 0, 0.01},
		// 0.87 measured: the 3rd look (24 per arm) decides most.
		{"no slowdown is shown under 5%", 1, 24, 0.05 / 3, 1.05, 0.8, 1},
		{"a faster size is shown under 5% at once", 0.8, 8, 0.05 / 3, 1.05, 0.99, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(11))
			const trials = 2000
			below := 0
			for k := 0; k < trials; k++ {
				in := []GuardInput{{Name: "alltoall", Sizes: sizes, BoundAlpha: tc.alpha,
					Baseline: guardArm(rng, tc.n, base, 1, 0.05), Candidate: guardArm(rng, tc.n, base, tc.factor, 0.05)}}
				if CompareGuards(in, DefaultOptions())[0].Sizes[0].Upper < tc.below {
					below++
				}
			}
			if share := float64(below) / trials; share < tc.lo || share > tc.hi {
				t.Errorf("Upper < %.3f in %.3f of studies, want within [%.2f, %.2f]", tc.below, share, tc.lo, tc.hi)
			}
		})
	}
	one := []GuardInput{{Name: "one launch", Sizes: sizes, Baseline: guardArm(rand.New(rand.NewSource(1)), 1, base, 1, 0.05), Candidate: guardArm(rand.New(rand.NewSource(2)), 4, base, 1, 0.05)}}
	if u := CompareGuards(one, DefaultOptions())[0].Sizes[0].Upper; !math.IsNaN(u) {
		t.Errorf("Upper with one baseline launch = %v, want NaN (no bound)", u)
	}
}
