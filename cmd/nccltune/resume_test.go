package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
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

// TestResumeAStudyStoredBeforeGuardPlans: a study that guards ops, as an
// nccltune from before the guarded ops' plan launches stored it (none of
// them among its launches, its budget at that day's minimum, 115 where
// today's is 119; or above it), resumes, and makes none of them: its
// launches went past the plan phase, so none is owed, and the budget
// neither counts them nor lends them the confirmation's reserve.
func TestResumeAStudyStoredBeforeGuardPlans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	today := filepath.Join(dir, "today")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, today, func(line string) {
		if strings.HasPrefix(line, "launch 12/") {
			cancel()
		}
	}, "search", "--sim", "spark4", "--part", "all_reduce:512K-4M", "--budget", "119", "--name", "g")
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	made := storedStudy(t, today, "g")
	guardPlan := func(l *store.Launch) bool {
		return l.Phase == vocab.PhasePlan && l.Op.OrAllReduce() != nccl.AllReduce
	}
	for _, budget := range []int{115, 140} {
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "db")
			if dropped := storeAsBeforeGuardPlans(t, today, made, db, budget, guardPlan); dropped != 4 {
				t.Fatalf("%d guarded ops' plan launches left out of the stored study, want 4 (all_gather, reduce_scatter, broadcast, reduce)", dropped)
			}
			if _, stderr, code := runCLI(t, db, "search", "--resume", "g", "--sim", "spark4"); code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, stderr)
			}
			resumed := storedStudy(t, db, "g")
			if resumed.study.Status != vocab.StatusDone {
				t.Errorf("resumed study %s (%s), want done", resumed.study.Status, resumed.study.Reason)
			}
			for _, l := range resumed.launches {
				if guardPlan(l) {
					t.Errorf("launch %d: a plan launch of guarded %s, which the study stored before them does not owe", l.Seq, l.Op)
				}
			}
			if n := len(resumed.launches); n > budget || n <= len(made.launches)-4 {
				t.Errorf("%d launches stored, want more than the %d before resuming and at most the budget %d", n, len(made.launches)-4, budget)
			}
		})
	}
}

// storeAsBeforeGuardPlans stores in db, as study g with the given budget,
// the study made in src (its trials, and its launches in order with their
// output) less the launches drop picks, and returns how many it dropped.
func storeAsBeforeGuardPlans(t *testing.T, src string, made studyState, db string, budget int, drop func(*store.Launch) bool) int {
	t.Helper()
	from := openStore(t, src)
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study := *made.study
	study.ID, study.Budget.Launches, study.Status = 0, budget, vocab.StatusInterrupted
	if err := st.CreateStudy(&study); err != nil {
		t.Fatal(err)
	}
	trialIDs := map[uint64]uint64{}
	trials := slices.Clone(made.trials)
	slices.SortFunc(trials, func(a, b *store.Trial) int { return a.Number - b.Number })
	for _, tr := range trials {
		c := *tr
		c.ID, c.StudyID, c.Launches = 0, study.ID, 0
		if err := st.AddTrial(&c); err != nil {
			t.Fatal(err)
		}
		trialIDs[tr.ID] = c.ID
	}
	launches := slices.Clone(made.launches)
	slices.SortFunc(launches, func(a, b *store.Launch) int { return a.Seq - b.Seq })
	dropped := 0
	for _, l := range launches {
		if drop(l) {
			dropped++
			continue
		}
		raw, err := from.RawOutput(l.ID)
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		c.ID, c.StudyID, c.TrialID = 0, study.ID, trialIDs[l.TrialID]
		if err := st.AddLaunch(&c, raw); err != nil {
			t.Fatal(err)
		}
	}
	return dropped
}

// TestResumeInsideThePlanPhaseOwesGuardPlans: a study interrupted among
// the guarded ops' plan launches has made no launch past the plan phase:
// resumed, it makes each one it still owes, once.
func TestResumeInsideThePlanPhaseOwesGuardPlans(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 3/") {
			cancel()
		}
	}, "search", "--sim", "spark4", "--part", "all_reduce:512K-4M", "--budget", "119", "--name", "g")
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, l := range storedStudy(t, db, "g").launches {
		if l.Phase != vocab.PhasePlan && l.Phase != vocab.PhaseWarmup {
			t.Fatalf("launch %d is of phase %s: the study was not interrupted in its plan phase, and the test checks nothing", l.Seq, l.Phase)
		}
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", "g", "--sim", "spark4"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	plans := map[nccl.Op]int{}
	for _, l := range storedStudy(t, db, "g").launches {
		if l.Phase == vocab.PhasePlan && l.Op.OrAllReduce() != nccl.AllReduce && l.Reason != benchfmt.ReasonInterrupted {
			plans[l.Op]++
		}
	}
	for _, op := range []nccl.Op{nccl.AllGather, nccl.ReduceScatter, nccl.Broadcast, nccl.Reduce} {
		if plans[op] != 1 {
			t.Errorf("%d plan launches of guarded %s made, want 1", plans[op], op)
		}
	}
}
