package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestNominalLevelsPocock: Lan–DeMets's Pocock-type spending,
// α ln(1 + (e − 1) t), at five equally spaced looks gives the boundaries
// published for it (Reboussin, DeMets, Kim and Lan 2000, ldbounds):
// 2.4380, 2.4268, 2.4101, 2.3966, 2.3859 at two-sided α = 0.05.
func TestNominalLevelsPocock(t *testing.T) {
	t.Parallel()
	ts := []float64{0.2, 0.4, 0.6, 0.8, 1}
	var cum []float64
	for _, x := range ts {
		cum = append(cum, 0.05*math.Log(1+(math.E-1)*x))
	}
	want := []float64{2.4380, 2.4268, 2.4101, 2.3966, 2.3859}
	for i, l := range nominalLevels(ts, cum) {
		if c := distuv.UnitNormal.Quantile(1 - l/2); math.Abs(c-want[i]) > 0.001 {
			t.Errorf("look %d: boundary %.4f, want %.4f", i+1, c, want[i])
		}
	}
}

// TestNominalLevelsSpendAlpha: on a Brownian motion read at the looks of
// the designs a study uses, the levels' boundaries are crossed at each
// look with the probability the spending function gives it, and at some
// look with probability alpha (Monte Carlo, 200 000 paths: ±0.001). The
// union bound's levels (each look its increment) spend less.
func TestNominalLevelsSpendAlpha(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	for _, maxN := range []int{12, 20} {
		d := PlanConfirm(6, maxN, 0.05)
		const paths = 200000
		crossed := make([]int, len(d.Looks))
		for range paths {
			s, prev := 0.0, 0
			for k, n := range d.Looks {
				s += r.NormFloat64() * math.Sqrt(float64(n-prev))
				prev = n
				z := s / math.Sqrt(float64(n))
				if 2*distuv.UnitNormal.Survival(math.Abs(z)) <= d.Levels[k] {
					crossed[k]++
					break
				}
			}
		}
		total := 0
		for k, n := range d.Looks {
			total += crossed[k]
			want := spent(0.05, float64(n)/float64(maxN))
			if got := float64(total) / paths; math.Abs(got-want) > 0.0015 {
				t.Errorf("%s: crossed by look %d in %.4f of paths, want the %.4f spent there", d, k+1, got, want)
			}
		}
		gain := 0.0 // the most a look's level exceeds its increment
		before := 0.0
		for k, n := range d.Looks {
			now := spent(0.05, float64(n)/float64(maxN))
			gain = max(gain, d.Levels[k]-(now-before))
			before = now
		}
		if gain <= 0 {
			t.Errorf("%s: no look's level is above its increment: the exact boundaries gained nothing on the union bound", d)
		}
	}
}

// TestEarlyFinalLookSpendsTheRest: a confirmation the budget ends at a
// look before the design's last spends all of alpha there, at a level
// above both the planned look's and what the union bound would leave it,
// and a final look with no launch since the one before falls back to the
// union bound on what is left.
func TestEarlyFinalLookSpendsTheRest(t *testing.T) {
	t.Parallel()
	d := PlanConfirm(6, 20, 0.05)
	lv := d.levelsTo(2, 10)
	if !(lv[2] > d.Levels[2]) {
		t.Errorf("final at look 3 (10 per arm): level %.4f, not above the planned %.4f", lv[2], d.Levels[2])
	}
	if left := 0.05 - spent(0.05, 8.0/20); !(lv[2] >= left) {
		t.Errorf("final at look 3: level %.4f below the union bound's %.4f", lv[2], left)
	}
	same := d.levelsTo(2, 8)
	if want := 0.05 - spent(0.05, 8.0/20); math.Abs(same[2]-want) > 1e-12 {
		t.Errorf("final with no launch since look 2: level %.4f, want α − α(t₂) = %.4f", same[2], want)
	}
}

// TestPlanConfirmLevelsEverywhere: designs across what a study can plan
// (first look 2–10 per arm, up to search's 50 per arm, alpha 0.001–0.2)
// have finite levels in (0, alpha], and each look's level is at least the
// increment of alpha the union bound would give it: the exact boundaries
// never spend less than the union bound did.
func TestPlanConfirmLevelsEverywhere(t *testing.T) {
	t.Parallel()
	for _, alpha := range []float64{0.001, 0.01, 0.05, 0.2} {
		for first := 2; first <= 10; first += 2 {
			for _, maxN := range []int{first, first + 1, first + 2, 11, 12, 17, 20, 24, 31, 50} { // 50: search's maxConfirmLaunches
				if maxN < first {
					continue
				}
				d := PlanConfirm(first, maxN, alpha)
				before := 0.0
				for i, l := range d.Levels {
					if !(l > 0 && l <= alpha) {
						t.Fatalf("%s at alpha %g: look %d level %g", d, alpha, i, l)
					}
					now := spent(alpha, float64(d.Looks[i])/float64(maxN))
					if l < (now-before)*(1-1e-6) {
						t.Errorf("%s at alpha %g: look %d level %g below its increment %g", d, alpha, i, l, now-before)
					}
					before = now
				}
			}
		}
	}
}

// TestNominalLevelsCached: nominalLevels answers again from its cache
// with exactly what computeNominalLevels computes, and each caller gets a
// copy: changing one changes no later answer.
func TestNominalLevelsCached(t *testing.T) {
	d := PlanConfirm(6, 30, 0.05)
	ts := []float64{0.2, 0.4, 0.7, 1}
	cum := []float64{spent(0.05, 0.2), spent(0.05, 0.4), spent(0.05, 0.7), 0.05}
	want := computeNominalLevels(ts, cum)
	for i := 0; i < 3; i++ {
		got := nominalLevels(ts, cum)
		if !slices.Equal(got, want) {
			t.Fatalf("call %d: %v, want %v", i, got, want)
		}
		got[0] = -1 // a caller's change to its copy
	}
	again := PlanConfirm(6, 30, 0.05)
	if !slices.Equal(again.Levels, d.Levels) {
		t.Errorf("PlanConfirm again: %v, first %v", again.Levels, d.Levels)
	}
	again.Levels[0] = -1
	if PlanConfirm(6, 30, 0.05).Levels[0] == -1 {
		t.Error("a caller's change to its design reached the next caller")
	}
}
