package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestResumeKeepsTheStudySettings: a study interrupted and resumed
// without repeating its flags still samples, confirms and decides as it
// was set up to (--sampler, --confirm, --min-effect, --alpha), not with
// the defaults of the resuming command.
func TestResumeKeepsTheStudySettings(t *testing.T) {
	t.Parallel()
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
