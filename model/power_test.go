package model

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nccltune/nccltune/internal/vocab"
)

var powerFlag = flag.Bool("power", false, "compute the power table for docs/PERFORMANCE.md (slow: minutes)")

// powerAt is the fraction of reps in which Compare recommends a candidate
// with true speedup gain+1 over the baseline, n launches per arm, on the
// fabric-shaped generator with the given launch-to-launch spread.
func powerAt(spread, gain float64, n, reps int, seed uint64) float64 {
	f := spark4Fabric()
	f.launchSD = spread
	r := newRand(seed)
	rec := 0
	for range reps {
		if Compare(f.launches(r, n, 1), f.launches(r, n, 1+gain), band, DefaultOptions()).Recommend {
			rec++
		}
	}
	return float64(rec) / float64(reps)
}

// launchScoreSD measures the standard deviation of log launch scores the
// generator produces (launch offset plus what per-iteration jitter leaves
// in a per-launch median), for the normal-theory cross-check.
func launchScoreSD(spread float64) float64 {
	f := spark4Fabric()
	f.launchSD = spread
	f.pOutLaunch = 0
	r := newRand(3)
	var xs []float64
	for range 2000 {
		s, _ := LaunchScore(f.launch(r, 1), band)
		xs = append(xs, math.Log(s))
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// noether is Noether's (1987) sample size per arm for the two-sided
// Mann-Whitney test at alpha with the given power, when log launch scores
// are normal with standard deviation sd and shifted by log(1+gain):
// n = (z₁₋α/₂ + z_power)² / (6 (p − ½)²), p = Φ(δ / (sd √2)).
func noether(gain, sd, alpha, power float64) float64 {
	z := distuv.UnitNormal
	p := z.CDF(math.Log(1+gain) / (sd * math.Sqrt2))
	zz := z.Quantile(1-alpha/2) + z.Quantile(power)
	return zz * zz / (6 * (p - 0.5) * (p - 0.5))
}

// TestPowerTable prints, for true gains of 5, 10 and 20 % and launch-to-
// launch spreads of 0, 5 and 18 %, the fewest launches per arm with which
// Compare recommends the faster config in at least 80 % of replications.
// Run: go test ./model -run TestPowerTable -power -v
func TestPowerTable(t *testing.T) {
	t.Parallel()
	if !*powerFlag {
		t.Skip("slow; run with -power")
	}
	const reps, target = 400, 0.8
	type cell struct {
		spread, gain float64
		n            int
		power        float64
		curve        []string
		noether      float64
	}
	var cells []*cell
	for _, spread := range []float64{0, 0.05, 0.18} {
		for _, gain := range []float64{0.05, 0.10, 0.20} {
			cells = append(cells, &cell{spread: spread, gain: gain})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, c := range cells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			seed := uint64(500 + i)
			c.noether = noether(c.gain, launchScoreSD(c.spread), vocab.DefaultAlpha, target)
			// Double until the target is met, then bisect.
			lo, hi := MinLaunchesForDecision(DefaultOptions())-1, 0
			powers := map[int]float64{}
			at := func(n int) float64 {
				if p, ok := powers[n]; ok {
					return p
				}
				p := powerAt(c.spread, c.gain, n, reps, seed)
				powers[n] = p
				c.curve = append(c.curve, fmt.Sprintf("%d:%.2f", n, p))
				return p
			}
			for n := lo + 1; ; n *= 2 {
				if at(n) >= target {
					hi = n
					break
				}
				lo = n
				if n > 400 {
					hi = -1
					break
				}
			}
			for hi > 0 && hi-lo > 1 {
				mid := (lo + hi) / 2
				if at(mid) >= target {
					hi = mid
				} else {
					lo = mid
				}
			}
			c.n = hi
			c.power = powers[hi]
		}()
	}
	wg.Wait()
	var b strings.Builder
	fmt.Fprintf(&b, "| launch spread | true gain | launches per arm for 80 %% | power there | Noether (normal theory) |\n|---|---|---|---|---|\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "| %.0f %% | %.0f %% | %d | %.2f | %.0f |\n", 100*c.spread, 100*c.gain, c.n, c.power, math.Ceil(c.noether))
	}
	t.Log("\n" + b.String())
	for _, c := range cells {
		t.Logf("spread %.2f gain %.2f: %s", c.spread, c.gain, strings.Join(c.curve, " "))
	}
}
