package store

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

func TestRoundTrip(t *testing.T) {
	s := openWriter(t)
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	if st.ID != 1 || st.Name != "s1-512K-4M" || st.Status != vocab.StatusRunning || st.Created.IsZero() {
		t.Fatalf("created study: id %d name %q status %q created %v", st.ID, st.Name, st.Status, st.Created)
	}
	sweep := &Study{Kind: vocab.KindSweep, Band: "32K-256M"}
	imp := &Study{Kind: vocab.KindImport}
	for _, x := range []*Study{sweep, imp} {
		if err := s.CreateStudy(x); err != nil {
			t.Fatal(err)
		}
	}
	if sweep.Name != "s2-sweep" || imp.Name != "s3-import" {
		t.Fatalf("names %q %q, want s2-sweep s3-import", sweep.Name, imp.Name)
	}

	base := &Trial{StudyID: st.ID, Config: nccl.Config{}, Role: vocab.RoleBaseline}
	cand := &Trial{StudyID: st.ID, Config: nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, Role: vocab.RoleExplore}
	for _, tr := range []*Trial{base, cand} {
		if err := s.AddTrial(tr); err != nil {
			t.Fatal(err)
		}
	}
	if base.Number != 0 || cand.Number != 1 || cand.Key != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" || base.State != vocab.TrialRunning {
		t.Fatalf("trials: base #%d cand #%d key %q state %q", base.Number, cand.Number, cand.Key, base.State)
	}

	warm := testLaunch(st.ID, base.ID, 0, 5)
	warm.Phase, warm.Scored = vocab.PhaseWarmup, false
	l1 := testLaunch(st.ID, base.ID, 1, 5)
	l2 := testLaunch(st.ID, cand.ID, 2, 5)
	for _, l := range []*Launch{warm, l1, l2} {
		if err := s.AddLaunch(l, testRaw(int(l.Duration.Milliseconds()-1000))); err != nil {
			t.Fatal(err)
		}
	}
	if warm.Seq != 0 || l1.Seq != 1 || l2.Seq != 2 || l2.ID == 0 {
		t.Fatalf("seqs %d %d %d", warm.Seq, l1.Seq, l2.Seq)
	}
	if err := s.AddLaunch(testLaunch(sweep.ID, base.ID, 3, 1), nil); err == nil || !strings.Contains(err.Error(), "belongs to study") {
		t.Fatalf("launch into the wrong study: %v", err)
	}

	// The writer's view and a reader's view agree.
	r, err := Open(s.Path(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"s1-512K-4M", "1", "s1"} {
		got, err := r.Study(q)
		if err != nil {
			t.Fatalf("Study(%q): %v", q, err)
		}
		want := *st
		want.Trials, want.Launches = 2, 3
		if !got.Updated.After(st.Updated) {
			t.Errorf("Study(%q).Updated = %v: adding trials and launches did not move it from %v", q, got.Updated, st.Updated)
		}
		got.Updated = want.Updated
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("Study(%q) =\n%+v\nwant\n%+v", q, got, &want)
		}
	}
	trials, err := r.Trials(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 2 || trials[0].Launches != 2 || trials[1].Launches != 1 || trials[0].ScoreUS != l1.ScoreUS || trials[1].Key != cand.Key {
		t.Fatalf("trials after launches: %+v %+v", trials[0], trials[1])
	}
	launches, err := r.Launches(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*Launch{warm, l1, l2}; !reflect.DeepEqual(launches, want) {
		t.Fatalf("Launches = %+v\nwant %+v", launches, want)
	}
	tl, err := r.TrialLaunches(base.ID)
	if err != nil || len(tl) != 2 || tl[0].ID != warm.ID || tl[1].ID != l1.ID {
		t.Fatalf("TrialLaunches(base) = %v, %v", tl, err)
	}
	raw, err := r.RawOutput(l2.ID)
	if err != nil || !reflect.DeepEqual(raw, testRaw(2)) {
		t.Fatalf("RawOutput = %v, %v", raw, err)
	}
	if _, err := r.RawOutput(999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("RawOutput(999): %v, want ErrNotFound", err)
	}
	if err := r.AddTrial(&Trial{StudyID: 1}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("write through a reader: %v", err)
	}

	// Updates keep the store's counts and refuse to change identity.
	cand.State, cand.ScoreUS, cand.Launches = vocab.TrialComplete, 123.5, 99
	if err := s.UpdateTrial(cand); err != nil {
		t.Fatal(err)
	}
	if cand.Launches != 1 {
		t.Fatalf("UpdateTrial took the caller's launch count: %d", cand.Launches)
	}
	cand.Config = nccl.Config{"NCCL_PROTO": "LL"}
	if err := s.UpdateTrial(cand); err == nil || !strings.Contains(err.Error(), "config cannot change") {
		t.Fatalf("config change: %v", err)
	}
	st.Status = vocab.StatusDone
	st.Recommendation = &Recommendation{Env: map[string]string{"NCCL_PROTO": "^LL128"}, Speedup: 8.1, SpeedupCI: [2]float64{7.9, 8.3}, Significant: true}
	if err := s.UpdateStudy(st); err != nil {
		t.Fatal(err)
	}
	sums, err := r.Studies()
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 3 || sums[0].Name != "s1-512K-4M" || sums[0].Trials != 2 || sums[0].Launches != 3 || sums[0].Status != vocab.StatusDone ||
		sums[0].Recommendation == nil || sums[0].Recommendation.Speedup != 8.1 || !sums[0].Simulated || sums[2].Kind != vocab.KindImport {
		t.Fatalf("Studies = %+v", sums)
	}
	bad := *st
	bad.Name = "renamed"
	if err := s.UpdateStudy(&bad); err == nil {
		t.Fatal("UpdateStudy renamed a study")
	}
	checkFile(t, s.Path())
}

func TestStudyNotFoundListsClosest(t *testing.T) {
	s := openWriter(t)
	for _, st := range []*Study{searchStudy(), {Kind: vocab.KindSweep}, searchStudy()} {
		if err := s.CreateStudy(st); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query   string
		closest []string
	}{
		{"s1-512k-4m", []string{"s1-512K-4M", "s3-512K-4M"}},
		{"s2-swep", []string{"s2-sweep"}},
		{"zzzzzzzzzzzzzz", nil},
		{"99", nil},
	} {
		_, err := s.Study(tc.query)
		var nf *StudyNotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) {
			t.Fatalf("Study(%q): %v, want *StudyNotFoundError", tc.query, err)
		}
		if !reflect.DeepEqual(nf.Closest, tc.closest) {
			t.Errorf("Study(%q) closest %q, want %q", tc.query, nf.Closest, tc.closest)
		}
	}
	if err := s.CreateStudy(&Study{Kind: vocab.KindImport, Name: "s2-sweep"}); err == nil {
		t.Fatal("a second study took an existing name")
	}
	if err := s.CreateStudy(&Study{Kind: vocab.KindImport, Name: "42"}); err == nil {
		t.Fatal("a numeric study name was accepted")
	}
}

