package model

import "testing"

// BenchmarkCompare: the case, 10 launches per arm × 4 sizes × 100
// iterations. The search's own overhead target is 5 ms per launch in all.
func BenchmarkCompare(b *testing.B) {
	f := spark4Fabric()
	r := newRand(1)
	base, cand := f.launches(r, 10, 1), f.launches(r, 10, 1.1)
	Compare(base, cand, band, DefaultOptions()) // warm the interval caches
	b.ReportAllocs()
	for b.Loop() {
		Compare(base, cand, band, DefaultOptions())
	}
}

func BenchmarkSummarize(b *testing.B) {
	f := spark4Fabric()
	ls := f.launches(newRand(1), 10, 1)
	b.ReportAllocs()
	for b.Loop() {
		Summarize(ls, band, DefaultOptions())
	}
}

// BenchmarkPlanNext: a study mid-exploration, 40 configs with 1–5
// launches each (× 4 sizes × 100 iterations), all close enough to the
// leader to be plausible challengers.
func BenchmarkPlanNext(b *testing.B) {
	f := spark4Fabric()
	r := newRand(1)
	as := make([]Arm, 40)
	for i := range as {
		as[i].Launches = f.launches(r, 1+i%5, 1+0.002*float64(i))
	}
	PlanNext(as, band, DefaultOptions(), 10)
	b.ReportAllocs()
	for b.Loop() {
		PlanNext(as, band, DefaultOptions(), 10)
	}
}

// BenchmarkPlanConfirm: the design of a default search's confirmation (6
// launches per arm first, up to 50), its boundaries found by bisection.
func BenchmarkPlanConfirm(b *testing.B) {
	// Without nominalLevels' cache, which would answer every call but the
	// first: this measures the computation.
	defer func(old int64) { maxCachedLevels = old }(maxCachedLevels)
	maxCachedLevels = 0
	levelsCache.Clear()
	for b.Loop() {
		PlanConfirm(6, 50, 0.05)
	}
}
