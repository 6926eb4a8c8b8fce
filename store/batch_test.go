package store

import (
	"encoding/json"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestLaunchBatch: a launch stores which batch launch measured it, and a
// launch stored before batches (no "batch" key) reads as a launch of its
// own: no migration, the schema's rule for an added field.
func TestLaunchBatch(t *testing.T) {
	var old Launch
	if err := json.Unmarshal([]byte(`{"id":3,"study_id":1,"trial_id":2,"seq":0,"phase":"explore","outcome":"ok","exit_code":0,"simulated":false,"scored":true,"sizes":[]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Batch != nil {
		t.Errorf("a launch from before batches reads as batch %+v", *old.Batch)
	}
	s := openWriter(t)
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	tr := &Trial{StudyID: st.ID, Config: nccl.Config{}, Role: vocab.RoleBaseline}
	if err := s.AddTrial(tr); err != nil {
		t.Fatal(err)
	}
	for _, member := range []*benchfmt.BatchMember{nil, {Seq: 2, Position: 3, Configs: 8}} {
		l := testLaunch(st.ID, tr.ID, 1, 3)
		l.Batch = member
		if err := s.AddLaunch(l, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Launches(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Batch != nil || got[1].Batch == nil || *got[1].Batch != (benchfmt.BatchMember{Seq: 2, Position: 3, Configs: 8}) {
		t.Errorf("stored launches' batches: %+v, %+v; want none, then batch 2 at position 3 of 8", got[0].Batch, got[1].Batch)
	}
}
