package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/store"
)

// TestGuardTableSaysTheStudysAlpha: the guard table names the alpha the
// study decided at (its stored settings), not a level recovered from the
// Holm levels, which is alpha/m when the first test was not rejected.
func TestGuardTableSaysTheStudysAlpha(t *testing.T) {
	study := &store.Study{Search: &store.SearchSettings{MinEffect: 0.03, Alpha: 0.01},
		Recommendation: &store.Recommendation{OpGuards: []store.OpGuard{{Op: nccl.Broadcast, Speedup: 1, SpeedupCI: [2]float64{0.9, 1.1},
			BaselineLaunches: 8, CandidateLaunches: 8, Sizes: []int64{nccl.MiB},
			PerSize: []store.GuardSize{{Bytes: nccl.MiB, Speedup: 0.99, PValue: 0.4, Level: 0.0025}}}}}}
	var b bytes.Buffer
	writeGuardTable(&b, study)
	if !strings.Contains(b.String(), "alpha 0.01)") {
		t.Errorf("the guard table does not say the study's alpha 0.01:\n%s", b.String())
	}
}
