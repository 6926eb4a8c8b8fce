package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/vocab"
)

// TestNeverDamagesForeignFiles: nccltune truncates, replaces or deletes
// only files it created.
func TestNeverDamagesForeignFiles(t *testing.T) {
	const victimText = "GEM\n  remote: https://rubygems.org/\n"
	cases := []struct {
		name  string
		setup func(t *testing.T, db string) (victim string)
		want  string // in the error; "" means Open succeeds
	}{
		{"lock file of another program", func(t *testing.T, db string) string {
			os.WriteFile(db+".lock", []byte(victimText), 0o644)
			return db + ".lock"
		}, "not nccltune's lock file"},
		{"lock file is a symlink", func(t *testing.T, db string) string {
			victim := filepath.Join(filepath.Dir(db), "victim")
			os.WriteFile(victim, []byte(victimText), 0o644)
			os.Symlink(victim, db+".lock")
			return victim
		}, "symlink"},
		{"lock file is a hard link", func(t *testing.T, db string) string {
			victim := filepath.Join(filepath.Dir(db), "victim")
			os.WriteFile(victim, []byte(""), 0o644)
			if err := os.Link(victim, db+".lock"); err != nil {
				t.Skip(err)
			}
			return victim
		}, "hard link"},
		{"file beside the new database", func(t *testing.T, db string) string {
			os.WriteFile(db+".init", []byte(victimText), 0o644)
			return db + ".init"
		}, ""},
		{"not a database", func(t *testing.T, db string) string {
			os.WriteFile(db, []byte(victimText), 0o644)
			return db
		}, "not an nccltune database"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "service")
			victim := tc.setup(t, db)
			before, _ := os.ReadFile(victim)
			s, err := Open(db, Options{})
			if s != nil {
				s.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Open: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Open: %v, want an error naming %q", err, tc.want)
			}
			after, err := os.ReadFile(victim)
			if err != nil || string(after) != string(before) {
				t.Errorf("%s changed: %q (%v), was %q", victim, after, err, before)
			}
		})
	}
}

// TestOneDatabaseManyNames: a symlink, a hard link and a relative path to
// one database are one database: each writer through any of them sees the
// study another writer runs as running, and cannot take it over.
func TestOneDatabaseManyNames(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	first, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	running := searchStudy()
	if err := first.CreateStudy(running); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(t.TempDir(), "sym.db")
	os.Symlink(db, sym)
	hard := filepath.Join(dir, "hard.db")
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, name := range []string{sym, hard, "a.db", "./sub/../a.db"} {
		os.Mkdir(filepath.Join(dir, "sub"), 0o700)
		s, err := Open(name, Options{})
		if err != nil {
			t.Errorf("%s: a second writer: %v", name, err)
			continue
		}
		own := searchStudy()
		if err := s.CreateStudy(own); err != nil {
			t.Errorf("%s: second writer's study: %v", name, err)
		}
		taken := *running
		err = s.UpdateStudy(&taken)
		if !errors.Is(err, ErrLocked) {
			t.Errorf("%s: taking over a study another writer runs: %v, want ErrLocked", name, err)
		}
		s.Close()
	}
	// A reader through the hard link sees the writer's study running.
	r, err := Open(hard, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Study(running.Name); err != nil || got.Status != vocab.StatusRunning {
		t.Errorf("a reader through a hard link: %v, %+v; want the study running", err, got)
	}
}

// TestDatabaseReplacedUnderWriter: a database file replaced while a study
// runs stops the writer; the file put in its place is not written.
func TestDatabaseReplacedUnderWriter(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	other, err := Open(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CreateStudy(searchStudy()); err != nil {
		t.Fatal(err)
	}
	other.Close()

	s, err := Open(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(b)
	os.WriteFile(a+".tmp", data, 0o600)
	if err := os.Rename(a+".tmp", a); err != nil {
		t.Fatal(err)
	}
	st.Status = vocab.StatusDone
	err = s.UpdateStudy(st)
	if !errors.Is(err, ErrReplaced) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("write after the file was replaced: %v", err)
	}
	if after, _ := os.ReadFile(a); string(after) != string(data) {
		t.Error("the file put in place of the database was written")
	}
}

// TestNotARegularFile: a FIFO, directory or device as the database is
// refused at once, by readers and writers alike (opening a FIFO blocks).
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		path string
		want string
	}{{fifo, "a FIFO"}, {dir, "a directory"}, {"/dev/zero", "a character device"}} {
		for _, ro := range []bool{false, true} {
			done := make(chan error, 1)
			go func() {
				s, err := Open(tc.path, Options{ReadOnly: ro})
				if s != nil {
					s.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--db") {
					t.Errorf("%s (read-only %v): %v", tc.path, ro, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s (read-only %v): Open blocked", tc.path, ro)
			}
		}
	}
	if _, err := os.Stat("/dev/zero.lock"); err == nil {
		t.Error("a lock file was created beside /dev/zero")
	}
}

// TestReadersCreateNothing: finding the default path and reading a
// database that does not exist leave no directory or file behind.
func TestReadersCreateNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("XDG_DATA_HOME", data)
	path, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("reader: %v", err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a reader created %s (%v)", data, err)
	}
}

// TestStaleStudyReason: a study left running by a process that died reads
// as interrupted, and only a search is told to --resume.
func TestStaleStudyReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stale.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	search, sweep := searchStudy(), searchStudy()
	sweep.Kind = vocab.KindSweep
	for _, st := range []*Study{search, sweep} {
		st.Status = vocab.StatusRunning
		if err := w.CreateStudy(st); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		st     *Study
		resume bool
	}{{search, true}, {sweep, false}} {
		got, err := r.Study(tc.st.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != vocab.StatusInterrupted || strings.Contains(got.Reason, "--resume") != tc.resume || !strings.Contains(got.Reason, "disk") {
			t.Errorf("%s %s: %s, %q", tc.st.Kind, tc.st.Name, got.Status, got.Reason)
		}
	}
}
