package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// oneSize makes launches with a single summary time at 1M.
func oneSize(times ...float64) []Launch {
	out := make([]Launch, len(times))
	for i, x := range times {
		out[i] = Launch{Times: map[int64][]float64{m1: {x}}}
	}
	return out
}

// scaled returns times divided by s.
func scaled(s float64, times ...float64) []float64 {
	out := make([]float64, len(times))
	for i, x := range times {
		out[i] = x / s
	}
	return out
}

func TestCompareHandComputed(t *testing.T) {
	t.Parallel()
	sizes := []int64{m1}
	for _, tc := range []struct {
		name                 string
		base, cand           []float64
		opt                  Options
		speedup, lo, hi, p   float64
		ciOK, sig, rec, slow bool
		reason               string
		warn                 []string
	}{
		// 4 vs 4, perfectly separated: U = 16 of 16, exact two-sided
		// p = 2/C(8,4) = 2/70; k = 1 (P(U = 0) = 1/70 ≤ 0.025 < 2/70) so the
		// interval is [min, max] of the 16 ratios: 10/6.5 and 13/5;
		// coverage 1 − 2/70. Speedup = 11.5/5.75 = 2.
		{name: "4 vs 4 separated", base: []float64{10, 11, 12, 13}, cand: []float64{5, 5.5, 6, 6.5},
			speedup: 2, lo: 10 / 6.5, hi: 13.0 / 5, p: 2.0 / 70, ciOK: true, sig: true, rec: true,
			reason: "recommend the candidate: 100.0 % faster"},
		{name: "4 vs 4 reversed is slower", base: []float64{5, 5.5, 6, 6.5}, cand: []float64{10, 11, 12, 13},
			speedup: 0.5, lo: 5 / 13.0, hi: 6.5 / 10, p: 2.0 / 70, ciOK: true, sig: true, slow: true,
			reason: "candidate is 100.0 % slower"},
		// 3 vs 3 can never be significant (min p = 2/20 = 0.1) and has no
		// 95 % rank interval (P(U = 0) = 0.05 > 0.025).
		{name: "3 vs 3 refuses", base: []float64{10, 11, 12}, cand: []float64{5, 5.5, 6},
			speedup: 2, lo: math.NaN(), hi: math.NaN(), p: 0.1,
			reason: "cannot show a significant difference at alpha 0.05 whatever they measure — measure at least 4 of each",
			warn:   []string{WarnTooFewForDecision, WarnNoCI}},
		// 10 vs 10 separated by 1 %: significant (p = 2/C(20,10)) but below
		// the 3 % minimum effect.
		{name: "significant but small", base: []float64{100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 100.8, 100.9},
			cand:    scaled(1.01, 100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 100.8, 100.9),
			speedup: 1.01, lo: math.NaN(), hi: math.NaN(), p: 2.0 / 184756, ciOK: true, sig: true,
			reason: "faster by 1.0 %, 95 % CI"},
		{name: "same gain with no minimum effect recommends",
			base:    []float64{100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 100.8, 100.9},
			cand:    scaled(1.01, 100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 100.8, 100.9),
			opt:     Options{MinEffect: 1e-9},
			speedup: 1.01, lo: math.NaN(), hi: math.NaN(), p: 2.0 / 184756, ciOK: true, sig: true, rec: true,
			reason: "recommend the candidate: 1.0 % faster"},
		// Interleaved: base {1,3,5,7}, cand {2,4,6,8}: pairs with
		// base > cand: 3>2, 5>2, 5>4, 7>2, 7>4, 7>6 → U = 6; the null
		// frequencies of U = 0…6 for 4 and 4 are 1,1,2,3,5,5,7, so
		// P(U ≤ 6) = 24/70 and p = 48/70.
		{name: "interleaved is not significant", base: []float64{1, 3, 5, 7}, cand: []float64{2, 4, 6, 8},
			speedup: 4.0 / 5, lo: 1 / 8.0, hi: 7 / 2.0, p: 48.0 / 70, ciOK: true,
			reason: "no significant difference"},
		// At a sequential look's level (0.034519… for the last of 6 → 16)
		// the reason quotes the level to two figures.
		{name: "interleaved at a look's level", base: []float64{1, 3, 5, 7}, cand: []float64{2, 4, 6, 8},
			opt:     Options{MinEffect: 0.03, Alpha: 0.034519225109357454, Confidence: 1 - 0.034519225109357454},
			speedup: 4.0 / 5, lo: math.NaN(), hi: math.NaN(), p: 48.0 / 70, ciOK: true,
			reason: "p = 0.69 ≥ 0.035 over 4 and 4 launches"},
		{name: "identical", base: []float64{5, 5, 5, 5}, cand: []float64{5, 5, 5, 5},
			speedup: 1, lo: 1, hi: 1, p: 1, ciOK: true, reason: "no significant difference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := DefaultOptions()
			if tc.opt != (Options{}) {
				opt = tc.opt
			}
			c := Compare(oneSize(tc.base...), oneSize(tc.cand...), sizes, opt)
			if !near(c.Speedup, tc.speedup, 1e-9) || !near(c.P, tc.p, 1e-9) {
				t.Errorf("speedup %v p %v, want %v %v", c.Speedup, c.P, tc.speedup, tc.p)
			}
			if c.CIOK != tc.ciOK || c.Significant != tc.sig || c.Recommend != tc.rec || c.Slower != tc.slow {
				t.Errorf("ciOK %v sig %v rec %v slower %v, want %v %v %v %v (%s)",
					c.CIOK, c.Significant, c.Recommend, c.Slower, tc.ciOK, tc.sig, tc.rec, tc.slow, c.Reason)
			}
			if !math.IsNaN(tc.lo) || !tc.ciOK {
				if !sameFloat(c.Lo, tc.lo) && !near(c.Lo, tc.lo, 1e-9) || !sameFloat(c.Hi, tc.hi) && !near(c.Hi, tc.hi, 1e-9) {
					t.Errorf("interval [%v, %v], want [%v, %v]", c.Lo, c.Hi, tc.lo, tc.hi)
				}
			}
			if c.CIOK && !(c.Lo <= c.SpeedupHL && c.SpeedupHL <= c.Hi) {
				t.Errorf("Hodges–Lehmann %v outside [%v, %v]", c.SpeedupHL, c.Lo, c.Hi)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", c.Reason, tc.reason)
			}
			if got := codes(c.Warnings); !slices.Equal(got, tc.warn) {
				t.Errorf("warnings %v, want %v", got, tc.warn)
			}
			if c.BaselineN != len(tc.base) || c.CandidateN != len(tc.cand) {
				t.Errorf("n = %d, %d", c.BaselineN, c.CandidateN)
			}
		})
	}
}