func TestTrialKeyUniquePerStudy(t *testing.T) {
	s := openWriter(t)
	a, b := searchStudy(), searchStudy()
	for _, st := range []*Study{a, b} {
		if err := s.CreateStudy(st); err != nil {
			t.Fatal(err)
		}
	}
	first := &Trial{StudyID: a.ID, Config: nccl.Config{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}}
	if err := s.AddTrial(first); err != nil {
		t.Fatal(err)
	}
	defaults := &Trial{StudyID: a.ID, Config: nil}
	if err := s.AddTrial(defaults); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		trial    *Trial
		existing uint64
	}{
		{"same config", &Trial{StudyID: a.ID, Config: nccl.Config{"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL"}}, first.ID},
		{"same config plus an unset knob", &Trial{StudyID: a.ID, Config: nccl.Config{"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_MAX_NCHANNELS": ""}}, first.ID},
		{"defaults again", &Trial{StudyID: a.ID, Config: nccl.Config{}}, defaults.ID},
	} {
		err := s.AddTrial(tc.trial)
		var dup *DuplicateTrialError
		if !errors.As(err, &dup) || !errors.Is(err, ErrDuplicateTrial) || dup.Existing != tc.existing {
			t.Errorf("%s: %v, want a DuplicateTrialError naming trial %d", tc.name, err, tc.existing)
		}
	}
	// The same config in another study is a different trial.
	other := &Trial{StudyID: b.ID, Config: nccl.Config{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring"}}
	if err := s.AddTrial(other); err != nil || other.Number != 0 {
		t.Fatalf("same config in another study: %v (number %d)", err, other.Number)
	}
	trials, err := s.Trials(a.ID)
	if err != nil || len(trials) != 2 {
		t.Fatalf("study a has %d trials (%v), want 2: refused trials must leave nothing behind", len(trials), err)
	}
	if sums, _ := s.Studies(); sums[0].Trials != 2 {
		t.Fatalf("summary counts %d trials, want 2", sums[0].Trials)
	}
}

func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "data"))
	path, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(os.Getenv("XDG_DATA_HOME"), "nccltune", "nccltune.db"); path != want {
		t.Fatalf("DefaultPath = %s, want %s", path, want)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		path string
		mode os.FileMode
	}{
		{filepath.Dir(path), 0o700 | os.ModeDir},
		{path, 0o600},
		{path + ".lock", 0o600},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != tc.mode {
			t.Errorf("%s has mode %v, want %v", tc.path, fi.Mode(), tc.mode)
		}
	}
	if _, err := os.Stat(path + ".init"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file used to create the database was left behind: %v", err)
	}

	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", filepath.Join(t.TempDir(), "home"))
	path, err = DefaultPath()
	if want := filepath.Join(os.Getenv("HOME"), ".local", "share", "nccltune", "nccltune.db"); err != nil || path != want {
		t.Fatalf("DefaultPath without XDG_DATA_HOME = %s, %v; want %s", path, err, want)
	}
}

