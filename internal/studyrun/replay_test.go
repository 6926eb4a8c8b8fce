package studyrun

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestRecordingOf: a store reads as the simulator's recording — each
// study's fingerprint and its launches under their trial's config, in
// the store's order — and a store the replay cannot be built from is
// refused with the builder's reason before any launch.
func TestRecordingOf(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rec.db")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	study := &store.Study{Kind: vocab.KindSweep, Simulated: true, Status: vocab.StatusDone,
		Platform: store.Platform{Ranks: 2, NCCLVersion: "2.28.3", GPU: "H200", Transport: "Socket"}}
	if err := st.CreateStudy(study); err != nil {
		t.Fatal(err)
	}
	cfg := nccl.Config{"NCCL_PROTO": "LL"}
	trial := &store.Trial{StudyID: study.ID, Config: cfg, Key: cfg.Key(), State: vocab.TrialComplete}
	if err := st.AddTrial(trial); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sizes := []benchfmt.Size{{Bytes: 1 << 20, TimeUS: 100}}
	for i, l := range []*store.Launch{
		{TrialID: trial.ID, Seq: 0, Phase: vocab.PhaseSweep, Start: start, Outcome: benchfmt.OK, Sizes: sizes, Env: []string{"NCCL_PROTO=LL"}},
		{TrialID: trial.ID, Seq: 1, Phase: vocab.PhaseSweep, Start: start.Add(time.Minute), Outcome: benchfmt.Failed, Reason: "exit status 3"},
	} {
		l.StudyID = study.ID
		if err := st.AddLaunch(l, nil); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
	}
	st.Close()
	rec, err := RecordingOf(db)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Source != db || len(rec.Studies) != 1 {
		t.Fatalf("recording %+v, want one study from %s", rec, db)
	}
	s := rec.Studies[0]
	if s.Name != study.Name || !s.Simulated || s.Ranks != 2 || s.NCCLVersion != "2.28.3" || s.GPU != "H200" || s.Transport != "Socket" || len(s.Launches) != 2 {
		t.Fatalf("study %+v", s)
	}
	ok, failed := s.Launches[0], s.Launches[1]
	if !reflect.DeepEqual(ok.Config, cfg) || ok.Phase != vocab.PhaseSweep || !ok.Start.Equal(start) || ok.Outcome != benchfmt.OK ||
		!reflect.DeepEqual(ok.Sizes, sizes) || !reflect.DeepEqual(ok.Env, []string{"NCCL_PROTO=LL"}) {
		t.Errorf("the OK launch reads as %+v", ok)
	}
	if failed.Seq != 1 || failed.Outcome != benchfmt.Failed || failed.Reason != "exit status 3" {
		t.Errorf("the failed launch reads as %+v", failed)
	}
	// No launch of NCCL's defaults: no replay, said before any launch.
	if _, err := LoadReplay("replay:" + db); err == nil || !strings.Contains(err.Error(), "no launch of NCCL's defaults") {
		t.Errorf("LoadReplay of a store without the defaults: %v", err)
	}
}