func TestCompareEdgeCases(t *testing.T) {
	t.Parallel()
	sizes := []int64{m1}
	t.Run("empty arms", func(t *testing.T) {
		for _, tc := range []struct {
			base, cand []Launch
			who        string
		}{
			{nil, oneSize(1, 2, 3, 4), "the baseline has"},
			{oneSize(1, 2, 3, 4), nil, "the candidate has"},
			{nil, nil, "neither config has"},
		} {
			c := Compare(tc.base, tc.cand, sizes, DefaultOptions())
			if c.Recommend || c.Significant || c.CIOK || c.P != 1 || !math.IsNaN(c.Speedup) {
				t.Errorf("empty arm gave %+v", c)
			}
			if !strings.Contains(c.Reason, "cannot compare: "+tc.who) {
				t.Errorf("reason %q, want %q", c.Reason, tc.who)
			}
		}
	})
	t.Run("invalid launches are left out, not scored", func(t *testing.T) {
		base := oneSize(10, 11, 12, 13, math.NaN())
		base[4].Times[m1] = []float64{-5}
		c := Compare(base, oneSize(5, 5.5, 6, 6.5), sizes, DefaultOptions())
		if c.BaselineN != 4 || !c.Recommend {
			t.Errorf("baseline n %d recommend %v: %s", c.BaselineN, c.Recommend, c.Reason)
		}
		w := findWarning(c.Warnings, WarnInvalidLaunch)
		if w == nil || !strings.HasPrefix(w.Message, "baseline: ") || !slices.Equal(w.Launches, []int{4}) {
			t.Errorf("invalid-launch warning %+v", w)
		}
	})
	t.Run("a launch missing a band size is left out", func(t *testing.T) {
		sizes := []int64{k512, m1}
		base := single(sizes, []float64{10, 10}, []float64{11, 11}, []float64{12, 12}, []float64{13, 13}, []float64{math.NaN(), 1})
		cand := single(sizes, []float64{5, 5}, []float64{5.5, 5.5}, []float64{6, 6}, []float64{6.5, 6.5})
		c := Compare(base, cand, sizes, DefaultOptions())
		if c.BaselineN != 4 || findWarning(c.Warnings, WarnMissingSize) == nil || !near(c.P, 2.0/70, 1e-9) {
			t.Errorf("n %d p %v warnings %v", c.BaselineN, c.P, codes(c.Warnings))
		}
	})
}

func TestMinLaunchesForDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opt  Options
		want int
	}{
		{DefaultOptions(), 4},                    // 2/C(8,4) = 0.029 < 0.05 ≤ 2/C(6,3) = 0.1
		{Options{Alpha: 0.01}, 5},                // 2/C(10,5) = 0.0079
		{Options{Confidence: 0.99}, 5},           // the interval needs 1/C(2n,n) ≤ 0.005
		{Options{Alpha: 0.2, Confidence: .8}, 3}, // 0.1 < 0.2
	} {
		if got := MinLaunchesForDecision(tc.opt); got != tc.want {
			t.Errorf("MinLaunchesForDecision(%+v) = %d, want %d", tc.opt, got, tc.want)
		}
		// And it is tight: with that many launches per arm a clean
		// separation recommends, with one fewer nothing can.
		n := MinLaunchesForDecision(tc.opt)
		opt := tc.opt
		opt.MinEffect = 0.01
		for _, k := range []int{n - 1, n} {
			var b, c []float64
			for i := range k {
				b = append(b, 200+float64(i))
				c = append(c, 100+float64(i))
			}
			got := Compare(oneSize(b...), oneSize(c...), []int64{m1}, opt).Recommend
			if got != (k == n) {
				t.Errorf("%+v with %d launches per arm: recommend %v", tc.opt, k, got)
			}
		}
	}
}