func TestSchemaVersions(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, fn func(tx *bolt.Tx) error) string {
		path := filepath.Join(dir, name)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return path
	}
	setSchema := func(v string) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			if err := migrate(tx, "x"); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keySchema, []byte(v))
		}
	}
	newer := build("newer.db", setSchema("2"))
	v0 := build("v0.db", func(*bolt.Tx) error { return nil })
	foreign := build("foreign.db", func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("widgets")); return err })
	damaged := build("damaged.db", setSchema("one"))
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 1000)), 0o600)

	for _, ro := range []bool{true, false} {
		_, err := Open(newer, Options{ReadOnly: ro})
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "written by a newer nccltune (schema 2") ||
			!strings.Contains(err.Error(), "upgrade nccltune or use --db another file") {
			t.Errorf("newer schema, read-only %v: %v", ro, err)
		}
		for _, tc := range []struct{ path, want string }{
			{foreign, "not an nccltune one (it holds buckets widgets)"},
			{damaged, "unreadable schema version"},
			{text, "not an nccltune database or is damaged"},
		} {
			if _, err := Open(tc.path, Options{ReadOnly: ro}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, read-only %v: %v, want %q", filepath.Base(tc.path), ro, err, tc.want)
			}
		}
	}

	// A schema-0 file reads as empty and is migrated by the first writer.
	r, err := Open(v0, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if sums, err := r.Studies(); err != nil || len(sums) != 0 {
		t.Fatalf("schema-0 Studies = %v, %v", sums, err)
	}
	if _, err := r.Study("s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("schema-0 Study: %v", err)
	}
	w, err := Open(v0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateStudy(searchStudy()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	db, err := bolt.Open(v0, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keySchema)); v != "1" {
			t.Errorf("after migration the schema is %q, want 1", v)
		}
		return nil
	})
	db.Close()
}

func TestMissingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	_, err := Open(path, Options{ReadOnly: true})
	if !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("read-only open of a missing file: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a reader created the database")
	}
}

// TestReadOnlyFileSystem injects EROFS (the test may run as root, which
// ignores file modes) and checks the error says so and the file survives.
func TestReadOnlyFileSystem(t *testing.T) {
	s := openWriter(t)
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	before, _ := os.ReadFile(path)

	roFS := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if flag&(os.O_RDWR|os.O_WRONLY) != 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return os.OpenFile(name, flag, perm)
	}
	_, err := Open(path, Options{openFile: roFS})
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "--db") {
		t.Fatalf("writer on a read-only file system: %v", err)
	}
	// Readers still work there.
	r, err := Open(path, Options{ReadOnly: true, openFile: roFS})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Study(st.Name); err != nil || got.ID != st.ID {
		t.Fatalf("reader on a read-only file system: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("the database changed")
	}

	if os.Geteuid() != 0 {
		os.Chmod(path, 0o400)
		os.Chmod(path+".lock", 0o400)
		if _, err := Open(path, Options{}); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("writer on a 0400 file: %v", err)
		}
	}
}

