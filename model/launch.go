package model

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Launch is one launch's measurements of one config: message size in bytes
// → per-iteration times in µs (a single value when only nccl-tests' summary
// time is known).
type Launch struct {
	Times map[int64][]float64
}

// SizeTimes is one message size of a launch record: its bytes and the
// times it measured in µs (benchfmt.Size is one).
type SizeTimes interface {
	Measured() (bytes int64, timesUS []float64)
}

// LaunchOf converts one launch's recorded sizes into the statistics'
// input, every cycle of a size together; a size that measured nothing is
// left out. It is the only such conversion.
func LaunchOf[S SizeTimes](sizes []S) Launch {
	l := Launch{Times: map[int64][]float64{}}
	for _, z := range sizes {
		if b, xs := z.Measured(); len(xs) > 0 {
			l.Times[b] = append(l.Times[b], xs...)
		}
	}
	return l
}

// LaunchScore is the geometric mean over sizes of that launch's per-size
// median time (µs). It fails, naming the size, when a size has no samples
// or a time is NaN, infinite, zero or negative.
func LaunchScore(l Launch, sizes []int64) (float64, error) {
	if len(sizes) == 0 {
		return math.NaN(), errNoSizes
	}
	var buf []float64
	logSum := 0.0
	for _, b := range sizes {
		if b <= 0 {
			return math.NaN(), fmt.Errorf("message size %d is not positive — pass the band's sizes in bytes", b)
		}
		xs := l.Times[b]
		if len(xs) == 0 {
			return math.NaN(), fmt.Errorf("launch has no samples at %s — the benchmark's size range must cover the band", nccl.FormatSize(b))
		}
		if err := checkTimes(xs, b); err != nil {
			return math.NaN(), err
		}
		buf = append(buf[:0], xs...)
		slices.Sort(buf)
		logSum += math.Log(sortedMedian(buf))
	}
	return math.Exp(logSum / float64(len(sizes))), nil
}

var errNoSizes = fmt.Errorf("no message sizes to score — pass the band's sizes (e.g. nccl.Band.Sizes())")

// checkTimes rejects values no timer produces: they mean a parsing problem,
// and one of them would poison a median or a geometric mean silently.
func checkTimes(xs []float64, b int64) error {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return fmt.Errorf("launch has an impossible time %v µs at %s — times must be finite and positive; check the parsed output", x, nccl.FormatSize(b))
		}
	}
	return nil
}

// Median is the ordinary sample median: the middle value, or the mean of
// the two middle values of an even sample; NaN for an empty sample. It
// does not modify xs.
func Median(xs []float64) float64 {
	return sortedMedian(slices.Sorted(slices.Values(xs)))
}

// sortedMedian is Median of sorted s. Averaging equal middle values
// returns them exactly.
func sortedMedian(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	a, b := s[n/2-1], s[n/2]
	return a + (b-a)/2
}

// selectMedian is the median of non-empty xs, which it reorders: a
// quickselect with a median-of-three pivot, for planning's hot path.
func selectMedian(xs []float64) float64 {
	n := len(xs)
	hi := kth(xs, n/2)
	if n%2 == 1 {
		return hi
	}
	// The lower middle is the largest value left of position n/2.
	lo := xs[0]
	for _, x := range xs[1 : n/2] {
		lo = max(lo, x)
	}
	return lo + (hi-lo)/2
}

// kth reorders xs so that xs[k] is the value a sort would put there, with
// no larger value before it and no smaller after, and returns it.
func kth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// Median of three to the middle, as the pivot.
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// mad is the median absolute deviation of sorted s around its median m.
func mad(s []float64, m float64, buf []float64) float64 {
	buf = buf[:0]
	for _, x := range s {
		buf = append(buf, math.Abs(x-m))
	}
	slices.Sort(buf)
	return sortedMedian(buf)
}

// madToSD scales a MAD to estimate a normal standard deviation.
const madToSD = 1.4826

// robustCVPct is 100·1.4826·MAD/median of sorted s: a coefficient of
// variation that one wild value cannot inflate. NaN below two values.
func robustCVPct(s []float64) float64 {
	if len(s) < 2 {
		return math.NaN()
	}
	m := sortedMedian(s)
	return 100 * madToSD * mad(s, m, make([]float64, 0, len(s))) / m
}

// IterColumns are nccl-tests' per-iteration columns (-I 1) of one size's
// non-empty samples: min, max, p99 and the coefficient of variation in %
// (0 for one sample or all zeros).
func IterColumns(timesUS []float64) (minUS, maxUS, p99US, cvPct float64) {
	s := slices.Sorted(slices.Values(timesUS))
	minUS, maxUS, p99US = s[0], s[len(s)-1], stat.Quantile(0.99, stat.Empirical, s, nil)
	if mean := stat.Mean(s, nil); len(s) > 1 && mean > 0 {
		cvPct = 100 * stat.StdDev(s, nil) / mean
	}
	return minUS, maxUS, p99US, cvPct
}
