package model

import (
	"fmt"
	"math"
	"testing"
)

// replications is the 1000, cut to 200 under -short.
func replications() int {
	if testing.Short() {
		return 200
	}
	return 1000
}

// TestSpeedupIntervalCoverage: on synthetic data shaped like the simulated
// fabric, with a true speedup of 1.10 by construction, the nominal 95 %
// interval must cover 1.10 in at least 93 % of replications at 5 and 10
// launches per arm, and must not be uselessly wide (coverage at most 99 %).
// At 3 launches per arm no 95 % rank interval exists: every replication
// must refuse (CIOK false, NaN bounds, a ci-unavailable warning) and none
// may recommend. Run with launch-to-launch spreads of 5 % and 18 %.
func TestSpeedupIntervalCoverage(t *testing.T) {
	t.Parallel()
	const truth = 1.10
	reps := replications()
	for _, spread := range []float64{0.05, 0.18} {
		for _, n := range []int{3, 5, 10} {
			t.Run(fmt.Sprintf("spread=%.0f%%/n=%d", 100*spread, n), func(t *testing.T) {
				t.Parallel()
				f := spark4Fabric()
				f.launchSD = spread
				r := newRand(uint64(1000*n) + uint64(100*spread))
				covered, refused, outside, recommended := 0, 0, 0, 0
				for range reps {
					c := Compare(f.launches(r, n, 1), f.launches(r, n, truth), band, DefaultOptions())
					if c.Recommend {
						recommended++
					}
					if !c.CIOK {
						refused++
						if !math.IsNaN(c.Lo) || !math.IsNaN(c.Hi) || findWarning(c.Warnings, WarnNoCI) == nil {
							t.Fatalf("refusal without NaN bounds and a warning: %+v", c)
						}
						continue
					}
					if c.Lo <= truth && truth <= c.Hi {
						covered++
					}
					if c.Speedup < c.Lo || c.Speedup > c.Hi {
						outside++
					}
				}
				if n == 3 {
					if refused != reps || recommended != 0 {
						t.Errorf("3 per arm: refused %d of %d, recommended %d; want all refused, none recommended", refused, reps, recommended)
					}
					return
				}
				if refused != 0 {
					t.Fatalf("refused %d of %d intervals at %d per arm", refused, reps, n)
				}
				cov := float64(covered) / float64(reps)
				t.Logf("spread %.0f %%, %d per arm: coverage %.3f, band-score ratio outside the interval %d times, recommended %d of %d",
					100*spread, n, cov, outside, recommended, reps)
				if cov < 0.93 || cov > 0.99 {
					t.Errorf("coverage of the 95 %% interval %.3f, want within [0.93, 0.99]", cov)
				}
				if float64(outside) > 0.01*float64(reps) {
					t.Errorf("the band-score ratio fell outside its interval in %d of %d replications", outside, reps)
				}
			})
		}
	}
}

// TestSelfComparisonFalseDiscoveries: a config compared with itself (true
// speedup 1) must be recommended in at most 5 % of replications, and the
// test must hold its level (significant at most ≈5 %).
func TestSelfComparisonFalseDiscoveries(t *testing.T) {
	t.Parallel()
	reps := replications()
	for _, tc := range []struct {
		spread float64
		n      int
	}{{0.05, 5}, {0.05, 10}, {0.18, 10}} {
		t.Run(fmt.Sprintf("spread=%.0f%%/n=%d", 100*tc.spread, tc.n), func(t *testing.T) {
			t.Parallel()
			f := spark4Fabric()
			f.launchSD = tc.spread
			r := newRand(uint64(77 + tc.n))
			rec, sig, slower := 0, 0, 0
			for range reps {
				c := Compare(f.launches(r, tc.n, 1), f.launches(r, tc.n, 1), band, DefaultOptions())
				if c.Recommend {
					rec++
				}
				if c.Significant {
					sig++
				}
				if c.Slower {
					slower++
				}
			}
			t.Logf("spread %.0f %%, %d per arm: recommended %d, significant %d, slower %d of %d", 100*tc.spread, tc.n, rec, sig, slower, reps)
			if float64(rec) > 0.05*float64(reps) {
				t.Errorf("recommended a change in %d of %d self-comparisons (> 5 %%)", rec, reps)
			}
			// The exact test's size is below alpha; allow sampling error.
			if float64(sig) > 0.07*float64(reps) {
				t.Errorf("significant in %d of %d self-comparisons (> 7 %%): the test does not hold its level", sig, reps)
			}
		})
	}
}

