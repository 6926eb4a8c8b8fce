package studyrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// simLaunch launches the simulated fabric (this test binary, see TestMain).
func simLaunch(t *testing.T, profile string) LaunchSettings {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return LaunchSettings{Spec: runner.Spec{Timeout: time.Minute, PerIter: true, Iters: 20,
		Sim: &runner.SimSpec{Executable: exe, Profile: profile, Noise: 1}}, Simulated: true, Seed: 11}
}

// TestRunAB checks verify's and compare's measurement: B C B C … after one
// warm-up of B, stored in that order, decided as a fixed-size test
// (model.Compare at the default options) on the stored launches.
func TestRunAB(t *testing.T) {
	st := openStore(t)
	n := model.MinLaunchesForDecision(model.DefaultOptions())
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	ab := AB{Kind: vocab.KindCompare, Band: band, BandText: band.String(), Collective: "all_reduce",
		Base: nccl.Config{}, Cand: nccl.Config{"NCCL_PROTO": "Simple"}}
	var progress []string
	r, err := RunAB(context.Background(), st, ab, ABOptions{Launch: simLaunch(t, "spark4"), Launches: n,
		Progress: func(seq, total int, phase string, cfg nccl.Config, l *benchfmt.Launch) {
			if total != 2*n+1 || seq != len(progress)+1 {
				t.Errorf("progress %d/%d after %d launches", seq, total, len(progress))
			}
			progress = append(progress, phase+" "+cfg.String())
		}})
	if err != nil {
		t.Fatal(err)
	}
	study, err := st.Study(r.Study.Name)
	if err != nil {
		t.Fatal(err)
	}
	if study.Status != vocab.StatusDone || study.Reason != "compares "+ab.Cand.String()+" with "+ab.Base.String() {
		t.Errorf("status %s reason %q", study.Status, study.Reason)
	}
	trials, err := st.Trials(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(launches) != 2*n+1 || len(progress) != 2*n+1 {
		t.Fatalf("%d launches stored, %d reported, want %d", len(launches), len(progress), 2*n+1)
	}
	arms := map[uint64]int{trials[0].ID: 0, trials[1].ID: 1}
	var confirm [2][]model.Launch
	for i, l := range launches {
		wantArm, wantPhase := (i+1)%2, vocab.PhaseConfirm
		if i == 0 {
			wantArm, wantPhase = 0, vocab.PhaseWarmup
		}
		if l.Seq != i || l.Phase != wantPhase || arms[l.TrialID] != wantArm || l.Scored != (i > 0) {
			t.Errorf("launch %d: seq %d phase %s arm %d scored %v; want arm %d %s", i, l.Seq, l.Phase, arms[l.TrialID], l.Scored, wantArm, wantPhase)
		}
		if i > 0 {
			confirm[arms[l.TrialID]] = append(confirm[arms[l.TrialID]], model.LaunchOf(l.Sizes))
		}
	}
	want := model.Compare(confirm[0], confirm[1], band.Sizes(), model.DefaultOptions())
	if r.Comparison.Speedup != want.Speedup || r.Comparison.P != want.P || r.Comparison.Recommend != want.Recommend || r.Comparison.Reason != want.Reason {
		t.Errorf("comparison %+v\nwant model.Compare's %+v", r.Comparison, want)
	}
	rec := study.Recommendation
	if rec == nil || rec.BaselineLaunches != n || rec.CandidateLaunches != n || len(rec.PerSize) != len(band.Sizes()) || rec.CandidateTrialID != trials[1].ID {
		t.Errorf("stored recommendation %+v", rec)
	}
}

// TestRunABFailedLaunch: a launch that fails stops the comparison as a
// fabric failure, and the study says why.
func TestRunABFailedLaunch(t *testing.T) {
	st := openStore(t)
	band := nccl.Band{Min: 1 << 20, Max: 2 << 20}
	ab := AB{Kind: vocab.KindCompare, Band: band, BandText: band.String(), Collective: "all_reduce",
		Base: nccl.Config{}, Cand: nccl.Config{"NCCL_PROTO": "Simple"}}
	launch := simLaunch(t, "spark4")
	launch.Spec.BaseEnv = map[string]string{sim.FaultEnv: sim.FaultCrash}
	var name string
	_, err := RunAB(context.Background(), st, ab, ABOptions{Launch: launch, Launches: 3,
		Started: func(s *store.Study) { name = s.Name }})
	if !errors.Is(err, vocab.ErrFabric) {
		t.Fatalf("err = %v, want vocab.ErrFabric", err)
	}
	study, serr := st.Study(name)
	if !strings.HasPrefix(err.Error(), "warmup launch of") {
		t.Errorf("err = %q, want the warm-up launch named", err)
	}
	if serr != nil || study.Status != vocab.StatusFailed || study.Reason != err.Error() {
		t.Errorf("study %+v (%v), want failed with %q", study, serr, err)
	}
}

// A check launch per op names its op in every warning, so the op whose
// calls fell back to the plugin's one channel is said; one op's check is
// fabric's warning as it is.
func TestOpCheckNamesTheOp(t *testing.T) {
	tp := &benchfmt.TunerPlugin{Requested: "/p.so", Loaded: true, Name: "Example", Applied: 2, NoMatch: 3,
		Calls: []benchfmt.TunerCall{{Collective: "broadcast", Bytes: 1 << 20, NoMatch: 3, Unmatched: "collective"}}}
	l := &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{NCCLVersion: "2.30.7", Facts: &benchfmt.Facts{Tuner: tp}}}
	several := opCheckOf(nccl.Broadcast, l, true)
	one := opCheckOf(nccl.Broadcast, l, false)
	if len(several.Warnings) == 0 || several.Plugin != tp {
		t.Fatalf("no fallback warning: %+v", several)
	}
	for i, w := range several.Warnings {
		if !strings.HasPrefix(w.Message, "broadcast: ") || one.Warnings[i].Message != strings.TrimPrefix(w.Message, "broadcast: ") {
			t.Errorf("warning %q (one op: %q)", w.Message, one.Warnings[i].Message)
		}
	}
}

