package model

import (
	"math"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, math.NaN()},
		{"one", []float64{7}, 7},
		{"odd unsorted", []float64{5, 1, 3}, 3},
		{"even is the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"identical values come back exactly", []float64{0.1, 0.1, 0.1, 0.1}, 0.1},
		{"even with equal middles", []float64{1, 2, 2, 9}, 2},
		{"outlier does not move it", []float64{10, 11, 12, 1e9}, 11.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got := Median(tc.in)
			if !sameFloat(got, tc.want) {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("Median modified its input: %v became %v", in, tc.in)
			}
		})
	}
}

// The ordinary median must agree with go-moremath's R8 quantile at 0.5
// (the documented equivalence), up to R8's floating-point interpolation.
func TestMedianAgreesWithMoremathR8(t *testing.T) {
	t.Parallel()
	r := newRand(7)
	for n := 1; n <= 41; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 * math.Exp(r.NormFloat64())
		}
		want := stats.Sample{Xs: xs}.Quantile(0.5)
		if got := Median(xs); math.Abs(got-want) > 1e-9*want {
			t.Errorf("n=%d: Median = %v, moremath R8 = %v", n, got, want)
		}
	}
}

// selectMedian (planning's linear-time path) must equal the sorting one
// on every shape: odd, even, ties, sorted, reversed, constant.
func TestSelectMedian(t *testing.T) {
	t.Parallel()
	r := newRand(9)
	shapes := map[string]func(n int) []float64{
		"random": func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = r.NormFloat64()
			}
			return xs
		},
		"ties": func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(r.IntN(3))
			}
			return xs
		},
		"sorted": func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(i)
			}
			return xs
		},
		"reversed": func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(n - i)
			}
			return xs
		},
		"constant": func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = 2.5
			}
			return xs
		},
	}
	for name, gen := range shapes {
		for n := 1; n <= 60; n++ {
			for rep := 0; rep < 5; rep++ {
				xs := gen(n)
				want := Median(xs)
				if got := selectMedian(slices.Clone(xs)); got != want {
					t.Fatalf("%s n=%d: selectMedian = %v, Median = %v (%v)", name, n, got, want, xs)
				}
			}
		}
	}
}

func sameFloat(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

func near(a, b, rel float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}
