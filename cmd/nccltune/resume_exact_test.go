package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// refusalStudy is a study on the simulated 4-rank loopback that refuses
// a confirmed candidate and confirms another: its arguments and its name.
type refusalStudy struct {
	args []string
	name string
}

// ownSizeFabric is the resume tests' simulated fabric: the 4-rank
// loopback with 1 % noise where a broadcast of 95000 bytes, measured at
// 128K, runs LL under NCCL's defaults and Simple 30 % slower there, while
// at 128K NCCL runs LL128 and Simple is 3 % faster (the profile's
// description says how). A Simple list for the broadcast looks safe
// wherever the search explores and is refused at the call's own size
// (phase exact), by 30 % against launches that vary by 1 %: the path of
// the studies below is the fabric's, not a seed's (each takes it with
// seeds 1 to 5).
const ownSizeFabric = "testdata/resume-own-size.json"

// threeConfirmations is a timed workload searched over NCCL_PROTO and
// NCCL_MAX_NCHANNELS whose study confirms candidates after a refusal at
// a call's own size: the first, NCCL_MAX_NCHANNELS=1 with NCCL_PROTO=Simple
// for the all-reduce and the broadcast (the best explored: one channel
// gains ×1.2 at 327680 bytes and ×1.1 at 2048000, Simple ×1.29 at 12000),
// is refused for the broadcast call at its own size (phase exact); the
// next, the cap with LL for the broadcast, is read and measured at the
// calls' own sizes and recommended at a look of its sequential
// confirmation (×1.20 a step). Before the candidate's plan was read ahead
// of the own-size reads (standsNear), the study confirmed three: the Simple
// list alone was refused too, and NCCL_PROTO=allreduce:Simple shipped at
// ×1.14 (the name stayed).
var threeConfirmations = refusalStudy{
	args: []string{"search", "--sim", ownSizeFabric, "--np", "4", "--seed", "7",
		"--space-only", "--space", "NCCL_PROTO", "--space", "NCCL_MAX_NCHANNELS",
		"--calls", "all_reduce:12000:240", "--calls", "all_reduce:327680:240", "--calls", "all_reduce:2048000:80",
		"--calls", "broadcast:95000:1"},
	name: "s1-all_reduce-broadcast",
}

// perFunctionNext is a timed workload searched over NCCL_PROTO and
// NCCL_ALGO only, whose study confirms NCCL_PROTO=Simple (written per
// function for the workload's three ops: it gains ×1.29 for the
// 10240-byte all-reduce) and refuses it for its broadcast of 95000 bytes
// at that size, where Simple is 30 % slower (ownSizeFabric); a list
// alone, its per-function form for the ops that gained (the all-reduce,
// and the all-gather where its launches happened to measure faster) runs
// the broadcast as NCCL's defaults do, and is confirmed next
// (Restart.NextEnv) and recommended.
var perFunctionNext = refusalStudy{
	args: []string{"search", "--sim", ownSizeFabric, "--np", "4", "--seed", "3",
		"--space-only", "--space", "NCCL_PROTO", "--space", "NCCL_ALGO",
		"--calls", "all_reduce:10240:240", "--calls", "all_reduce:327680:240", "--calls", "all_reduce:2048000:80",
		"--calls", "all_gather:2048000:13", "--calls", "broadcast:95000:1"},
	name: "s1-all_reduce-all_gather-broadcast",
}

