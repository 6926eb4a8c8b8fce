package store

import (
	"bytes"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/nccl"
)

// fillStudy stores a study with two trials of three launches each, raw
// output included.
func fillStudy(t *testing.T, s *Store) *Study {
	t.Helper()
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	for i, cfg := range []nccl.Config{{}, {"NCCL_PROTO": "^LL128"}} {
		tr := &Trial{StudyID: st.ID, Config: cfg}
		if err := s.AddTrial(tr); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if err := s.AddLaunch(testLaunch(st.ID, tr.ID, 3*i+j, 4), testRaw(j)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

// keysOf counts, per bucket, the keys stored for a study: under its ID,
// its trials' IDs and its launches' IDs, each in the buckets keyed by it.
func keysOf(t *testing.T, s *Store, name string, study []byte, trials, launches [][]byte) map[string]int {
	t.Helper()
	n := map[string]int{}
	err := s.view(func(tx *bolt.Tx) error {
		count := func(bucket []byte, prefixes ...[]byte) {
			for _, p := range prefixes {
				_ = forPrefix(tx.Bucket(bucket), p, func(_, _ []byte) error { n[string(bucket)]++; return nil })
			}
		}
		count(bucketStudies, study)
		count(bucketSummaries, study)
		count(bucketTrials, study)
		count(bucketTrialKeys, study)
		count(bucketLaunches, study)
		count(bucketTrialStudy, trials...)
		count(bucketTrialLaunches, trials...)
		count(bucketRaw, launches...)
		if tx.Bucket(bucketNames).Get([]byte(name)) != nil {
			n["names"]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeleteStudy(t *testing.T) {
	s := openWriter(t)
	gone, kept := fillStudy(t, s), fillStudy(t, s)
	goneTrials, _ := s.Trials(gone.ID)
	goneLaunches, _ := s.Launches(gone.ID)
	var trialIDs, launchIDs [][]byte
	for _, tr := range goneTrials {
		trialIDs = append(trialIDs, itob(tr.ID))
	}
	for _, l := range goneLaunches {
		launchIDs = append(launchIDs, itob(l.ID))
	}
	before := keysOf(t, s, gone.Name, itob(gone.ID), trialIDs, launchIDs)
	if before["raw"] == 0 || before["trial_launches"] == 0 || before["trial_study"] == 0 {
		t.Fatalf("the study to delete is not all there: %v", before)
	}
	got, err := s.DeleteStudy(gone.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != gone.ID {
		t.Errorf("deleted study %d, want %d", got.ID, gone.ID)
	}
	if left := keysOf(t, s, gone.Name, itob(gone.ID), trialIDs, launchIDs); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	var nf *StudyNotFoundError
	if _, err := s.Study(gone.Name); !errors.As(err, &nf) {
		t.Errorf("the deleted study is still found: %v", err)
	}
	// The other study is whole.
	st, err := s.Study(kept.Name)
	if err != nil || st.Trials != 2 || st.Launches != 6 {
		t.Fatalf("the kept study: %+v, %v", st, err)
	}
	ls, _ := s.Launches(kept.ID)
	if raw, err := s.RawOutput(ls[0].ID); err != nil || len(raw.Stdout) == 0 {
		t.Errorf("the kept study's raw output: %v", err)
	}
	sums, _ := s.Studies()
	if len(sums) != 1 || sums[0].ID != kept.ID {
		t.Errorf("summaries after the delete: %+v", sums)
	}
	if _, err := s.DeleteStudy(gone.Name); !errors.As(err, &nf) {
		t.Errorf("deleting twice: %v", err)
	}
	// Its name is free again.
	again := searchStudy()
	again.Name = gone.Name
	if err := s.CreateStudy(again); err != nil {
		t.Errorf("the deleted study's name is still taken: %v", err)
	}
}

func TestRenameStudy(t *testing.T) {
	s := openWriter(t)
	a, b := fillStudy(t, s), fillStudy(t, s)
	if _, err := s.RenameStudy(a.Name, "spark-lane-a"); err != nil {
		t.Fatal(err)
	}
	st, err := s.Study("spark-lane-a")
	if err != nil || st.ID != a.ID || st.Launches != 6 {
		t.Fatalf("renamed study: %+v, %v", st, err)
	}
	if _, err := s.Study(a.Name); err == nil {
		t.Errorf("the old name %s still finds a study", a.Name)
	}
	sums, _ := s.Studies()
	if sums[0].Name != "spark-lane-a" {
		t.Errorf("summary name %q", sums[0].Name)
	}
	for _, tc := range []struct{ name, want string }{
		{b.Name, "already exists"},
		{"12", "number"},
		{"two words", "without spaces"},
	} {
		if _, err := s.RenameStudy("spark-lane-a", tc.name); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("rename to %q: %v, want %q", tc.name, err, tc.want)
		}
	}
}
