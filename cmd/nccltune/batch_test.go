package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
)

// TestSearchInBatches: search --sim --batch N explores through the
// simulated fabric's batch launches (runner, the sim's process,
// benchfmt.ParseBatch): each config's share is stored as a launch that
// names its batch, simulated; the confirmation's launches are their own;
// show says how many launches came from how many batch launches and
// history that the study explored in batches; the
// study keeps its batch size, so that a resumed study (which refuses
// --batch) explores in batches again.
func TestSearchInBatches(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 14/") {
			cancel()
		}
	}, "search", "--sim", "spark4", "--band", "512K-4M", "--batch", "8", "--seed", "5", "--json")
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	before := storedStudy(t, db, "s1-512K-4M")
	if _, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4", "--batch", "4"); code != 2 || !strings.Contains(stderr, "drop --batch") {
		t.Errorf("resume with --batch: exit %d, %s; want a usage error", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4", "--json"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, db, "s1-512K-4M")
	if s.study.Status != vocab.StatusDone || s.study.Search == nil || s.study.Search.BatchSize != 8 {
		t.Fatalf("study %s with settings %+v: want done, batch size 8", s.study.Status, s.study.Search)
	}
	shares, confirm, resumed := 0, 0, false
	batches := map[int]bool{}
	for _, l := range s.launches {
		switch {
		case l.Batch != nil:
			shares++
			batches[l.Batch.Seq] = true
			resumed = resumed || l.Seq >= len(before.launches)
			if l.Phase != vocab.PhaseExplore && l.Phase != vocab.PhaseRefine || !l.Simulated || l.Batch.Configs < 3 || l.Batch.Configs > 8 {
				t.Errorf("launch %d of batch %+v: phase %s, simulated %v: want exploration, simulated, 3 to 8 configs", l.Seq, *l.Batch, l.Phase, l.Simulated)
			}
		case l.Phase == vocab.PhaseConfirm:
			confirm++
		}
	}
	if len(batches) < 2 || !resumed || confirm == 0 {
		t.Fatalf("%d shares of %d batch launches (after the resume: %v), %d confirmation launches of their own: want batches before and after the resume, and a confirmation", shares, len(batches), resumed, confirm)
	}
	stdout, stderr, code := runCLI(t, db, "show", "s1-512K-4M")
	if want := fmt.Sprintf("%d launches from %d batch launches", shares, len(batches)); code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("show: exit %d, want it to say %q\n%s%s", code, want, stdout, stderr)
	}
	if stdout, stderr, code := runCLI(t, db, "history"); code != 0 || !strings.Contains(stdout, "exploring in batches of 8") {
		t.Errorf("history: exit %d, want it to say the study explored in batches of 8\n%s%s", code, stdout, stderr)
	}
}
