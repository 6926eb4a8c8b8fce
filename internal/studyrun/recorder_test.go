package studyrun

import (
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// TestRecorderStoresTheScoreItIsHanded: a launch's score is the one its
// caller measured (search.Measure), stored as handed, never scored again
// over other sizes; an unscored launch keeps none.
func TestRecorderStoresTheScoreItIsHanded(t *testing.T) {
	st, study, rec, tr := sweepRecorder(t)
	l := &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{Rows: []benchfmt.Row{{Bytes: 1024, Out: benchfmt.Measure{TimeUS: 10}}}}}
	for i, tc := range []struct {
		scored bool
		score  float64
	}{{true, 42}, {false, 0}} {
		if err := rec.SaveLaunch(tr, search.Request{Seq: i, Phase: vocab.PhaseSweep}, l, tc.scored, tc.score); err != nil {
			t.Fatal(err)
		}
	}
	launches, err := st.Launches(study.ID)
	if err != nil || len(launches) != 2 {
		t.Fatalf("%d launches, %v", len(launches), err)
	}
	if got := launches[0]; !got.Scored || got.ScoreUS != 42 {
		t.Errorf("scored launch stored as scored %v, %g µs; want the 42 µs handed (its own time is 10)", got.Scored, got.ScoreUS)
	}
	if got := launches[1]; got.Scored || got.ScoreUS != 0 {
		t.Errorf("unscored launch stored as scored %v, %g µs", got.Scored, got.ScoreUS)
	}
}

// sweepRecorder is a recorder of a new sweep study in its own database,
// with one trial saved: where a test hands it launches.
func sweepRecorder(t *testing.T) (*store.Store, *store.Study, *Recorder, *search.Trial) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "rec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	study := &store.Study{Kind: vocab.KindSweep, Status: vocab.StatusRunning, Sizes: []int64{1024}}
	if err := st.CreateStudy(study); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(st, study, study.Sizes)
	tr := &search.Trial{Config: nccl.Config{}, Role: vocab.RoleSweep, State: vocab.TrialRunning}
	if err := rec.SaveTrial(tr); err != nil {
		t.Fatal(err)
	}
	return st, study, rec, tr
}
