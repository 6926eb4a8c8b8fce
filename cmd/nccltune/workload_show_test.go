package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// fillWorkloadDB stores, by hand, a finished study of a workload of two
// parts (all-reduce 512K-1M weight 0.75, broadcast 512K-1M weight 0.25)
// with alltoall guarded: its candidate is faster for both parts but
// alltoall refused it at 1M. Its launches: a warm-up, exploration and
// confirmation rounds of both ops, and the guard's alltoall launches.
func fillWorkloadDB(t testing.TB, path string) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kib, mib := int64(nccl.KiB), int64(nccl.MiB)
	study := &store.Study{Kind: vocab.KindSearch, Band: "512K-1M", BandMin: 512 * kib, BandMax: mib,
		Sizes: []int64{512 * kib, mib}, GuardSizes: []int64{4 * mib}, Collective: "all_reduce",
		Workload: []store.Part{
			{Op: nccl.AllReduce, Band: "512K-1M", BandMin: 512 * kib, BandMax: mib, Weight: 0.75},
			{Op: nccl.Broadcast, Band: "512K-1M", BandMin: 512 * kib, BandMax: mib, Weight: 0.25}},
		GuardOps:  []nccl.Op{nccl.AllToAll},
		Space:     map[string][]string{"NCCL_MAX_NCHANNELS": {"", "1", "2"}},
		Launch:    store.LaunchSettings{Launcher: "sim", NP: 4, Timeout: 5 * time.Minute, SimProfile: "h200-loopback", SimNoise: 1, SimSeed: 1},
		Platform:  store.Platform{NCCLVersion: "2.28.3", Ranks: 4, Nodes: 4, GPU: "NVIDIA H200 (simulated)", Transport: "Socket"},
		Search:    &store.SearchSettings{MinEffect: 0.03, GuardLaunches: 2, ScopeLists: true},
		Simulated: true, Seed: 1, Budget: store.Budget{Launches: 40}}
	if err := st.CreateStudy(study); err != nil {
		t.Fatal(err)
	}
	base := &store.Trial{StudyID: study.ID, Role: vocab.RoleBaseline, State: vocab.TrialComplete}
	cand := &store.Trial{StudyID: study.ID, Role: vocab.RoleCandidate, State: vocab.TrialComplete, Config: nccl.Config{"NCCL_MAX_NCHANNELS": "1"}}
	for _, tr := range []*store.Trial{base, cand} {
		if err := st.AddTrial(tr); err != nil {
			t.Fatal(err)
		}
	}
	seq := 0
	launch := func(tr *store.Trial, op nccl.Op, phase string, us float64) {
		l := &store.Launch{StudyID: study.ID, TrialID: tr.ID, Seq: seq, Phase: phase, Op: op, Outcome: benchfmt.OK,
			Scored: phase != vocab.PhaseWarmup, ScoreUS: us, Simulated: true,
			Sizes: []benchfmt.Size{{Bytes: 512 * kib, TimeUS: us / 2}, {Bytes: mib, TimeUS: us}}}
		seq++
		if err := st.AddLaunch(l, &store.Raw{Stdout: []byte(fmt.Sprintf("# %s %v\n", op, us))}); err != nil {
			t.Fatal(err)
		}
	}
	launch(base, nccl.AllReduce, vocab.PhaseWarmup, 900)
	for _, phase := range []string{vocab.PhaseExplore, vocab.PhaseConfirm, vocab.PhaseConfirm} {
		for _, tr := range []*store.Trial{base, cand} {
			launch(tr, nccl.AllReduce, phase, map[*store.Trial]float64{base: 800, cand: 700}[tr])
			launch(tr, nccl.Broadcast, phase, map[*store.Trial]float64{base: 400, cand: 380}[tr])
		}
	}
	for range 2 {
		launch(base, nccl.AllToAll, vocab.PhaseGuard, 450)
		launch(cand, nccl.AllToAll, vocab.PhaseGuard, 540)
	}
	row := func(op nccl.Op, b int64, bu, cu float64, sig bool) store.SizeComparison {
		return store.SizeComparison{Op: op, Bytes: b, CILevel: 0.95, BaselineUS: bu, BaselineLo: bu * 0.95, BaselineHi: bu * 1.05,
			CandidateUS: cu, CandidateLo: cu * 0.95, CandidateHi: cu * 1.05, Speedup: bu / cu, Significant: sig, PValue: 0.01}
	}
	study.Status = vocab.StatusDone
	study.Recommendation = &store.Recommendation{Env: map[string]string{}, Speedup: 1.11, SpeedupCI: [2]float64{1.06, 1.16}, CILevel: 0.95,
		PValue: 0.002, Ending: vocab.EndingOpRegression, MinEffect: 0.03, BaselineScoreUS: 600, ScoreUS: 540,
		Reason:           "NCCL_MAX_NCHANNELS=1 is faster for the workload but significantly slower for alltoall at 1M (+20.0% time); keep NCCL's defaults",
		CandidateTrialID: cand.ID, BaselineLaunches: 2, CandidateLaunches: 2, PerSize: []store.SizeComparison{}, Dropped: []nccl.Drop{},
		Guards: []store.SizeComparison{row(nccl.AllReduce, 4*mib, 3000, 2950, false), row(nccl.Broadcast, 4*mib, 1500, 1490, false)},
		Parts: []store.PartComparison{
			{Op: nccl.AllReduce, Band: "512K-1M", Weight: 0.75, Speedup: 1.14, SpeedupCI: [2]float64{1.08, 1.2}, CILevel: 0.95, Significant: true, PValue: 0.002,
				BaselineScoreUS: 566, ScoreUS: 495, PerSize: []store.SizeComparison{row(nccl.AllReduce, 512*kib, 400, 350, true), row(nccl.AllReduce, mib, 800, 700, true)}},
			{Op: nccl.Broadcast, Band: "512K-1M", Weight: 0.25, Speedup: 1.05, SpeedupCI: [2]float64{0.99, 1.1}, CILevel: 0.95, PValue: 0.08,
				BaselineScoreUS: 283, ScoreUS: 269, PerSize: []store.SizeComparison{row(nccl.Broadcast, 512*kib, 200, 190, false), row(nccl.Broadcast, mib, 400, 380, false)}}},
		OpGuards: []store.OpGuard{{Op: nccl.AllToAll, Sizes: []int64{512 * kib, mib, 4 * mib}, Speedup: 0.85, SpeedupCI: [2]store.JSONFloat{0.8, 0.9}, CILevel: 0.95,
			Slower: true, Refused: true, WorstBytes: mib, WorstSpeedup: 0.833, PValue: 0.001, Level: 0.0167, BaselineLaunches: 2, CandidateLaunches: 2,
			PerSize: []store.GuardSize{{Bytes: 512 * kib, Speedup: 0.9, PValue: 0.01, Level: 0.025, Significant: true},
				{Bytes: mib, Speedup: 0.833, PValue: 0.001, Level: 0.0167, Significant: true, Slower: true},
				{Bytes: 4 * mib, Speedup: 0.99, PValue: 0.4, Level: 0.05}}}},
	}
	if err := st.UpdateStudy(study); err != nil {
		t.Fatal(err)
	}
}

