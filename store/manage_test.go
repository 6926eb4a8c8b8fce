package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/nccl"
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
	gone, err := s.RenameStudy(gone.Name, "lane-gone")
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := s.RenameStudy(b.Name, "spark-lane-b"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"spark-lane-b", "already exists"},
		{"12", "written like a study's ID"},
		{"two words", "use letters, digits"},
	} {
		if _, err := s.RenameStudy("spark-lane-a", tc.name); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("rename to %q: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestNamesAndHandles (issue 28): a name is letters, digits, '-', '_' and
// '.', starting with a letter or digit, at most 64 long, and never written
// like an ID handle; "s<ID>" always reaches the study with that ID, and a
// name of the form s<ID>-… only that study. Was: rename s2-2M s1 was
// accepted, then rm s1 deleted study 2; --name s2-1M given to study 1
// blocked study 2's default name; --name took "/", "..", "$(x)", an
// escape sequence, 5000 characters and "-x".
func TestNamesAndHandles(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"", "empty"},
		{"s1", "written like a study's ID"},
		{"s2-1M", "written like a study's ID"},
		{"s12-sweep", "written like a study's ID"},
		{"7", "written like a study's ID"},
		{"0", "written like a study's ID"},
		{"/", "use letters, digits"},
		{"..", "use letters, digits"},
		{"../../etc/passwd", "use letters, digits"},
		{"$(x)", "use letters, digits"},
		{"a\x1b[31mb", "use letters, digits"},
		{"a\nb", "use letters, digits"},
		{"-x", "use letters, digits"},
		{".hidden", "use letters, digits"},
		{"lane\u00e9", "use letters, digits"},
		{strings.Repeat("a", 65), "at most 64"},
		{strings.Repeat("a", 5000), "at most 64"},
	} {
		if err := CheckName(tc.name); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckName(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, ok := range []string{"spark4-512K-4M", "lane_a.2026-01", "s", "sweep7", "s1x", "7x", "S1", strings.Repeat("a", 64)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want accepted", ok, err)
		}
	}

	s := openWriter(t)
	a, b := fillStudy(t, s), fillStudy(t, s) // s1-512K-4M, s2-512K-4M
	if _, err := s.RenameStudy(b.Name, "s1"); err == nil {
		t.Error("rename s2 to s1 was accepted")
	}
	// A name an older nccltune let through still cannot take a handle:
	// s1 is study 1, s2-… only study 2.
	if err := s.update(func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketNames)
		if err := names.Delete([]byte(b.Name)); err != nil {
			return err
		}
		return names.Put([]byte("s1"), itob(b.ID))
	}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]uint64{"s1": a.ID, "1": a.ID, a.Name: a.ID, "s2": b.ID} {
		if st, err := s.Study(q); err != nil || st.ID != want {
			t.Errorf("Study(%q): %v, want study %d", q, err, want)
		}
	}
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNames).Put([]byte("s2-legacy"), itob(a.ID))
	}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Study("s2-legacy"); err == nil {
		t.Errorf("s2-legacy, a name of study %d, reached it although study 2 exists", st.ID)
	}
	if _, err := s.DeleteStudy("s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Study("s2"); err != nil {
		t.Errorf("rm s1 removed study 2: %v", err)
	}
	// Study 1 is gone: its old name "s1" (study 2's, legacy) reaches it.
	if st, err := s.Study("s1"); err != nil || st.ID != b.ID {
		t.Errorf("Study(s1) after study 1 is gone: %v, %v", st, err)
	}
}

// TestLabelsAreOneLineOfText: a label key is written like a name, its
// value one line of text; the store refuses any other (was: a newline in
// a value broke show).
func TestLabelsAreOneLineOfText(t *testing.T) {
	for _, tc := range []struct{ k, v, want string }{
		{"", "x", "needs a key"},
		{"lane", "a\nb", "control character"},
		{"lane", "a\x1b[2Jb", "control character"},
		{"lane", "a\x00", "control character"},
		// Round five of issue 38: a line separator and a bidi override
		// are no controls to unicode.IsControl, yet one breaks the line
		// and the other reorders what the terminal shows.
		{"lane", "a\u2028b", "does not show as itself"},
		{"lane", "a\u2029b", "does not show as itself"},
		{"lane", "evil\u202egnp", "does not show as itself"},
		{"lane", "a\u2066b\u2069", "does not show as itself"},
		{"la ne", "x", "use letters, digits"},
		{strings.Repeat("k", 65), "x", "at most 64"},
		{"lane", strings.Repeat("v", 257), "at most 256"},
	} {
		if err := CheckLabel(tc.k, tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckLabel(%q, %q) = %v, want %q", tc.k, tc.v, err, tc.want)
		}
	}
	if err := CheckLabel("ticket", "OPS-12 (spark4, the 2nd lane) µs é 日本"); err != nil {
		t.Errorf("a plain label: %v", err)
	}
	s := openWriter(t)
	st := searchStudy()
	st.Labels = map[string]string{"lane": "a\nb"}
	if err := s.CreateStudy(st); err == nil {
		t.Error("the store took a label with a newline")
	}
}
