package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/vocab"
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