// alltoallRefuses is a timed workload of all-reduces, searched over
// NCCL_PROTO and NCCL_MAX_NCHANNELS with alltoall guarded (measured only
// by a confirmation), whose study refuses its best explored config, one
// channel with NCCL_PROTO=allreduce:Simple, for the alltoall, which one
// channel makes 20-78 % slower from 8K to 320K on ownSizeFabric
// (exploration never measures it), then confirms the ranking's next, the list alone (one
// channel alone is 14 % slower for the 81920-byte all-reduce, which
// exploration sees), and recommends it: clear gains and a clear
// slowdown, decided alike whatever the noise of a resumed study's
// launches (seeds 1 to 5 all take this path).
var alltoallRefuses = refusalStudy{
	args: []string{"search", "--sim", ownSizeFabric, "--np", "4", "--seed", "3",
		"--space-only", "--space", "NCCL_PROTO", "--space", "NCCL_MAX_NCHANNELS", "--guard-ops", "alltoall",
		"--calls", "all_reduce:10240:760", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:327680:50"},
	name: "s1-all_reduce",
}

// whole runs the study uninterrupted and returns it as stored, with at
// least refusals refusals.
func (rs refusalStudy) whole(t *testing.T, refusals int) studyState {
	t.Helper()
	whole := filepath.Join(t.TempDir(), "whole")
	if _, stderr, code := runCLI(t, whole, rs.args...); code != 0 {
		t.Fatalf("uninterrupted: exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, whole, rs.name)
	if s.study.Recommendation == nil || len(s.study.Recommendation.Refusals) < refusals {
		t.Fatalf("the uninterrupted study refused fewer than %d candidates: %+v", refusals, s.study.Recommendation)
	}
	return s
}

// sim is the fabric the study's arguments name (--sim), for its resume.
func (rs refusalStudy) sim() string {
	i := slices.Index(rs.args, "--sim")
	return rs.args[i+1]
}

// resumed runs the study until stop says so of a progress line, then
// resumes it to its end, and returns it as stored before and after the
// resume, and what show said of it interrupted.
func (rs refusalStudy) resumed(t *testing.T, stop func(line string) bool) (interrupted, resumed studyState, shown string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if stop(line) {
			cancel()
		}
	}, rs.args...)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want it interrupted\n%s", code, stderr)
	}
	interrupted = storedStudy(t, db, rs.name)
	shown, stderr, code = runCLI(t, db, "show", rs.name)
	if code != 0 {
		t.Fatalf("show of the interrupted study: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", rs.name, "--sim", rs.sim(), "--np", "4"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	return interrupted, storedStudy(t, db, rs.name), shown
}

// checkResumedAsWhole checks that the resumed study ends as the whole one
// does, within its budget, with its confirmation launches interleaved.
func checkResumedAsWhole(t *testing.T, s, whole studyState) {
	t.Helper()
	got, want := s.study.Recommendation, whole.study.Recommendation
	if got == nil || got.Ending != want.Ending || nccl.Config(got.Env).Key() != nccl.Config(want.Env).Key() {
		t.Errorf("resumed study ends %+v, the uninterrupted one %+v", got, want)
	}
	checkInterleaved(t, s)
}

// checkInterleaved checks that the study's confirmation launches are
// interleaved, one round (a launch per op) of each arm in turn, never
// more of one trial in a row, and that it kept to its budget.
func checkInterleaved(t *testing.T, s studyState) {
	t.Helper()
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

// checkNotConfirmedAgain checks that no launch the resumed study made
// after the interruption confirms a trial refused before it.
func checkNotConfirmedAgain(t *testing.T, stopped, s studyState) {
	t.Helper()
	for _, l := range s.launches[len(stopped.launches):] {
		if l.Phase == vocab.PhaseConfirm && slices.ContainsFunc(stopped.study.Refusals, func(r store.Refusal) bool { return r.TrialID == l.TrialID }) {
			t.Fatalf("launch %d confirms trial %d again, refused before the interruption", l.Seq, l.TrialID)
		}
	}
}

// A timed workload interrupted at the calls' own sizes (phase exact:
// NCCL's plan read per ladder, then the arms measured there), in its
// confirmation after a refusal, resumes to the decision the uninterrupted study makes
// with the same seed: interrupted after its first exact launch (a read),
// and after its first measurement there (the baseline's, the reads made).
// It once resumed with the refusals forgotten: the baseline alone made a
// run of confirmation launches (its stored ones from every earlier
// confirmation counted as the candidate's partner), a candidate refused
// earlier was confirmed again, and the study kept NCCL's defaults where
// the whole study recommends NCCL_PROTO=…Simple. And it read every
// ladder again, and measured it from its first launch.
func TestResumeDuringExact(t *testing.T) {
	t.Parallel()
	whole := threeConfirmations.whole(t, 1)
	if !slices.ContainsFunc(whole.launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExact && l.Debug }) {
		t.Fatalf("the uninterrupted study made no exact read to interrupt: %+v", whole.study.Recommendation)
	}
	// The last confirmation's exact launches: those from the last
	// refusal's restart on (the second confirmation's candidate was
	// measured at its calls' sizes too, and refused there).
	refusals := whole.study.Recommendation.Refusals
	last := refusals[len(refusals)-1].Restart.Seq
	before, reads := 0, 0
	for _, l := range whole.launches {
		switch {
		case l.Phase != vocab.PhaseExact:
		case l.Seq < last:
			before++
		case l.Debug:
			reads++
		}
	}
	if i := slices.IndexFunc(whole.launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExact && l.Seq >= last }); i < 0 || !whole.launches[i].Debug {
		t.Fatalf("the last confirmation's first exact launch is no read of NCCL's plan")
	}
	if len(exactRuns(whole)) == 0 {
		t.Fatalf("the uninterrupted study measured no call at its own size")
	}
	for _, at := range []int{before + 1, before + reads + 1} {
		t.Run(fmt.Sprintf("exact launch %d", at), func(t *testing.T) {
			t.Parallel()
			seen := 0
			_, s, _ := threeConfirmations.resumed(t, func(line string) bool {
				if strings.HasPrefix(line, "launch ") && strings.Contains(line, " exact ") {
					seen++
				}
				return seen == at
			})
			checkResumedAsWhole(t, s, whole)
			// Each arm's ladder is read once: a read the interruption did
			// not stop is not made again.
			read := map[string]int{}
			for _, l := range s.launches {
				if l.Phase == vocab.PhaseExact && l.Debug && l.Outcome == benchfmt.OK {
					k := fmt.Sprintf("trial %d, %d-%d", l.TrialID, l.MinBytes, l.MaxBytes)
					if read[k]++; read[k] > 1 {
						t.Errorf("launch %d reads %s again", l.Seq, k)
					}
				}
			}
			// Each arm is measured at each call's own size as often as in
			// the uninterrupted study: the measurements made before the
			// interruption count, and none is made again. (Not the arms'
			// counts since the last refusal: the baseline's measurements
			// there from an earlier confirmation count for this one too.)
			if got, want := exactRuns(s), exactRuns(whole); !maps.Equal(got, want) {
				t.Errorf("measured at the calls' own sizes %v, the uninterrupted study %v", got, want)
			}
		})
	}
}

// exactRuns counts the study's measurements at its calls' own sizes
// (phase exact, not NCCL's plan read), by config and ladder.
func exactRuns(s studyState) map[string]int {
	config := map[uint64]string{}
	for _, tr := range s.trials {
		config[tr.ID] = tr.Config.String()
	}
	n := map[string]int{}
	for _, l := range s.launches {
		if l.Phase == vocab.PhaseExact && !l.Debug && l.Outcome == benchfmt.OK {
			n[fmt.Sprintf("%s at %d-%d", config[l.TrialID], l.MinBytes, l.MaxBytes)]++
		}
	}
	return n
}

// A study interrupted during its second confirmation, after a refusal,
// resumes with that confirmation: the refused candidate is not confirmed
// again, the next one is, both arms from the confirmation's first launch,
// and the study ends as the uninterrupted one. Interrupted before the
// second confirmation's first launch and in its middle.
func TestResumeDuringSecondConfirmation(t *testing.T) {
	t.Parallel()
	whole := alltoallRefuses.whole(t, 1)
	first := whole.study.Recommendation.Refusals[0]
	if first.Restart == nil {
		t.Fatalf("no confirmation followed the refusal: %+v", first)
	}
	// The second confirmation's launches: from the first refusal's
	// restart on. Progress numbers launches from 1: line "launch N/"
	// tells of seq N-1, and the study stops before its next launch.
	from, to := first.Restart.Seq, whole.study.Launches
	for _, at := range []int{from, (from + to) / 2} {
		t.Run(fmt.Sprintf("after launch %d", at), func(t *testing.T) {
			t.Parallel()
			stopped, s, _ := alltoallRefuses.resumed(t, func(line string) bool {
				return strings.HasPrefix(line, fmt.Sprintf("launch %d/", at))
			})
			// The interrupted study keeps its refusal so far, and no decision.
			if stopped.study.Recommendation != nil || len(stopped.study.Refusals) != 1 || stopped.study.Refusals[0].TrialID != first.TrialID {
				t.Fatalf("interrupted after launch %d, the study stored %+v with refusals %+v", at, stopped.study.Recommendation, stopped.study.Refusals)
			}
			checkResumedAsWhole(t, s, whole)
			checkNotConfirmedAgain(t, stopped, s)
			got := s.study.Recommendation
			if len(got.Refusals) != 1 || got.Refusals[0].TrialID != first.TrialID || got.Refusals[0].Reason != stopped.study.Refusals[0].Reason {
				t.Errorf("resumed study refused %+v, before the interruption %+v", got.Refusals, stopped.study.Refusals)
			}
			if len(s.study.Refusals) != 0 {
				t.Errorf("the decided study still keeps its refusals so far: %+v", s.study.Refusals)
			}
		})
	}
	// A refusal that chose the refused list's per-function form to confirm
	// next: the resumed study confirms that form, not the ranking's next.
	// Interrupted in the middle of that form's confirmation.
	t.Run("per-function form next", func(t *testing.T) {
		t.Parallel()
		whole := perFunctionNext.whole(t, 1)
		first := whole.study.Recommendation.Refusals[0]
		if first.Restart == nil || len(first.Restart.NextEnv) == 0 {
			t.Fatalf("the first refusal chose no per-function form to confirm next: %+v", first)
		}
		// The form's confirmation: from the refusal's restart to the
		// study's last confirmation launch.
		to := first.Restart.Seq
		for _, l := range whole.launches {
			if l.Phase == vocab.PhaseConfirm {
				to = max(to, l.Seq)
			}
		}
		at := (first.Restart.Seq + to) / 2
		stopped, s, shown := perFunctionNext.resumed(t, func(line string) bool {
			return strings.HasPrefix(line, fmt.Sprintf("launch %d/", at))
		})
		checkInterleaved(t, s)
		checkNotConfirmedAgain(t, stopped, s)
		// The first candidate's confirmation launch after the resume.
		var next *store.Trial
		for _, l := range s.launches[len(stopped.launches):] {
			i := slices.IndexFunc(s.trials, func(tr *store.Trial) bool { return tr.ID == l.TrialID })
			if l.Phase == vocab.PhaseConfirm && i >= 0 && s.trials[i].Role != vocab.RoleBaseline {
				next = s.trials[i]
				break
			}
		}
		if next == nil || next.Config.Key() != nccl.Config(first.Restart.NextEnv).Key() {
			t.Errorf("the resumed study confirmed %+v first, not the per-function form %s", next, nccl.Config(first.Restart.NextEnv))
		}
		// show of the interrupted study decides nothing, and compares the
		// confirmation under way: the per-function form against the
		// baseline's launches since the refusal, not the refused candidate
		// against every confirmation's.
		i := strings.Index(shown, "│ NCCL defaults │ ")
		if i < 0 || !strings.Contains(shown, "recommendation: none") {
			t.Fatalf("show of the interrupted study:\n%s", shown)
		}
		head := shown[i : i+strings.IndexByte(shown[i:], '\n')]
		// The cell is padded: the form's name alone between its rules
		// (not a longer config that holds it).
		if !regexp.MustCompile(`│ +` + regexp.QuoteMeta(nccl.Config(first.Restart.NextEnv).String()) + ` +│`).MatchString(head) {
			t.Errorf("show compares %q, not the per-function form under confirmation %s", head, nccl.Config(first.Restart.NextEnv))
		}
	})
}

// decidedOnSixLaunches is a timed workload whose study, with seed 3,
// recommends at the first look of a sequential confirmation (on 6
// launches per arm), then tops up its calls' launches past that look
// and makes its explain launch.
var decidedOnSixLaunches = refusalStudy{
	args: []string{"search", "--sim", "h200-loopback", "--np", "4", "--seed", "3",
		"--calls", "all_reduce:10240:760", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:327680:50"},
	name: "s1-all_reduce",
}

// lookOf is the sequential confirmation's look a decision's reason
// names, "look K of N"; "" when it names none (a design of one look).
func lookOf(reason string) string {
	return regexp.MustCompile(`look \d+ of \d+`).FindString(reason)
}

// checkSameDecision checks that the resumed study's decision is the
// uninterrupted one's, number for number: its speedup, interval, the
// interval's level, p-value, the look it stopped at, ending and env.
func checkSameDecision(t *testing.T, s, whole studyState) {
	t.Helper()
	got, want := s.study.Recommendation, whole.study.Recommendation
	if got == nil {
		t.Fatalf("the resumed study stored no decision")
	}
	if got.Speedup != want.Speedup || got.SpeedupCI != want.SpeedupCI || got.CILevel != want.CILevel || got.PValue != want.PValue ||
		lookOf(got.Reason) != lookOf(want.Reason) || got.Ending != want.Ending || nccl.Config(got.Env).Key() != nccl.Config(want.Env).Key() {
		t.Logf("resumed %s\nwhole %s", got.Reason, want.Reason)
		t.Errorf("resumed: %s ×%.4g %v (%s) p=%.3g at %q\nuninterrupted: %s ×%.4g %v (%s) p=%.3g at %q",
			got.Ending, got.Speedup, got.SpeedupCI, got.CILevel.Label(), got.PValue, lookOf(got.Reason),
			want.Ending, want.Speedup, want.SpeedupCI, want.CILevel.Label(), want.PValue, lookOf(want.Reason))
	}
	// The guard sizes' rows: judged on the same launches, the same rows.
	if !reflect.DeepEqual(got.Guards, want.Guards) {
		t.Errorf("resumed guard rows %+v\nuninterrupted %+v", got.Guards, want.Guards)
	}
}

// guardedAfterTopUps is decidedOnSixLaunches with seed 1 and a guard
// size: its first confirmation recommends on 6 launches per arm, where
// all_reduce at 2M is not yet significantly slower, and the calls' top-ups
// then make it so (+6.2 % time on 8 launches per arm): the guard, judged
// again, refuses it, and the study recommends the next candidate.
var guardedAfterTopUps = refusalStudy{
	args: []string{"search", "--sim", "h200-loopback", "--np", "4", "--seed", "1",
		"--calls", "all_reduce:10240:760", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:327680:50", "--guard", "2M"},
	name: "s1-all_reduce",
}

// A study does not ship a config its own stored guard row calls
// significantly slower by more than the minimum effect. The guard sizes
// were judged at the confirmation's decision only, on the launches made
// so far, while the rows were computed after the calls' top-ups on all of
// them: this study recommended NCCL_ALGO=allreduce:Tree
// NCCL_MAX_NCHANNELS=1 NCCL_PROTO=allreduce:Simple with all_reduce 2M
// +6.2 % slower in its own table.
func TestNoShipPastSlowGuardRow(t *testing.T) {
	t.Parallel()
	whole := guardedAfterTopUps.whole(t, 0)
	r := whole.study.Recommendation
	if r == nil || len(r.Guards) == 0 {
		t.Fatalf("the study stored no decision or no guard rows: %+v", r)
	}
	// The path: a candidate refused at the guard size after the top-ups.
	if len(r.Refusals) == 0 || r.Refusals[0].Ending != vocab.EndingGuard {
		t.Fatalf("no candidate was refused at the guard size (refusals %+v): the seed no longer takes the path", r.Refusals)
	}
	for _, g := range r.Guards {
		if r.Ending == vocab.EndingRecommended && g.Significant && g.Speedup <= 1/(1+vocab.DefaultMinEffect) {
			t.Errorf("recommended %s (%s) while its guard row at %d bytes is significantly slower (×%.4f, p=%.3g, %d+%d launches)",
				nccl.Config(r.Env), r.Reason, g.Bytes, g.Speedup, g.PValue, g.BaselineLaunches, g.CandidateLaunches)
		}
	}
}

// A study interrupted at its explain launch, after its decision and its
// calls' top-up launches, with no measurement launch to redo, resumes to
// the uninterrupted study's decision on the same launches. It once
// re-planned the confirmation from the budget the resume had left (a
// design of other looks and levels), and judged its first look on every
// stored launch, the top-ups made after the decision included: ×1.55
// [1.42, 1.77] (99.58% CI) at look 1 of 8 on 6 launches per arm became
// ×1.55 [1.45, 1.61] (95% CI) on 8.
func TestResumeAtExplainDecidesAsWhole(t *testing.T) {
	t.Parallel()
	for _, rs := range []refusalStudy{decidedOnSixLaunches, threeConfirmations, guardedAfterTopUps} {
		t.Run(rs.name, func(t *testing.T) {
			t.Parallel()
			whole := rs.whole(t, 0)
			if lookOf(whole.study.Recommendation.Reason) == "" {
				t.Fatalf("the uninterrupted study decided at no look of a sequential confirmation: %s", whole.study.Recommendation.Reason)
			}
			// Progress line "launch N/" tells of seq N-1: the study stops
			// before seq N, the recommended candidate's first explain
			// launch, made after its confirmation decided: at the study's
			// end, or before its calls were judged (readCandidate,
			// checkExact). A refused candidate's early read comes before a
			// later confirmation, whose launches a resume makes one seq
			// later (its warm-up first), on other simulated noise.
			won := whole.study.Recommendation.TrialID
			i := slices.IndexFunc(whole.launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExplain && l.TrialID == won })
			if i < 0 {
				t.Fatalf("the uninterrupted study made no explain launch of its candidate, trial %d", won)
			}
			at := whole.launches[i].Seq
			_, s, _ := rs.resumed(t, func(line string) bool {
				return strings.HasPrefix(line, fmt.Sprintf("launch %d/", at))
			})
			checkSameDecision(t, s, whole)
		})
	}
}

// earlyRead is a timed workload with a start-up 4-byte all-reduce on
// spark4 whose study reads its candidate's plan (its explain launch)
// before its calls are topped up and judged (search's readCandidate): the
// 4-byte call is not shown safe at the confirmation's decision, and the
// cap's plan is uncertain by rule until read. It then tops up the calls'
// rounds until its budget of 75 ends them, and recommends.
var earlyRead = refusalStudy{
	args: []string{"search", "--sim", "spark4", "--np", "4", "--seed", "1", "--budget", "75",
		"--calls", "all_reduce:4:1", "--calls", "all_reduce:524288:300", "--calls", "all_reduce:1048576:300", "--calls", "all_reduce:2097152:100"},
	name: "s1-all_reduce",
}

// A study interrupted just after that early read resumes to the
// uninterrupted study's decision, without reading the candidate again:
// the read counts as made (search's restoreEarlyRead), and the explain
// reserve it took is not held back a second time.
func TestResumeAfterTheCandidatesEarlyRead(t *testing.T) {
	t.Parallel()
	whole := earlyRead.whole(t, 0)
	early := slices.IndexFunc(whole.launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExplain })
	if early < 0 || !slices.ContainsFunc(whole.launches[early:], func(l *store.Launch) bool { return l.Phase == vocab.PhaseConfirm }) {
		t.Fatalf("the uninterrupted study made no explain launch before a confirmation launch: the test no longer takes the path")
	}
	_, s, _ := earlyRead.resumed(t, func(line string) bool {
		return strings.HasPrefix(line, "launch ") && strings.Contains(line, " explain ")
	})
	checkResumedAsWhole(t, s, whole)
	reads := map[uint64]int{}
	for _, l := range s.launches {
		if l.Phase == vocab.PhaseExplain && l.Outcome == benchfmt.OK {
			reads[l.TrialID]++
		}
	}
	for id, n := range reads {
		if n > 1 {
			t.Errorf("trial %d was read %d times", id, n)
		}
	}
	// Both spend the whole budget, the resume's warm-up included: the
	// reserve the read took is not held back again (it stopped the
	// resumed study's top-ups one launch sooner).
	if got, want := len(s.launches), len(whole.launches); got != want || want != 75 {
		t.Errorf("the resumed study made %d launches, the uninterrupted one %d, want the budget's 75 each", got, want)
	}
}
