package model

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat/distuv"
)

// Group-sequential boundaries (Lan and DeMets 1983), as ldbounds and
// gsDesign compute them: the looks' standardized statistics behave like a
// Brownian motion S read at the information fractions tₖ, Zₖ = S(tₖ)/√tₖ.
// Look k's boundary cₖ is crossed at look k, the earlier ones not crossed,
// with the alpha spent there: found by carrying the density of S over the
// continuation region from look to look and bisecting for cₖ.

// boundaryGrid is the number of points (odd, for Simpson's rule) the
// density is carried on: 201 is within 2e-7 (relative) of 1601.
const boundaryGrid = 201

// nominalLevels are the two-sided nominal levels 2(1 − Φ(cₖ)) of looks at
// information fractions ts (increasing, in (0, 1]) whose cumulative
// two-sided alpha spent is cum (increasing). A look that spends nothing
// gets level 0.
func nominalLevels(ts, cum []float64) []float64 {
	// %v prints the shortest decimal that reads back as the same float64.
	key := fmt.Sprint(ts, cum)
	if levels, ok := levelsCache.Load(key); ok {
		return slices.Clone(levels.([]float64))
	}
	levels := computeNominalLevels(ts, cum)
	if levelsCached.Add(1) <= maxCachedLevels {
		levelsCache.Store(key, slices.Clone(levels))
	}
	return levels
}

// levelsCache keeps nominalLevels' results: a search plans the same few
// designs over and over, each some hundred thousand normal CDFs.
var levelsCache sync.Map // fmt.Sprint(ts, cum) → []float64

// levelsCached counts the entries stored, bounded by maxCachedLevels.
var (
	levelsCached    atomic.Int64
	maxCachedLevels int64 = 1024
)

// computeNominalLevels is nominalLevels without the cache.
func computeNominalLevels(ts, cum []float64) []float64 {
	z := distuv.UnitNormal
	levels := make([]float64, len(ts))
	var grid, dens []float64 // S at the previous look's grid points, and its density there (continuation only)
	prevT, prevCum := 0.0, 0.0
	for k, t := range ts {
		inc := cum[k] - prevCum
		if k == 0 {
			levels[0] = max(cum[0], 0)
			c := 40.0 // no boundary where nothing is spent
			if levels[0] > 0 {
				c = z.Quantile(1 - levels[0]/2)
			}
			grid, dens = firstDensity(c*math.Sqrt(t), t)
			prevT, prevCum = t, max(cum[0], 0)
			continue
		}
		sd := math.Sqrt(t - prevT)
		w := simpsonWeights(grid)
		// crossing is the probability of reaching |S(t)| ≥ b from the
		// continuation region of the previous look.
		crossing := func(b float64) float64 {
			p := 0.0
			for i, u := range grid {
				p += w[i] * dens[i] * (z.CDF((-b-u)/sd) + z.Survival((b-u)/sd))
			}
			return p
		}
		var b float64
		if inc <= 0 {
			b = 40 * math.Sqrt(t)
		} else {
			// The crossing probability falls as b rises: bisect on b/√t
			// until the midpoint is lo or hi, after which no step changes.
			lo, hi := 0.0, 40.0
			for range 100 {
				mid := (lo + hi) / 2
				if mid == lo || mid == hi {
					break
				}
				if crossing(mid*math.Sqrt(t)) > inc {
					lo = mid
				} else {
					hi = mid
				}
			}
			b = hi * math.Sqrt(t)
			levels[k] = 2 * z.Survival(hi)
		}
		grid, dens = nextDensity(grid, dens, w, b, sd)
		prevT, prevCum = t, cum[k]
	}
	return levels
}

// firstDensity is the density of S(t) ~ N(0, t) on a grid over (−b, b).
func firstDensity(b, t float64) (grid, dens []float64) {
	grid = linspace(-b, b, boundaryGrid)
	dens = make([]float64, len(grid))
	n := distuv.Normal{Mu: 0, Sigma: math.Sqrt(t)}
	for i, s := range grid {
		dens[i] = n.Prob(s)
	}
	return grid, dens
}

// nextDensity carries the density on grid (weights w) across an increment
// of standard deviation sd to a new grid over (−b, b): the density of S at
// the next look on the paths that did not cross any earlier boundary.
func nextDensity(grid, dens, w []float64, b, sd float64) ([]float64, []float64) {
	next := linspace(-b, b, boundaryGrid)
	out := make([]float64, len(next))
	norm := 1 / (sd * math.Sqrt(2*math.Pi))
	for j, s := range next {
		v := 0.0
		for i, u := range grid {
			d := (s - u) / sd
			v += w[i] * dens[i] * norm * math.Exp(-d*d/2)
		}
		out[j] = v
	}
	return next, out
}

// simpsonWeights are Simpson's-rule weights over an evenly spaced grid of
// odd length.
func simpsonWeights(grid []float64) []float64 {
	n := len(grid)
	h := (grid[n-1] - grid[0]) / float64(n-1)
	w := make([]float64, n)
	for i := range w {
		switch {
		case i == 0 || i == n-1:
			w[i] = h / 3
		case i%2 == 1:
			w[i] = 4 * h / 3
		default:
			w[i] = 2 * h / 3
		}
	}
	return w
}

func linspace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}
