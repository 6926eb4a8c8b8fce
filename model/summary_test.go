package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// single builds launches with one summary time per size: times[i][j] is
// launch i's time at sizes[j].
func single(sizes []int64, times ...[]float64) []Launch {
	out := make([]Launch, len(times))
	for i, ts := range times {
		out[i] = Launch{Times: map[int64][]float64{}}
		for j, b := range sizes {
			if j < len(ts) && !math.IsNaN(ts[j]) {
				out[i].Times[b] = []float64{ts[j]}
			}
		}
	}
	return out
}

func codes(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

func findWarning(ws []Warning, code string) *Warning {
	for i := range ws {
		if ws[i].Code == code {
			return &ws[i]
		}
	}
	return nil
}

// Hand-computed: ten launches at 512K timing 1..10 (shuffled) and at 1M
// four times that. Median 5.5 and 22; the 95 % order-statistic interval of
// n = 10 is [x(2), x(9)] with coverage 1 − 2·P(Bin(10, ½) ≤ 1) = 1002/1024;
// MAD at 512K is 2.5 so the robust CV is 100·1.4826·2.5/5.5; the band
// score is √(5.5·22) = 11.
func TestSummarizeHandComputed(t *testing.T) {
	t.Parallel()
	order := []float64{7, 3, 10, 1, 5, 9, 2, 8, 6, 4}
	var times [][]float64
	for _, x := range order {
		times = append(times, []float64{x, 4 * x})
	}
	s := Summarize(single([]int64{k512, m1}, times...), []int64{m1, k512, m1}, DefaultOptions())
	want := []SizeSummary{
		{Bytes: k512, Median: 5.5, Lo: 2, Hi: 9, Confidence: 1002.0 / 1024, Launches: 10, SpreadPct: 100 * 1.4826 * 2.5 / 5.5},
		{Bytes: m1, Median: 22, Lo: 8, Hi: 36, Confidence: 1002.0 / 1024, Launches: 10, SpreadPct: 100 * 1.4826 * 2.5 / 5.5},
	}
	if len(s.Sizes) != len(want) {
		t.Fatalf("got %d sizes, want %d (sizes are sorted and de-duplicated)", len(s.Sizes), len(want))
	}
	for i, w := range want {
		g := s.Sizes[i]
		if g.Bytes != w.Bytes || g.Launches != w.Launches || !near(g.Median, w.Median, 1e-12) ||
			!near(g.Lo, w.Lo, 1e-12) || !near(g.Hi, w.Hi, 1e-12) || !near(g.Confidence, w.Confidence, 1e-9) ||
			!near(g.SpreadPct, w.SpreadPct, 1e-12) {
			t.Errorf("size %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if !near(s.ScoreUS, 11, 1e-12) {
		t.Errorf("ScoreUS = %v, want 11", s.ScoreUS)
	}
	if s.Launches != 10 || len(s.LaunchScores) != 10 {
		t.Errorf("Launches = %d, LaunchScores = %d, want 10 and 10", s.Launches, len(s.LaunchScores))
	}
	// Launch 0 times 7 and 28: its score is √(7·28) = 14.
	if !near(s.LaunchScores[0], 14, 1e-12) || s.LaunchIndex[0] != 0 {
		t.Errorf("first launch score %v (index %d), want 14 (index 0)", s.LaunchScores[0], s.LaunchIndex[0])
	}
	// The spread is 67 %: a high-spread warning for both sizes, nothing else.
	if got := codes(s.Warnings); !slices.Equal(got, []string{WarnHighSpread}) {
		t.Errorf("warnings %v, want [high-spread]", got)
	}
}

// n = 6 is the fewest launches with a 95 % interval: [min, max] with
// coverage 1 − 2/64; n = 5 has none.
func TestSummarizeIntervalThreshold(t *testing.T) {
	t.Parallel()
	six := single([]int64{m1}, []float64{6}, []float64{2}, []float64{4}, []float64{3}, []float64{5}, []float64{1})
	s := Summarize(six, []int64{m1}, DefaultOptions())
	g := s.Sizes[0]
	if g.Median != 3.5 || g.Lo != 1 || g.Hi != 6 || !near(g.Confidence, 62.0/64, 1e-12) {
		t.Errorf("n=6: %+v, want median 3.5, [1, 6], coverage 62/64", g)
	}
	if findWarning(s.Warnings, WarnFewLaunches) != nil {
		t.Errorf("n=6 warned few-launches: %v", s.Warnings)
	}
	s = Summarize(six[:5], []int64{m1}, DefaultOptions())
	g = s.Sizes[0]
	if g.Median != 4 || !math.IsNaN(g.Lo) || !math.IsNaN(g.Hi) || !math.IsNaN(g.Confidence) {
		t.Errorf("n=5: %+v, want median 4 and NaN bounds", g)
	}
	w := findWarning(s.Warnings, WarnFewLaunches)
	if w == nil || !strings.Contains(w.Message, "5 launches cannot give a 95 % interval") || !strings.Contains(w.Message, "6 are needed") {
		t.Errorf("n=5: few-launches warning %+v", w)
	}
	if got := MinLaunchesForInterval(DefaultOptions()); got != 6 {
		t.Errorf("MinLaunchesForInterval(95 %%) = %d, want 6", got)
	}
	if got := MinLaunchesForInterval(Options{Confidence: 0.99}); got != 8 {
		t.Errorf("MinLaunchesForInterval(99 %%) = %d, want 8 (1 − 2/2⁸ ≥ 0.99 > 1 − 2/2⁷)", got)
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	sizes := []int64{k512, m1}
	for _, tc := range []struct {
		name        string
		launches    []Launch
		sizes       []int64
		wantScore   float64
		wantN       int
		wantScores  int
		wantWarn    []string
		wantMedians []float64
		check       func(t *testing.T, s Summary)
	}{
		{name: "no launches", sizes: sizes, wantScore: nan,
			wantWarn: []string{WarnNoLaunches}, wantMedians: []float64{nan, nan}},
		{name: "no sizes", launches: single(sizes, []float64{1, 2}), wantScore: nan, wantN: 1,
			wantWarn: []string{WarnNoSizes}},
		{name: "one launch", launches: single(sizes, []float64{4, 9}), sizes: sizes, wantScore: 6, wantN: 1, wantScores: 1,
			wantWarn: []string{WarnFewLaunches}, wantMedians: []float64{4, 9},
			check: func(t *testing.T, s Summary) {
				if !math.IsNaN(s.Sizes[0].SpreadPct) || !math.IsNaN(s.Sizes[0].Lo) {
					t.Errorf("one launch: spread %v, lo %v, want NaN", s.Sizes[0].SpreadPct, s.Sizes[0].Lo)
				}
			}},
		{name: "identical launches", sizes: sizes, wantScore: 6, wantN: 6, wantScores: 6,
			launches:    single(sizes, []float64{4, 9}, []float64{4, 9}, []float64{4, 9}, []float64{4, 9}, []float64{4, 9}, []float64{4, 9}),
			wantMedians: []float64{4, 9},
			check: func(t *testing.T, s Summary) {
				g := s.Sizes[0]
				if g.Lo != 4 || g.Hi != 4 || g.SpreadPct != 0 {
					t.Errorf("identical: %+v, want Lo = Hi = 4 and spread 0", g)
				}
			}},
		{name: "missing size leaves the launch out of scores", sizes: sizes,
			launches:  single(sizes, []float64{4, 9}, []float64{nan, 16}, []float64{4, 9}),
			wantScore: math.Sqrt(4 * 9), wantN: 3, wantScores: 2,
			wantWarn: []string{WarnMissingSize, WarnFewLaunches}, wantMedians: []float64{4, 9},
			check: func(t *testing.T, s Summary) {
				w := findWarning(s.Warnings, WarnMissingSize)
				if !slices.Equal(w.Launches, []int{1}) || !slices.Equal(w.Bytes, []int64{k512}) || !strings.Contains(w.Message, "512K") {
					t.Errorf("missing-size warning %+v, want launch 1 at 512K", w)
				}
				if s.Sizes[0].Launches != 2 || s.Sizes[1].Launches != 3 {
					t.Errorf("per-size launches %d, %d, want 2, 3", s.Sizes[0].Launches, s.Sizes[1].Launches)
				}
				if !slices.Equal(s.LaunchIndex, []int{0, 2}) {
					t.Errorf("LaunchIndex %v, want [0 2]", s.LaunchIndex)
				}
			}},
		{name: "a size nobody measured", sizes: []int64{k512, m2},
			launches: single(sizes, []float64{4, 9}), wantScore: nan, wantN: 1,
			wantWarn: []string{WarnMissingSize, WarnFewLaunches}, wantMedians: []float64{4, nan}},
		{name: "impossible times reject the launch", sizes: sizes,
			launches: []Launch{
				{Times: map[int64][]float64{k512: {4}, m1: {9}}},
				{Times: map[int64][]float64{k512: {4, -2}, m1: {9}}},
				{Times: map[int64][]float64{k512: {4}, m1: {math.NaN()}}},
				{Times: map[int64][]float64{k512: {math.Inf(1)}, m1: {9}}},
				{Times: map[int64][]float64{k512: {0}, m1: {9}}},
			},
			wantScore: 6, wantN: 1, wantScores: 1,
			wantWarn: []string{WarnInvalidLaunch, WarnFewLaunches}, wantMedians: []float64{4, 9},
			check: func(t *testing.T, s Summary) {
				w := findWarning(s.Warnings, WarnInvalidLaunch)
				if !slices.Equal(w.Launches, []int{1, 2, 3, 4}) || !strings.Contains(w.Message, "4 launches left out") {
					t.Errorf("invalid-launch warning %+v", w)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.launches, tc.sizes, DefaultOptions())
			if !sameFloat(s.ScoreUS, tc.wantScore) && !near(s.ScoreUS, tc.wantScore, 1e-12) {
				t.Errorf("ScoreUS = %v, want %v", s.ScoreUS, tc.wantScore)
			}
			if s.Launches != tc.wantN || len(s.LaunchScores) != tc.wantScores {
				t.Errorf("Launches = %d, scores = %d; want %d, %d", s.Launches, len(s.LaunchScores), tc.wantN, tc.wantScores)
			}
			if got := codes(s.Warnings); !slices.Equal(got, tc.wantWarn) {
				t.Errorf("warnings %v, want %v\n%+v", got, tc.wantWarn, s.Warnings)
			}
			if len(s.Sizes) != len(tc.wantMedians) {
				t.Fatalf("%d sizes, want %d", len(s.Sizes), len(tc.wantMedians))
			}
			for i, m := range tc.wantMedians {
				if !sameFloat(s.Sizes[i].Median, m) {
					t.Errorf("size %d median %v, want %v", i, s.Sizes[i].Median, m)
				}
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options (all defaults) rejected: %v", err)
	}
	for _, o := range []Options{{Alpha: 1.5}, {Confidence: 1}, {Confidence: -0.2}, {MinEffect: -0.1}, {HighSpreadPct: math.NaN()}, {OutlierZ: -1}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	s := Summarize(nil, []int64{m1}, Options{Alpha: 2})
	if w := findWarning(s.Warnings, WarnBadOptions); w == nil || !strings.Contains(w.Message, "alpha 2") {
		t.Errorf("bad options not reported: %+v", s.Warnings)
	}
}
