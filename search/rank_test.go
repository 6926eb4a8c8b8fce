package search

import "testing"

// A ranking no launch has filled yet (its key still the zero value, as
// for a study with no trial at seq 0) hands out a cache whose maps can be
// written: before, the cache's maps were made only when the key changed,
// and such a ranking's first guard spread wrote to a nil map and panicked.
func TestRankingCacheBeforeAnyLaunch(t *testing.T) {
	r := &ranking{measured: &measured{}}
	if got := r.guardSpread(opSize{op: "all_reduce", bytes: 1 << 20}); got <= 0 {
		t.Errorf("guard spread of a ranking with no launch: %v, want the positive floor", got)
	}
	if r.guardFails(&Trial{}) {
		t.Error("a trial with no launch fails a guard")
	}
}