func TestClassifyWriteError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		is   error
		want string
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, ErrDiskFull, "no space left"},
		{errors.New("file resize error: file too large"), ErrDiskFull, "earlier data is intact"},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, ErrReadOnly, "permission denied"},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, ErrReadOnly, "file system is read-only"},
		{errors.New("something else"), nil, "something else"},
	} {
		err := classifyWriteError("/d/x.db", tc.err)
		if tc.is != nil && !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("classify(%v) = %v, want %v containing %q", tc.err, err, tc.is, tc.want)
		}
	}
}

func TestNaNIsRefusedWhole(t *testing.T) {
	s := openWriter(t)
	st, tr := studyWithTrial(t, s)
	l := testLaunch(st.ID, tr.ID, 0, 3)
	l.ScoreUS = math.NaN()
	if err := s.AddLaunch(l, testRaw(0)); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("AddLaunch with a NaN score: %v", err)
	}
	if launches, _ := s.Launches(st.ID); len(launches) != 0 {
		t.Fatal("part of the refused launch was stored")
	}
	if trials, _ := s.Trials(st.ID); trials[0].Launches != 0 {
		t.Fatal("the refused launch was counted")
	}
}

// TestAddTrialWithLaunch: a trial can be created with its first launch in
// one transaction, and the trial's key stays unique.
func TestAddTrialWithLaunch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := &Study{Kind: vocab.KindSearch, Band: "1M"}
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	tr := &Trial{StudyID: st.ID, Config: map[string]string{"NCCL_PROTO": "Simple"}}
	l := &Launch{StudyID: st.ID, Scored: true, ScoreUS: 12}
	if err := s.AddTrialWithLaunch(tr, l, nil, TrialUpdate{ScoreUS: 10}); err != nil {
		t.Fatal(err)
	}
	if tr.ID == 0 || l.TrialID != tr.ID || tr.Launches != 1 {
		t.Fatalf("trial %+v, launch trial %d", tr, l.TrialID)
	}
	got, err := s.Trial(tr.ID)
	if err != nil || got.Launches != 1 || got.ScoreUS != 10 {
		t.Fatalf("stored trial %+v, %v", got, err)
	}
	dup := &Trial{StudyID: st.ID, Config: map[string]string{"NCCL_PROTO": "Simple"}}
	if err := s.AddTrialWithLaunch(dup, &Launch{StudyID: st.ID}, nil, TrialUpdate{}); !errors.Is(err, ErrDuplicateTrial) {
		t.Fatalf("second trial with the same config: %v", err)
	}
	ls, _ := s.Launches(st.ID)
	if len(ls) != 1 {
		t.Fatalf("%d launches stored, want 1 (the refused one must leave nothing)", len(ls))
	}
}

// TestRunningStudyWithoutWriter: a study stored as running reads as
// running while a writer holds the database, and as interrupted once no
// process does (the one that ran it was killed or crashed).
func TestRunningStudyWithoutWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := &Study{Kind: vocab.KindSearch, Band: "1M", Status: vocab.StatusRunning}
	if err := w.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	read := func() (string, string) {
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := r.Study(st.Name)
		if err != nil {
			t.Fatal(err)
		}
		sums, err := r.Studies()
		if err != nil || len(sums) != 1 {
			t.Fatalf("Studies: %v %v", sums, err)
		}
		if sums[0].Status != got.Status {
			t.Errorf("Studies says %s, Study says %s", sums[0].Status, got.Status)
		}
		return got.Status, got.Reason
	}
	if status, _ := read(); status != vocab.StatusRunning {
		t.Errorf("with the writer open: %s, want running", status)
	}
	w.Close()
	if status, reason := read(); status != vocab.StatusInterrupted || !strings.Contains(reason, "--resume") {
		t.Errorf("without a writer: %s (%q), want interrupted with how to resume", status, reason)
	}
}