// A workload's tuner check launches each op NCCL's tuner sees, and not
// alltoall or sendrecv (they run as send/recv); one op is checked as it is.
func TestCheckOps(t *testing.T) {
	band := nccl.Band{Min: 1 << 20, Max: 2 << 20}
	ab := AB{Parts: nccl.Workload{{Op: nccl.Broadcast, Band: band, Weight: 1}, {Op: nccl.AllToAll, Band: band, Weight: 1},
		{Op: nccl.AllReduce, Band: band, Weight: 1}, {Op: nccl.SendRecv, Band: band, Weight: 1}}}
	if got := ab.checkOps(); len(got) != 2 || got[0] != nccl.AllReduce || got[1] != nccl.Broadcast {
		t.Errorf("checkOps %v, want all_reduce and broadcast", got)
	}
	if got := (AB{Collective: "alltoall"}).checkOps(); len(got) != 1 || got[0] != nccl.AllToAll {
		t.Errorf("one op: %v", got)
	}
}

// TestABSweepsAsTheSearch checks that verify and compare sweep each op's
// launch over the range the search swept it over (search.SweepRange):
// a fresh comparison that covered other sizes would not re-measure what
// the study measured. Each AB is built as PlanVerify and compare build it,
// the search's options as the search command does.
func TestABSweepsAsTheSearch(t *testing.T) {
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	guards := []int64{32 << 10, 256 << 20}
	// The alltoall band's ends are no powers of two: its launch sweeps
	// its powers of two (4M-16M), not the band's ends.
	workload := nccl.Workload{{Op: nccl.AllReduce, Band: band, Weight: 0.8},
		{Op: nccl.AllToAll, Band: nccl.Band{Min: 3 << 20, Max: 20 << 20}, Weight: 0.2}}
	onePart := search.Options{Band: band, Op: nccl.AllReduce, Guard: guards, GuardOps: []nccl.Op{nccl.Broadcast}}
	onePartAB := AB{Band: band, Guards: guards, Collective: string(nccl.AllReduce), GuardOps: onePart.GuardOps}
	parts := search.Options{Band: search.Hull(workload), Op: nccl.AllReduce, Workload: workload, Guard: guards,
		GuardOps: []nccl.Op{nccl.Broadcast}}
	partsAB := AB{Band: parts.Band, Guards: guards, Collective: string(nccl.AllReduce), Parts: workload, GuardOps: parts.GuardOps}
	unguarded, unguardedAB := parts, partsAB
	unguarded.Guard, unguardedAB.Guards = nil, nil
	tests := []struct {
		name string
		so   search.Options
		ab   AB
		op   nccl.Op
	}{
		{"one part, its op", onePart, onePartAB, nccl.AllReduce},
		{"one part, a guarded op", onePart, onePartAB, nccl.Broadcast},
		{"workload, its first part", parts, partsAB, nccl.AllReduce},
		{"workload, its other part", parts, partsAB, nccl.AllToAll},
		{"workload, a guarded op", parts, partsAB, nccl.Broadcast},
		{"workload without guard sizes, a guarded op", unguarded, unguardedAB, nccl.Broadcast},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantLo, wantHi := search.SweepRange(tc.so, tc.op)
			if wantLo <= 0 || wantHi < wantLo {
				t.Fatalf("search sweeps %d-%d: the case is wrong", wantLo, wantHi)
			}
			if lo, hi := tc.ab.sweep(tc.op); lo != wantLo || hi != wantHi {
				t.Errorf("verify/compare sweep %s %s-%s, the search %s-%s", tc.op,
					nccl.FormatSize(lo), nccl.FormatSize(hi), nccl.FormatSize(wantLo), nccl.FormatSize(wantHi))
			}
		})
	}
}

