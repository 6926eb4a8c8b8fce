package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// TestResumeKeepsTheStudySettings: a study interrupted and resumed
// without repeating its flags still samples, confirms and decides as it
// was set up to (--sampler, --confirm, --min-effect, --alpha), not with
// the defaults of the resuming command.
func TestResumeKeepsTheStudySettings(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 3/") {
			cancel()
		}
	}, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "24",
		"--sampler", "random", "--confirm", "5", "--min-effect", "0.1", "--alpha", "0.01")
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	st := openStore(t, db)
	s, err := st.Study("s1-512K-4M")
	if err != nil {
		t.Fatal(err)
	}
	want := store.SearchSettings{Sampler: "random", ConfirmLaunches: 5, MinEffect: 0.1, Alpha: 0.01}
	if s.Search == nil || *s.Search != want {
		t.Fatalf("stored settings %+v, want %+v", s.Search, want)
	}
	rec := s.Recommendation
	if s.Status != vocab.StatusDone || rec == nil || rec.MinEffect != 0.1 || rec.BaselineLaunches != 5 || rec.CandidateLaunches != 5 {
		t.Fatalf("resumed study %s decided with %+v; want 5 confirmation launches per arm and a 10%% minimum effect", s.Status, rec)
	}
}

// watchWriter collects what a command writes to stderr and calls on with
// each complete line, as it is written.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	part string
	on   func(line string)
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		i := strings.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := w.part[:i]
		w.part = w.part[i+1:]
		if w.on != nil {
			w.on(line)
		}
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runWatched runs nccltune in process with ctx, calling on with each
// stderr line, and returns stdout, stderr and the exit code.
func runWatched(ctx context.Context, db string, on func(string), args ...string) (string, string, int) {
	var stdout bytes.Buffer
	stderr := &watchWriter{on: on}
	err := run(ctx, append([]string{"nccltune", "--db", db}, args...), &stdout, stderr)
	if err != nil && !isSilent(err) {
		reportError(stderr, err)
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// openStore opens db for reading; the test fails if it cannot.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the database does not open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
