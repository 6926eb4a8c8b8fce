package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
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

// TestSearchInBatchesIsReproducible: a simulated search in batches of a
// workload makes the same launches for a seed however long the
// simulator's own runs take. Whether batches pay (search.batchesPay)
// compared the simulator's wall times, so that a slow launch of its own
// or a slow batch changed the launches that followed; the simulated
// fabric's modelled times (benchfmt.Launch.Cost) decide now. One run has
// its batch launches slowed, the other its launches of their own: before,
// the first stopped batching after its first batch and the second did
// not. Not parallel: it swaps the runner's in-process hook.
func TestSearchInBatchesIsReproducible(t *testing.T) {
	inProcess := runner.InProcess
	if inProcess == nil {
		t.Skip("the simulated launches run as processes: their wall time is not the test's to set")
	}
	defer func() { runner.InProcess = inProcess }()
	run := func(slowBatches bool) (string, []string) {
		runner.InProcess = func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
			code, ok := inProcess(argv, env, stdout, stderr)
			if ok && slices.Contains(argv, "--batch") == slowBatches {
				time.Sleep(20 * time.Millisecond)
			}
			return code, ok
		}
		db := filepath.Join(t.TempDir(), "db")
		stdout, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--seed", "1", "--batch", "4", "--budget", "60",
			"--calls", "all_reduce:10240:240", "--calls", "all_reduce:327680:240", "--calls", "all_reduce:2048000:80", "--calls", "all_gather:2048000:13")
		if code != 0 {
			t.Fatalf("search: exit %d\n%s", code, stderr)
		}
		var launches []string
		for _, l := range storedStudy(t, db, "s1-all_reduce-all_gather").launches {
			s := fmt.Sprintf("%d %s trial %d %s %s %v %.6g", l.Seq, l.Phase, l.TrialID, l.Op, l.Outcome, l.Env, l.ScoreUS)
			if l.Batch != nil {
				s += fmt.Sprintf(" batch %+v", *l.Batch)
			}
			launches = append(launches, s)
		}
		// Its summary's first line says the study's wall time: the one
		// thing that may differ.
		var lines []string
		for _, line := range strings.Split(stdout, "\n") {
			if !strings.HasPrefix(line, "study ") {
				lines = append(lines, line)
			}
		}
		return strings.Join(lines, "\n"), launches
	}
	out1, launches1 := run(true)
	out2, launches2 := run(false)
	if out1 != out2 || !slices.Equal(launches1, launches2) {
		t.Errorf("the same seed made other launches when the simulator's batch launches ran slower than its launches of their own:\n%s\n%s\nagainst\n%s\n%s",
			out1, strings.Join(launches1, "\n"), out2, strings.Join(launches2, "\n"))
	}
}
