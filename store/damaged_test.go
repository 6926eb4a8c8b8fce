package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
)

// damagedCopies fills a database with a study of 300 launches and writes
// damaged copies of it: truncated to half, pages zeroed.
func damagedCopies(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "good.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	tr := &Trial{StudyID: st.ID, Key: "k", State: vocab.TrialRunning}
	if err := s.AddTrial(tr); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if err := s.AddLaunch(testLaunch(st.ID, tr.ID, i, 20), testRaw(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	out := map[string]string{}
	write := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	write("truncated.db", data[:len(data)/2])
	zeroed := append([]byte(nil), data...)
	for p := 2; p < len(data)/page; p += 7 {
		clear(zeroed[p*page : (p+1)*page])
	}
	write("zeroed.db", zeroed)
	return out
}

// TestDamagedDatabase: a damaged file is reported as damaged (naming the
// file and what to do), by every read, never a panic.
func TestDamagedDatabase(t *testing.T) {
	for name, path := range damagedCopies(t) {
		t.Run(name, func(t *testing.T) {
			r, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("open: %v", err)
				}
				return
			}
			reads := map[string]func() error{
				"check":    r.Check,
				"launches": func() error { _, err := r.Launches(1); return err },
				"raw":      func() error { _, err := r.RawOutput(150); return err },
			}
			for what, read := range reads {
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("%s panicked: %v", what, p)
						}
					}()
					err = read()
				}()
				if what == "check" && !errors.Is(err, ErrDamaged) {
					t.Errorf("%s: %v, want ErrDamaged", what, err)
				}
				if err != nil && errors.Is(err, ErrDamaged) {
					var de *DamagedError
					if !errors.As(err, &de) || de.Path != path {
						t.Errorf("%s: %v does not name %s", what, err, path)
					}
				}
			}
			// A writer refuses it too, and leaves it as it is.
			before, _ := os.ReadFile(path)
			if w, err := Open(path, Options{}); err == nil {
				_, err = w.Launches(1)
				w.Close()
			} else if !errors.Is(err, ErrDamaged) {
				t.Errorf("writer: %v", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the damaged file was changed")
			}
		})
	}
}

// TestFilesThatAreNoDatabase (issue 28): an empty file, a database cut to
// 4 KiB and a dangling symlink are refused by readers and writers alike
// with what they are and what to do, and left exactly as they are: no
// lock file, no new database (was: "write …: bad file descriptor",
// bbolt's "file size too small 4096", and for the link "no studies yet"
// from readers, "too many levels of symbolic links" from writers).
func TestFilesThatAreNoDatabase(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.db")
	s, err := Open(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateStudy(searchStudy()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	empty, cut, dangling := filepath.Join(dir, "empty.db"), filepath.Join(dir, "cut.db"), filepath.Join(dir, "dangling.db")
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(cut, data[:4096], 0o600)
	if err := os.Symlink(filepath.Join(dir, "missing", "x.db"), dangling); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		empty:    "is an empty file (0 bytes), not an nccltune database — remove it",
		cut:      "is damaged (the file is 4096 bytes, shorter than the 4 pages of",
		dangling: "is a symlink to " + filepath.Join(dir, "missing", "x.db") + ", which does not exist",
	} {
		for _, opts := range []Options{{ReadOnly: true}, {}} {
			st, err := Open(path, opts)
			if err == nil {
				st.Close()
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Open(%s, read-only %v): %v, want %q", filepath.Base(path), opts.ReadOnly, err, want)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want the 3 files untouched: %v", len(entries), entries)
	}
	if b, _ := os.ReadFile(cut); len(b) != 4096 {
		t.Errorf("the cut file is now %d bytes", len(b))
	}
	if info, _ := os.Stat(empty); info.Size() != 0 {
		t.Errorf("the empty file is now %d bytes", info.Size())
	}
}