// TestRecommendsRealGain: the other side of the false-discovery test — a
// real 20 % gain at the fabric's 5 % launch spread is recommended nearly
// always with 10 launches per arm, and a 20 % loss is flagged Slower.
func TestRecommendsRealGain(t *testing.T) {
	t.Parallel()
	f := spark4Fabric()
	r := newRand(5)
	const reps = 100
	rec, slow := 0, 0
	for range reps {
		if Compare(f.launches(r, 10, 1), f.launches(r, 10, 1.2), band, DefaultOptions()).Recommend {
			rec++
		}
		if Compare(f.launches(r, 10, 1), f.launches(r, 10, 1/1.2), band, DefaultOptions()).Slower {
			slow++
		}
	}
	if rec < 95 || slow < 95 {
		t.Errorf("20 %% gain recommended %d/%d, 20 %% loss flagged slower %d/%d; want ≥ 95 each", rec, reps, slow, reps)
	}
}

// TestWarningRates: the outlier and bimodality rules must stay quiet on
// clean fabric-shaped data and speak up on planted problems.
func TestWarningRates(t *testing.T) {
	t.Parallel()
	const reps = 300
	// count returns the summaries with an outlier warning (naming launch 0
	// when one is planted there), with a launch-level bimodal warning, and
	// the number of launches whose iterations were called bimodal.
	count := func(f fabric, n int, plantOutlier bool, seed uint64) (outl, bim, iterBim int) {
		r := newRand(seed)
		for range reps {
			ls := f.launches(r, n, 1)
			if plantOutlier {
				for _, xs := range ls[0].Times {
					for j := range xs {
						xs[j] *= 1.5
					}
				}
			}
			s := Summarize(ls, band, DefaultOptions())
			if w := findWarning(s.Warnings, WarnOutliers); w != nil && (!plantOutlier || w.Launches[0] == 0) {
				outl++
			}
			for _, w := range s.Warnings {
				if w.Code == WarnBimodal && w.Launches == nil {
					bim++
				}
				if w.Code == WarnBimodal && w.Launches != nil {
					iterBim += len(w.Launches)
				}
			}
		}
		return
	}
	clean := spark4Fabric()
	clean.pOutLaunch = 0
	for _, n := range []int{5, 10, 20} {
		o, b, ib := count(clean, n, false, 11)
		t.Logf("clean, %d launches: outlier warnings in %d, bimodal in %d of %d summaries; bimodal iterations in %d of %d launches",
			n, o, b, reps, ib, reps*n)
		if o > reps*6/100 || b > reps*3/100 || ib > reps*n/200 {
			t.Errorf("clean data, %d launches: outlier warnings %d, bimodal %d of %d summaries (want ≤ 6 %%, 3 %%); iteration-bimodal %d of %d launches (want ≤ 0.5 %%)",
				n, o, b, reps, ib, reps*n)
		}
	}
	o, _, _ := count(clean, 10, true, 12)
	t.Logf("a 1.5× launch among 10: flagged in %d of %d summaries", o, reps)
	if o < reps*70/100 {
		t.Errorf("a 1.5× launch among 10 at 5 %% spread was flagged in %d of %d summaries, want ≥ 70 %%", o, reps)
	}
	twoModes := clean
	twoModes.bimodal = 1.5
	_, b, _ := count(twoModes, 20, false, 13)
	t.Logf("two launch modes 1.5× apart, 20 launches: bimodal in %d of %d summaries", b, reps)
	if b < reps*90/100 {
		t.Errorf("launches in two modes 1.5× apart were called bimodal in %d of %d summaries of 20, want ≥ 90 %%", b, reps)
	}
	switching := clean
	switching.pOutIter, switching.outIter = 0.3, 2 // 30 % of iterations in a 2× mode
	_, _, ib := count(switching, 5, false, 14)
	t.Logf("iterations switching between modes 2× apart: %d of %d launches flagged", ib, reps*5)
	if ib < reps*5*90/100 {
		t.Errorf("iterations switching between two modes were found in %d of %d launches, want ≥ 90 %%", ib, reps*5)
	}
}
