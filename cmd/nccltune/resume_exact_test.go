package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// refusalStudy is a timed workload whose study, with seed 2 on the
// simulated 4-rank loopback, confirms three candidates: the first two
// (NCCL_MAX_CTAS=1 with Simple for every op, then its per-function form
// for the ops that gained) are refused for the broadcast call, and the
// third, NCCL_PROTO=…Simple, is recommended once its all-reduce calls
// are measured at their own sizes (phase exact).
var refusalStudy = struct {
	args []string
	name string
}{
	args: []string{"search", "--sim", "h200-loopback", "--np", "4", "--seed", "2",
		"--calls", "all_reduce:10240:240", "--calls", "all_reduce:327680:240", "--calls", "all_reduce:2048000:80",
		"--calls", "all_gather:2048000:13", "--calls", "broadcast:1048576:1"},
	name: "s1-all_reduce-all_gather-broadcast",
}

// wholeRefusalStudy runs refusalStudy uninterrupted and returns it as
// stored.
func wholeRefusalStudy(t *testing.T) studyState {
	t.Helper()
	whole := filepath.Join(t.TempDir(), "whole")
	if _, stderr, code := runCLI(t, whole, refusalStudy.args...); code != 0 {
		t.Fatalf("uninterrupted: exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, whole, refusalStudy.name)
	if s.study.Recommendation == nil || len(s.study.Recommendation.Refusals) < 2 {
		t.Fatalf("the uninterrupted study refused fewer than two candidates: %+v", s.study.Recommendation)
	}
	return s
}

// resumeRefusalStudy runs refusalStudy until stop says so of a progress
// line, then resumes it to its end, and returns it as stored before and
// after the resume.
func resumeRefusalStudy(t *testing.T, stop func(line string) bool) (interrupted, resumed studyState) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if stop(line) {
			cancel()
		}
	}, refusalStudy.args...)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want it interrupted\n%s", code, stderr)
	}
	interrupted = storedStudy(t, db, refusalStudy.name)
	if _, stderr, code := runCLI(t, db, "search", "--resume", refusalStudy.name, "--sim", "h200-loopback", "--np", "4"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	return interrupted, storedStudy(t, db, refusalStudy.name)
}

// checkResumedAsWhole checks that the resumed study ends as the whole one
// does, within its budget, with its confirmation launches interleaved.
func checkResumedAsWhole(t *testing.T, s, whole studyState) {
	t.Helper()
	got, want := s.study.Recommendation, whole.study.Recommendation
	if got == nil || got.Ending != want.Ending || nccl.Config(got.Env).Key() != nccl.Config(want.Env).Key() {
		t.Errorf("resumed study ends %+v, the uninterrupted one %+v", got, want)
	}
	// Confirmation launches are interleaved, one round (a launch per op)
	// of each arm in turn: never more of one trial in a row.
	ops := len(nccl.Workload(s.study.Parts()).Ops())
	run, prev := 0, uint64(0)
	for _, l := range s.launches {
		if l.Phase != vocab.PhaseConfirm {
			run = 0
			continue
		}
		if l.TrialID != prev {
			run = 0
		}
		prev = l.TrialID
		if run++; run > ops {
			t.Fatalf("launch %d: %d confirmation launches of one trial in a row, not interleaved", l.Seq, run)
		}
	}
	if s.study.Launches > s.study.Budget.Launches {
		t.Errorf("%d launches for a budget of %d", s.study.Launches, s.study.Budget.Launches)
	}
}

// A timed workload interrupted at its first launch at the calls' own
// sizes (phase exact: NCCL's plan read per ladder, then the arms measured
// there), in its third confirmation, resumes to the decision the
// uninterrupted study makes with the same seed. It once resumed with the
// refusals forgotten: the baseline alone made a run of confirmation
// launches (its stored ones from every earlier confirmation counted as
// the candidate's partner), a candidate refused earlier was confirmed
// again, and the study kept NCCL's defaults where the whole study
// recommends NCCL_PROTO=…Simple.
func TestResumeDuringExact(t *testing.T) {
	t.Parallel()
	whole := wholeRefusalStudy(t)
	if !slices.ContainsFunc(whole.launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExact }) {
		t.Fatalf("the uninterrupted study made no exact launch to interrupt: %+v", whole.study.Recommendation)
	}
	_, s := resumeRefusalStudy(t, func(line string) bool {
		return strings.HasPrefix(line, "launch ") && strings.Contains(line, " exact ")
	})
	checkResumedAsWhole(t, s, whole)
}

// A study interrupted during its second confirmation, after a refusal,
// resumes with that confirmation: the refused candidate is not confirmed
// again, the candidate the refusal chose (the refused list's per-function
// form, before the ranking's next) is, both arms from the confirmation's
// first launch, and the study ends as the uninterrupted one. Interrupted
// at the second confirmation's first launch (the baseline's: the
// per-function form is not yet stored) and in its middle.
func TestResumeDuringSecondConfirmation(t *testing.T) {
	t.Parallel()
	whole := wholeRefusalStudy(t)
	first := whole.study.Recommendation.Refusals[0]
	if first.Restart == nil || len(first.Restart.NextEnv) == 0 {
		t.Fatalf("the first refusal chose no per-function form to confirm next: %+v", first)
	}
	// The launches of the second confirmation: from the first refusal's
	// restart to the second's.
	from, to := first.Restart.Seq, whole.study.Recommendation.Refusals[1].Restart.Seq
	for _, at := range []int{from, (from + to) / 2} {
		t.Run(fmt.Sprintf("launch %d", at+1), func(t *testing.T) {
			t.Parallel()
			stopped, s := resumeRefusalStudy(t, func(line string) bool {
				return strings.HasPrefix(line, fmt.Sprintf("launch %d/", at+1))
			})
			// The interrupted study keeps its refusal so far, and no decision.
			if stopped.study.Recommendation != nil || len(stopped.study.Refusals) != 1 || stopped.study.Refusals[0].TrialID != first.TrialID {
				t.Fatalf("interrupted at launch %d, the study stored %+v with refusals %+v", at+1, stopped.study.Recommendation, stopped.study.Refusals)
			}
			checkResumedAsWhole(t, s, whole)
			got := s.study.Recommendation
			if len(got.Refusals) != len(whole.study.Recommendation.Refusals) {
				t.Errorf("resumed study refused %+v, the uninterrupted one %+v", got.Refusals, whole.study.Recommendation.Refusals)
			}
			for i := range min(len(got.Refusals), len(whole.study.Recommendation.Refusals)) {
				if g, w := got.Refusals[i], whole.study.Recommendation.Refusals[i]; nccl.Config(g.Env).Key() != nccl.Config(w.Env).Key() {
					t.Errorf("refusal %d: resumed %s, uninterrupted %s", i, nccl.Config(g.Env), nccl.Config(w.Env))
				}
			}
			if len(s.study.Refusals) != 0 {
				t.Errorf("the decided study still keeps its refusals so far: %+v", s.study.Refusals)
			}
			// The refused candidate is not confirmed again after the resume.
			for _, l := range s.launches[len(stopped.launches):] {
				if l.Phase == vocab.PhaseConfirm && l.TrialID == first.TrialID {
					t.Fatalf("launch %d confirms trial %d again, refused before the interruption", l.Seq, l.TrialID)
				}
			}
		})
	}
}
