package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestRepeatedInterruptionsStayWithinBudget: a study stopped again and
// again (Ctrl-C and kill -9 in turn, right after its first launch and
// later, until it finishes) never stores more launches than its budget,
// reads NCCL's plan from one plan launch of the defaults however often it
// resumes, and still ends with its explain launch (the tuner export
// works). Before, every resume warmed up and read the plan again on top:
// repeated kills took a 60-launch study to 62.
func TestRepeatedInterruptionsStayWithinBudget(t *testing.T) {
	t.Parallel()
	const budget, name = 30, "s1-512K-4M"
	db := filepath.Join(t.TempDir(), "db")
	// Launch lines each run may print before it is stopped: the first
	// stops are early (the warm-up and the plan read), then later ones,
	// then right after the first line until the study is done.
	stopAfter := []int{3, 1, 2, 1, 6, 1, 1, 4, 1}
	for i := 0; ; i++ {
		if i > 3*budget {
			t.Fatalf("the study did not finish after %d resumes", i)
		}
		args := []string{"search", "--sim", "spark4", "--band", "512K-4M", "--budget", fmt.Sprint(budget)}
		if i > 0 {
			args = []string{"search", "--resume", name, "--sim", "spark4"}
		}
		n := 1
		if i < len(stopAfter) {
			n = stopAfter[i]
		}
		var code int
		var stderr string
		if i%2 == 0 {
			ctx, cancel := context.WithCancel(context.Background())
			seen := 0
			_, stderr, code = runWatched(ctx, db, func(line string) {
				if strings.HasPrefix(line, "launch ") {
					if seen++; seen == n {
						cancel()
					}
				}
			}, args...)
			cancel()
			if code != 0 && code != exitInterrupted {
				t.Fatalf("run %d: exit %d\n%s", i, code, stderr)
			}
		} else {
			p := startCLI(t, "", nil, nil, append([]string{"--db", db}, args...)...)
			seen := 0
			for line := range p.lines {
				if strings.HasPrefix(line, "launch ") {
					if seen++; seen == n {
						p.cmd.Process.Signal(syscall.SIGKILL)
						break
					}
				}
			}
			code, stderr = p.wait()
			if code != 0 && code != -1 {
				t.Fatalf("run %d: exit %d\n%s", i, code, stderr)
			}
		}
		st := storedStudy(t, db, name)
		if len(st.launches) > budget {
			t.Fatalf("after run %d: %d launches stored, budget %d\n%s", i, len(st.launches), budget, stderr)
		}
		// A stop that lands after the study stored its end (on busy
		// cores the last launch line can come well before the exit) still
		// leaves a finished study: resuming it would be refused.
		if code == 0 || st.study.Status == vocab.StatusDone {
			t.Logf("finished on run %d (exit %d) with %d launches", i, code, len(st.launches))
			break
		}
		// A killed process's lock can trail its exit status a moment.
		for deadline := time.Now().Add(3 * time.Second); st.study.Status != vocab.StatusInterrupted && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			st = storedStudy(t, db, name)
		}
	}
	st := storedStudy(t, db, name)
	if st.study.Status != vocab.StatusDone || st.study.Recommendation == nil {
		t.Fatalf("status %s, recommendation %v", st.study.Status, st.study.Recommendation)
	}
	defaults := map[uint64]bool{}
	for _, tr := range st.trials {
		if tr.Key == "" {
			defaults[tr.ID] = true
		}
	}
	plans := 0
	for _, l := range st.launches {
		if l.Phase == vocab.PhasePlan && defaults[l.TrialID] && l.Reason != benchfmt.ReasonInterrupted {
			plans++
		}
	}
	if plans != 1 {
		t.Errorf("NCCL's plan under the defaults was read by %d launches, want 1", plans)
	}
	if _, stderr, code := runCLI(t, db, "export", name, "--format", "nccl-tuner"); code != 0 {
		t.Errorf("the study has no record of NCCL's choices: exit %d\n%s", code, stderr)
	}
}