// show of a workload study prints every part's sizes, grouped by op, then
// the guard sizes of each op (not only the first op's table), and how the
// launches were spent per op (its parts' bands, or guarded) and in all on
// the parts and on the guards; the JSON says the same.
func TestShowWorkloadGolden(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "workload.db")
	fillWorkloadDB(t, db)
	stdout, stderr, code := runCLI(t, db, "show", "s1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGolden(t, "show/workload.golden", []byte(stdout))

	// Its curves: every launch of both parts' ops and of the guarded op,
	// each row with its op.
	stdout, stderr, code = runCLI(t, db, "show", "s1", "--format", "csv", "--curves")
	if code != 0 {
		t.Fatalf("show --curves: exit %d: %s", code, stderr)
	}
	checkGolden(t, "show/workload_curves.golden", []byte(stdout))

	stdout, stderr, code = runCLI(t, db, "show", "s1", "--json")
	if code != 0 {
		t.Fatalf("show --json: exit %d: %s", code, stderr)
	}
	var doc struct {
		LaunchesByOp []struct {
			Op       string   `json:"op"`
			Role     string   `json:"role"`
			Bands    []string `json:"bands"`
			Launches int      `json:"launches"`
		} `json:"launches_by_op"`
		Spent *struct {
			Parts  int `json:"parts"`
			Guards int `json:"guards"`
		} `json:"launches_spent"`
	}
	decodeOneJSON(t, stdout, &doc)
	var got []string
	for _, c := range doc.LaunchesByOp {
		got = append(got, fmt.Sprintf("%s %s %s %d", c.Op, c.Role, strings.Join(c.Bands, ","), c.Launches))
	}
	if want := "all_reduce part 512K-1M 7|alltoall guard  4|broadcast part 512K-1M 6"; strings.Join(got, "|") != want {
		t.Errorf("launches_by_op %q, want %q", strings.Join(got, "|"), want)
	}
	if doc.Spent == nil || doc.Spent.Parts != 13 || doc.Spent.Guards != 4 {
		t.Errorf("launches_spent %+v, want 13 on the parts and 4 on the guards", doc.Spent)
	}
}

// history says what show says of a study a guarded op refused: the
// candidate makes alltoall slower, not "no significant gain" (the summary
// history reads records the refusal).
func TestHistorySaysTheRefusal(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "workload.db")
	fillWorkloadDB(t, db)
	stdout, stderr, code := runCLI(t, db, "history")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if line := "keep NCCL defaults (refused: alltoall at 1M)"; !strings.Contains(stdout, line) {
		t.Errorf("history:\n%s\nwant %q", stdout, line)
	}
	stdout, _, _ = runCLI(t, db, "history", "--json")
	var doc struct {
		Studies []struct {
			Recommendation struct {
				Verdict string `json:"verdict"`
				Refused string `json:"refused"`
			} `json:"recommendation"`
		} `json:"studies"`
	}
	decodeOneJSON(t, stdout, &doc)
	want := "keep NCCL defaults: the candidate makes alltoall at 1M significantly slower"
	if len(doc.Studies) != 1 || doc.Studies[0].Recommendation.Verdict != want || doc.Studies[0].Recommendation.Refused != "alltoall at 1M" {
		t.Errorf("history --json %s: want verdict %q", stdout, want)
	}
	show, _, _ := runCLI(t, db, "show", "s1")
	if !strings.Contains(show, want) {
		t.Errorf("show does not say %q:\n%s", want, show)
	}
}