// TestVerifyResultSignificant checks that verify's and compare's JSON
// "significant" is the verdict's: a multi-op comparison whose combined
// score gains significantly but which a guarded op or a part refuses is
// not significant, as the text ("refused: keep NCCL defaults") and the
// stored conclusion say. The results are built as reconfirm and conclude
// build them, the band decision recommending in every case.
func TestVerifyResultSignificant(t *testing.T) {
	sizes := []int64{1 << 20, 2 << 20}
	band := nccl.Band{Min: 1 << 20, Max: 2 << 20}
	fast := nccl.Config{"NCCL_PROTO": "Simple"}
	base := &search.Trial{ID: 1, Config: nccl.Config{}, Confirm: launchesAt(6, 100), State: vocab.TrialComplete}
	cand := &search.Trial{ID: 2, Config: fast, Confirm: launchesAt(6, 80), State: vocab.TrialComplete}
	decision := model.Compare(base.Confirm, cand.Confirm, sizes, model.DefaultOptions())
	if !decision.Recommend {
		t.Fatalf("the band decision does not recommend (%s): the cases below need one that does", decision.Reason)
	}
	guarded := AB{Kind: vocab.KindVerify, Verifies: "s1", Band: band, BandText: band.String(), Collective: "all_reduce",
		Base: nccl.Config{}, Cand: fast, GuardOps: []nccl.Op{"broadcast"}, GuardLaunches: 8,
		Claim: &runresult.Claim{Speedup: 1.25, SpeedupCI: [2]float64{1.2, 1.3}, Recommended: true}}
	workload := guarded
	workload.GuardOps, workload.GuardLaunches = nil, 0
	workload.Parts = nccl.Workload{{Op: "all_reduce", Band: band, Weight: 0.5}, {Op: "all_gather", Band: band, Weight: 0.5}}
	refusedGuard := search.OpGuard{Op: "broadcast", Sizes: sizes, Refused: true, Result: model.GuardResult{Speedup: 0.8, Lo: 0.75, Hi: 0.85,
		Slower: true, Worst: 1 << 20, WorstSpeedup: 0.78, P: 0.001, Level: 0.05}}
	okGuard := search.OpGuard{Op: "broadcast", Sizes: sizes, Result: model.GuardResult{Speedup: 1, Lo: 0.98, Hi: 1.02, P: 0.9, Level: 0.05}}
	parts := func(refused bool) []search.PartResult {
		return []search.PartResult{{Part: workload.Parts[0], Weight: 0.5, Comparison: decision},
			{Part: workload.Parts[1], Weight: 0.5, Comparison: decision, Refused: refused}}
	}
	// reconfirmed is ab's result as reconfirm makes it: the stored
	// recommendation RecommendationOf's, the comparison the band decision.
	reconfirmed := func(ab AB, res *search.Result) *ABResult {
		res.Baseline, res.Winner, res.Decision = base, cand, &decision
		sr := RecommendationOf(res, ab.searchOptions())
		sr.Env, sr.CandidateTrialID = ab.Cand.Clone(), cand.ID
		study := &store.Study{Name: "s2", Kind: ab.Kind, Recommendation: sr}
		return &ABResult{Study: study, Comparison: decision, Consistent: ab.agrees(sr.SpeedupCI)}
	}
	oneOp := AB{Kind: vocab.KindCompare, Band: band, BandText: band.String(), Collective: "all_reduce", Base: nccl.Config{}, Cand: fast}
	tests := []struct {
		name        string
		ab          AB
		r           *ABResult
		significant bool
		refused     string
	}{
		{name: "a guarded op refuses", ab: guarded,
			r: reconfirmed(guarded, &search.Result{Recommend: false, Ending: vocab.EndingOpRegression, Reason: "slower for broadcast",
				OpGuards: []search.OpGuard{refusedGuard}}),
			refused: "broadcast at 1M"},
		{name: "a part refuses", ab: workload,
			r: reconfirmed(workload, &search.Result{Recommend: false, Ending: vocab.EndingOpRegression, Reason: "slower for its part",
				Parts: parts(true)}),
			refused: "its part all_gather 1M-2M"},
		{name: "guarded and recommended", ab: guarded,
			r:           reconfirmed(guarded, &search.Result{Recommend: true, Ending: vocab.EndingRecommended, OpGuards: []search.OpGuard{okGuard}}),
			significant: true},
		{name: "workload recommended", ab: workload,
			r:           reconfirmed(workload, &search.Result{Recommend: true, Ending: vocab.EndingRecommended, Parts: parts(false)}),
			significant: true},
		{name: "one op recommended", ab: oneOp,
			r:           oneOp.conclude(&store.Study{Name: "s3", Kind: vocab.KindCompare}, base, cand, decision, model.DefaultOptions(), nil),
			significant: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := VerifyResultOf(tc.ab, tc.r, 6)
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Significant bool   `json:"significant"`
				Refused     string `json:"refused"`
				Verdict     string `json:"verdict"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Significant != tc.significant || doc.Refused != tc.refused {
				t.Errorf("JSON significant %v refused %q (verdict %q), want %v %q", doc.Significant, doc.Refused, doc.Verdict, tc.significant, tc.refused)
			}
			// The JSON and the stored conclusion (what show and the text
			// say) agree.
			if keeps := stored.ConclusionOf(tc.r.Study).Keeps(); doc.Significant == keeps {
				t.Errorf("JSON significant %v, but the conclusion keeps the baseline: %v", doc.Significant, keeps)
			}
		})
	}
}

// TestABStoresItsDecisionSettings: a comparison of one op stores the
// alpha and minimum effect it decided at, so verifying the stored
// comparison again decides at them too (it went back to alpha 0.05).
func TestABStoresItsDecisionSettings(t *testing.T) {
	st := openStore(t)
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	opt := model.DefaultOptions()
	opt.Alpha, opt.MinEffect = 0.01, 0.05
	ab := AB{Kind: vocab.KindVerify, Band: band, BandText: band.String(), Collective: "all_reduce", Stats: opt,
		Base: nccl.Config{}, Cand: nccl.Config{"NCCL_PROTO": "Simple"}}
	study, err := ab.create(st, ABOptions{Launch: simLaunch(t, "spark4"), Launches: 5})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.Study(study.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := launchstats.OptionsOf(stored); got.Alpha != 0.01 || got.MinEffect != 0.05 {
		t.Errorf("stored one-op comparison decides at alpha %g, min effect %g; want 0.01 and 0.05", got.Alpha, got.MinEffect)
	}
}

// GuardDelivered judges each op at the sizes the workload calls and the
// power of two just outside them on each side; only a one-op comparison
// also shows those as its guard sizes (a workload's guard sizes are
// every op's, judged by the study's rule), and every launch of an op
// sweeps its sizes (widen).
func TestGuardDelivered(t *testing.T) {
	call := func(s string) nccl.Part {
		p, err := nccl.ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const K, M = int64(1) << 10, int64(1) << 20
	for _, tc := range []struct {
		name   string
		ab     AB
		want   []runresult.DeliveredSizes
		guards []int64
		sweep  map[nccl.Op][2]int64
	}{
		{"one band", AB{Band: nccl.Band{Min: 512 * K, Max: 4 * M}, Guards: []int64{8 * M}},
			[]runresult.DeliveredSizes{{Op: nccl.AllReduce, Sizes: []int64{256 * K, 512 * K, M, 2 * M, 4 * M, 8 * M}}}, []int64{256 * K, 8 * M},
			map[nccl.Op][2]int64{"": {256 * K, 8 * M}}},
		{"timed workload", AB{Parts: nccl.Workload{call("all_reduce:2097152:80"), call("all_reduce:8388608:20"), call("all_gather:1048576:13")}},
			[]runresult.DeliveredSizes{{Op: nccl.AllReduce, Sizes: []int64{M, 2 * M, 8 * M, 16 * M}}, {Op: nccl.AllGather, Sizes: []int64{512 * K, M, 2 * M}}}, nil,
			map[nccl.Op][2]int64{nccl.AllReduce: {M, 16 * M}, nccl.AllGather: {512 * K, 2 * M}}},
		// Nothing below one float, or one aligned float share per rank of
		// the 4 (all-gather's 64 B): nccl-tests' count is 0 there.
		{"calls at the smallest sizes", AB{Parts: nccl.Workload{call("all_reduce:4:1"), call("all_reduce:262144:336"), call("all_gather:64:2")}},
			[]runresult.DeliveredSizes{{Op: nccl.AllReduce, Sizes: []int64{4, 256 * K, 512 * K}}, {Op: nccl.AllGather, Sizes: []int64{64, 128}}}, nil,
			map[nccl.Op][2]int64{nccl.AllReduce: {4, 512 * K}, nccl.AllGather: {64, 128}}},
	} {
		ab := tc.ab
		ab.GuardDelivered(4)
		if !reflect.DeepEqual(ab.Delivered, tc.want) || !slices.Equal(ab.Guards, tc.guards) {
			t.Errorf("%s: delivered %v, guards %v; want %v, %v", tc.name, ab.Delivered, ab.Guards, tc.want, tc.guards)
		}
		for op, want := range tc.sweep {
			if lo, hi := ab.sweep(op); lo != want[0] || hi != want[1] {
				t.Errorf("%s: %q sweeps %d-%d, want %d-%d", tc.name, op, lo, hi, want[0], want[1])
			}
		}
	}
}

// Where the example plugin retunes NCCL at init (spark4: four GB10
// nodes), verify's third arm runs the plugin with an empty CSV right after
// each measured launch of the CSV, of the same op and sizes, for a one-op
// comparison and for a workload's (one launch per op) alike, and its
// account tells what loading the plugin alone changes (empty CSV against
// the defaults) from what the rows change (the CSV against the empty CSV)
// at every size the CSV is judged at: one channel at 8M (no row matches)
// is slower than NCCL's own count, which the rows restore.
func TestPluginAloneArm(t *testing.T) {
	t.Parallel() // its own store and files
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plugin := write("tuner.so", string(sim.TunerPluginFile("2.30.7")))
	csv := write("tuner.csv", "allreduce,0,18446744073709551615,ring,simple,0,-1,-1,-1,-1\n")
	empty := write("empty.csv", "# no rows\n")
	call := func(s string) nccl.Part {
		p, err := nccl.ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const M = int64(1) << 20
	for _, tc := range []struct {
		name string
		ab   AB
		ops  []nccl.Op
	}{
		{"one band", AB{Band: nccl.Band{Min: 2 * M, Max: 4 * M}, Collective: "all_reduce"}, []nccl.Op{nccl.AllReduce}},
		{"timed workload", AB{Parts: nccl.Workload{call("all_reduce:4194304:10"), call("alltoall:1048576:10")}}, []nccl.Op{nccl.AllReduce, nccl.AllToAll}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			n := model.MinLaunchesForDecision(model.DefaultOptions())
			ab := tc.ab
			ab.Kind, ab.Verifies, ab.Cand, ab.PluginAlone = vocab.KindVerify, "s1", nccl.TunerConfig(plugin, csv), nccl.TunerConfig(plugin, empty)
			ab.BandText = ab.Band.String()
			ab.GuardDelivered(0)
			r, err := RunAB(context.Background(), st, ab, ABOptions{Launch: simLaunch(t, "spark4"), Launches: n})
			if err != nil {
				t.Fatal(err)
			}
			trials, err := st.Trials(r.Study.ID)
			if err != nil {
				t.Fatal(err)
			}
			launches, err := st.Launches(r.Study.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(trials) != 3 || trials[2].Role != vocab.RolePluginAlone || trials[2].Config.Key() != ab.PluginAlone.Key() {
				for _, tr := range trials {
					t.Logf("%d %s %s %s", tr.Number, tr.Role, tr.Config, tr.State)
				}
				t.Fatalf("want the baseline, the CSV and the empty CSV")
			}
			role := map[uint64]string{}
			for _, tr := range trials {
				role[tr.ID] = tr.Role
			}
			alone := 0
			for i, l := range launches {
				if role[l.TrialID] != vocab.RolePluginAlone {
					continue
				}
				alone++
				if i == 0 || role[launches[i-1].TrialID] != vocab.RoleCandidate || launches[i-1].Op != l.Op || !l.Scored {
					t.Errorf("launch %d of the empty CSV (%s) does not follow a measured launch of the CSV of its op", i, l.Op)
				}
			}
			if alone != n*len(tc.ops) {
				t.Errorf("%d launches of the empty CSV, want %d per op", alone, n)
			}
			e := r.PluginAlone
			if e == nil || e.Launches != n {
				t.Fatalf("no account of the third arm: %+v", e)
			}
			var want []string
			for _, d := range ab.Delivered {
				for _, b := range d.Sizes {
					want = append(want, string(d.Op)+" "+nccl.FormatSize(b))
				}
			}
			var got []string
			for _, s := range e.Sizes {
				got = append(got, string(s.Op)+" "+nccl.FormatSize(s.Bytes))
				for _, x := range []runresult.Effect{s.Plugin, s.Rows} {
					if x.Verdict != stored.ChangeWords(x.Significant, x.Speedup) {
						t.Errorf("%s %d: verdict %q", s.Op, s.Bytes, x.Verdict)
					}
				}
				if s.Bytes == 8*M && s.Op == nccl.AllReduce && !(s.Plugin.Significant && s.Plugin.Speedup < 1 && s.Rows.Significant && s.Rows.Speedup > 1) {
					t.Errorf("all_reduce 8M: the plugin alone %+v, the rows %+v; want one channel slower, the rows faster", s.Plugin, s.Rows)
				}
				t.Logf("%s %s: empty CSV vs defaults ×%.2f %s; CSV vs empty CSV ×%.2f %s", s.Op, nccl.FormatSize(s.Bytes), s.Plugin.Speedup, s.Plugin.Verdict, s.Rows.Speedup, s.Rows.Verdict)
			}
			if !slices.Equal(got, want) {
				t.Errorf("effects at %v, want every delivered size %v", got, want)
			}
			v := VerifyResultOf(ab, r, n)
			if v.TunerPlugin == nil || v.TunerPlugin.PluginAlone != e {
				t.Errorf("verify's result does not carry the third arm: %+v", v.TunerPlugin)
			}
		})
	}
}

// SettleGaps asks, per op, only about the powers of two between its
// called sizes it does not call (all_reduce at 2M and 8M: 4M; all_gather
// at 1M alone: none); a gap the candidate keeps NCCL's own choice at is
// equal by rule, any other is judged with the op's delivered sizes.
func TestSettleGaps(t *testing.T) {
	const M = int64(1) << 20
	for _, keep := range []bool{true, false} {
		var asked []string
		ab := AB{Parts: nccl.Workload{}}
		for _, c := range []string{"all_reduce:2097152:80", "all_reduce:8388608:20", "all_gather:1048576:13"} {
			p, err := nccl.ParseCall(c)
			if err != nil {
				t.Fatal(err)
			}
			ab.Parts = append(ab.Parts, p)
		}
		ab.GuardDelivered(4)
		err := ab.SettleGaps(func(op nccl.Op, sizes []int64) ([]bool, error) {
			asked = append(asked, fmt.Sprint(op, sizes))
			return []bool{keep}, nil
		})
		wantAR, wantEqual := []int64{M, 2 * M, 8 * M, 16 * M}, []runresult.DeliveredSizes{{Op: nccl.AllReduce, Sizes: []int64{4 * M}}}
		if !keep {
			wantAR, wantEqual = []int64{M, 2 * M, 4 * M, 8 * M, 16 * M}, nil
		}
		if err != nil || !slices.Equal(asked, []string{fmt.Sprint(nccl.AllReduce, []int64{4 * M})}) ||
			!slices.Equal(ab.Delivered[0].Sizes, wantAR) || !reflect.DeepEqual(ab.EqualByRule, wantEqual) {
			t.Errorf("keep %v: asked %v, all_reduce judged at %v, equal by rule %v (%v); want %v, %v", keep, asked, ab.Delivered[0].Sizes, ab.EqualByRule, err, wantAR, wantEqual)
		}
	}
}

// Without --np the size just below a split op's calls is judged only when
// no rank count could make it smaller than nccl-tests' smallest (an
// all-gather at 32K on 2048 ranks has 16 bytes a rank): 16K is left out
// then, and judged on 4 ranks.
func TestGuardDeliveredUnknownRanks(t *testing.T) {
	for _, tc := range []struct {
		nranks int
		want   []int64
	}{
		{0, []int64{32 << 10, 64 << 10}},
		{4, []int64{16 << 10, 32 << 10, 64 << 10}},
	} {
		ab := AB{Band: nccl.Band{Min: 32 << 10, Max: 32 << 10}, Collective: "all_gather"}
		ab.GuardDelivered(tc.nranks)
		if len(ab.Delivered) != 1 || ab.Delivered[0].Op != nccl.AllGather || !slices.Equal(ab.Delivered[0].Sizes, tc.want) {
			t.Errorf("on %d ranks: delivered %+v, want all_gather at %v", tc.nranks, ab.Delivered, tc.want)
		}
	}
}
