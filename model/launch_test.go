package model

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

const (
	k512 = 512 << 10
	m1   = 1 << 20
	m2   = 2 << 20
)

func TestLaunchScore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		times   map[int64][]float64
		sizes   []int64
		want    float64
		wantErr string
	}{
		{"geometric mean of per-size medians",
			map[int64][]float64{k512: {300, 100, 200}, m1: {800, 900, 700, 1000}}, // medians 200 and 850
			[]int64{k512, m1}, math.Sqrt(200 * 850), ""},
		{"single summary time per size",
			map[int64][]float64{k512: {4}, m1: {9}}, []int64{k512, m1}, 6, ""},
		{"sizes outside the band are ignored",
			map[int64][]float64{k512: {4}, m1: {9}, m2: {-1}}, []int64{k512, m1}, 6, ""},
		{"one size", map[int64][]float64{m1: {5, 5, 5}}, []int64{m1}, 5, ""},
		{"missing size", map[int64][]float64{k512: {4}}, []int64{k512, m1}, math.NaN(), "no samples at 1M"},
		{"empty samples", map[int64][]float64{k512: {4}, m1: {}}, []int64{k512, m1}, math.NaN(), "no samples at 1M"},
		{"NaN time", map[int64][]float64{k512: {4, math.NaN()}}, []int64{k512}, math.NaN(), "impossible time NaN µs at 512K"},
		{"infinite time", map[int64][]float64{k512: {math.Inf(1)}}, []int64{k512}, math.NaN(), "impossible time +Inf"},
		{"negative time", map[int64][]float64{k512: {4, -3}}, []int64{k512}, math.NaN(), "impossible time -3"},
		{"zero time", map[int64][]float64{k512: {0}}, []int64{k512}, math.NaN(), "impossible time 0"},
		{"no sizes", map[int64][]float64{k512: {4}}, nil, math.NaN(), "no message sizes"},
		{"non-positive size", map[int64][]float64{k512: {4}}, []int64{0}, math.NaN(), "size 0 is not positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LaunchScore(Launch{Times: tc.times}, tc.sizes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LaunchScore error = %v, want one containing %q", err, tc.wantErr)
				}
				if !math.IsNaN(got) {
					t.Errorf("LaunchScore = %v with an error, want NaN", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("LaunchScore: %v", err)
			}
			if !near(got, tc.want, 1e-12) {
				t.Errorf("LaunchScore = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLaunchOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sizes []benchfmt.Size
		want  map[int64][]float64
	}{
		{"none", nil, map[int64][]float64{}},
		{"samples win over the table's time",
			[]benchfmt.Size{{Bytes: 1024, TimeUS: 10, Samples: []float64{9, 11}}},
			map[int64][]float64{1024: {9, 11}}},
		{"the table's time without samples",
			[]benchfmt.Size{{Bytes: 1024, TimeUS: 10}, {Bytes: 2048, TimeUS: 20}},
			map[int64][]float64{1024: {10}, 2048: {20}}},
		{"cycles of one size add up, in order",
			[]benchfmt.Size{{Bytes: 1024, TimeUS: 10, Samples: []float64{9}}, {Bytes: 1024, Cycle: 1, TimeUS: 12}},
			map[int64][]float64{1024: {9, 12}}},
		{"a size that measured nothing is left out",
			[]benchfmt.Size{{Bytes: 1024, TimeUS: 0}, {Bytes: 2048, TimeUS: -1}, {Bytes: 4096, TimeUS: 5}},
			map[int64][]float64{4096: {5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LaunchOf(tt.sizes).Times; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LaunchOf(%+v).Times = %v, want %v", tt.sizes, got, tt.want)
			}
		})
	}
}

func TestIterColumns(t *testing.T) {
	// The first size of benchfmt's testdata/torch/h200_loopback.jsonl: the
	// columns parse printed when benchfmt computed them.
	xs := []float64{234.929, 239.375, 254.462, 235.478, 237.225, 240.518, 223.845, 237.393}
	in := append([]float64(nil), xs...)
	minUS, maxUS, p99, cv := IterColumns(xs)
	if minUS != 223.845 || maxUS != 254.462 || p99 != 254.462 || cv != 3.5392669296262995 {
		t.Errorf("IterColumns = %v %v %v %v", minUS, maxUS, p99, cv)
	}
	if !reflect.DeepEqual(xs, in) {
		t.Errorf("IterColumns reordered its input: %v", xs)
	}
	// p99 is the empirical quantile: of 200 values the 198th smallest.
	var many []float64
	for i := 200; i >= 1; i-- {
		many = append(many, float64(i))
	}
	if _, _, p99, _ := IterColumns(many); p99 != 198 {
		t.Errorf("p99 of 1…200 = %v, want 198", p99)
	}
	if minUS, maxUS, p99, cv := IterColumns([]float64{5}); minUS != 5 || maxUS != 5 || p99 != 5 || cv != 0 {
		t.Errorf("one sample: %v %v %v %v, want 5 5 5 0", minUS, maxUS, p99, cv)
	}
}
