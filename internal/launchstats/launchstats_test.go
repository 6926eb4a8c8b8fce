package launchstats

import (
	"math"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

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
