package launchstats

import (
	"math"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// TestSizeComparisonsLeaveOutUnmeasured: one row per size both arms
// measured, in the order asked, each the comparison at that size alone; a
// size one arm lacks has no row.
func TestSizeComparisonsLeaveOutUnmeasured(t *testing.T) {
	const k4, m1 = 4 * nccl.KiB, nccl.MiB
	base := []model.Launch{{Times: map[int64][]float64{m1: {100}, k4: {10}}}, {Times: map[int64][]float64{m1: {102}, k4: {11}}}}
	cand := []model.Launch{{Times: map[int64][]float64{m1: {50}}}, {Times: map[int64][]float64{m1: {51}}}}
	rows := SizeComparisons(base, cand, []int64{k4, m1}, model.DefaultOptions())
	if len(rows) != 1 || rows[0].Bytes != m1 {
		t.Fatalf("rows %+v, want 1M alone (4K is the baseline's only)", rows)
	}
	want := model.Compare(base, cand, []int64{m1}, model.DefaultOptions())
	if r := rows[0]; r.BaselineUS != 101 || r.CandidateUS != 50.5 || r.Speedup != want.Speedup || r.PValue != want.P {
		t.Errorf("row %+v, want medians 101 and 50.5 and the comparison at 1M %+v", r, want)
	}
}

// TestSizeComparisons: the one per-size row holds what every table
// prints: each arm's launches at the size, the speedup with its interval,
// and a missing interval as NaN (it held the median, which printed as an
// interval of no width).
func TestSizeComparisons(t *testing.T) {
	at := func(n int, us float64) []model.Launch {
		var out []model.Launch
		for i := range n {
			x := us * (1 + 0.01*float64(i%3))
			out = append(out, model.Launch{Times: map[int64][]float64{nccl.MiB: {x, x}, 2 * nccl.MiB: {2 * x, 2 * x}}})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		n          int
		noInterval bool
	}{
		{"8 launches each", 8, false},
		{"3 launches each: too few for an interval", 3, true},
	} {
		got := SizeComparisons(at(tc.n, 100), at(tc.n, 50), []int64{nccl.MiB, 2 * nccl.MiB}, model.DefaultOptions())
		if len(got) != 2 || got[0].Bytes != nccl.MiB || got[1].Bytes != 2*nccl.MiB {
			t.Fatalf("%s: got %+v, want 1M and 2M", tc.name, got)
		}
		for _, c := range got {
			if math.Abs(c.Speedup-2) > 0.05 || c.BaselineLaunches != tc.n || c.CandidateLaunches != tc.n {
				t.Errorf("%s: %d: speedup %g over %d and %d launches; want about 2× over %d each", tc.name, c.Bytes, c.Speedup, c.BaselineLaunches, c.CandidateLaunches, tc.n)
			}
			intervals := []float64{c.BaselineLo, c.BaselineHi, c.CandidateLo, c.CandidateHi, c.SpeedupLo, c.SpeedupHi}
			for _, x := range intervals {
				if math.IsNaN(x) != tc.noInterval {
					t.Errorf("%s: %d: interval ends %v; want NaN: %v", tc.name, c.Bytes, intervals, tc.noInterval)
					break
				}
			}
			if !tc.noInterval && !(c.SpeedupLo <= c.Speedup && c.Speedup <= c.SpeedupHi) {
				t.Errorf("%s: %d: speedup %g outside its interval [%g, %g]", tc.name, c.Bytes, c.Speedup, c.SpeedupLo, c.SpeedupHi)
			}
		}
	}
}

// TestLaunchScoreIsStored: the landscape shows the score a study stored
// with each launch (scored once, as measured), not one recomputed from the
// sizes; only an imported launch, stored without one, is scored here.
func TestLaunchScoreIsStored(t *testing.T) {
	sizes := []int64{nccl.MiB}
	at200 := []benchfmt.Size{{Bytes: nccl.MiB, TimeUS: 200, Samples: []float64{200}}}
	for _, tc := range []struct {
		name string
		l    store.Launch
		want float64
	}{
		{"stored", store.Launch{Phase: vocab.PhaseExplore, Scored: true, ScoreUS: 150, Sizes: at200}, 150},
		{"unscored", store.Launch{Phase: vocab.PhaseExplain, Sizes: at200}, math.NaN()},
		{"counted, stored without a score", store.Launch{Phase: vocab.PhaseSweep, Scored: true, Sizes: at200}, math.NaN()},
		{"imported", store.Launch{Phase: vocab.PhaseImport, Scored: true, Sizes: at200}, 200},
	} {
		got := Figures{}.LaunchScore(&tc.l, sizes)
		if math.Abs(got-tc.want) > 1e-9 && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: score %v, want %v", tc.name, got, tc.want)
		}
	}
}
