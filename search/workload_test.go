package search

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// opLauncher is the simulated all-reduce made into every op: a launch of
// another op takes the all-reduce's times scaled by factor (1 when nil),
// so a test decides what a config does to each op.
type opLauncher struct {
	*simLauncher
	factor func(op nccl.Op, cfg nccl.Config, bytes int64) float64
	// fixed ops take the defaults' times whatever the config (before factor).
	fixed   map[nccl.Op]bool
	version string
	ops     map[nccl.Op]int
}

func (o *opLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	op := req.Op.OrAllReduce()
	inner := req
	inner.Op = nccl.AllReduce // every op is the all-reduce's times, scaled by factor
	if o.fixed[op] && !req.Debug {
		inner.Config = nccl.Config{}
	}
	l, err := o.simLauncher.Launch(ctx, inner)
	if err != nil || l.Result == nil {
		return l, err
	}
	if o.ops == nil {
		o.ops = map[nccl.Op]int{}
	}
	o.ops[op]++
	l.Op, l.Result.Collective, l.Result.NCCLVersion = op, string(op), o.version
	if l.Result.Facts != nil {
		l.Result.Facts.NCCLVersion = o.version
	}
	if o.factor == nil {
		return l, nil
	}
	for i, r := range l.Result.Rows {
		f := o.factor(op, req.Config, r.Bytes)
		r.Out.TimeUS *= f
		if r.Out.Iter != nil {
			ts := make([]float64, len(r.Out.Iter.TimesUS))
			for k, x := range r.Out.Iter.TimesUS {
				ts[k] = x * f
			}
			r.Out.Iter = &benchfmt.IterStats{TimesUS: ts}
		}
		l.Result.Rows[i] = r
	}
	return l, nil
}

func runOps(t *testing.T, o Options, l *opLauncher) *Result {
	t.Helper()
	res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", o.Seed, err)
	}
	return res
}

// The objective of several parts is exp Σ wᵢ log scoreᵢ, weights
// normalised: a ×2 on a part of weight 0.8 and ×0.5 on one of weight 0.2
// is ×2^0.6.
func TestRoundScoreIsWeightedGeometric(t *testing.T) {
	t.Parallel()
	w := newWorkload(nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 1 << 20, Max: 2 << 20}, Weight: 4},
		{Op: nccl.AllGather, Band: nccl.Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1},
	})
	round := func(ar1, ar2, ag float64) map[nccl.Op]model.Launch {
		return map[nccl.Op]model.Launch{
			nccl.AllReduce: {Times: map[int64][]float64{1 << 20: {ar1}, 2 << 20: {ar2}}},
			nccl.AllGather: {Times: map[int64][]float64{1 << 20: {ag}}},
		}
	}
	score := func(r map[nccl.Op]model.Launch) float64 {
		sc, err := w.roundScore(r)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	base := round(100, 400, 50)
	want := math.Exp(0.8*math.Log(200) + 0.2*math.Log(50)) // AR band score √(100·400) = 200
	if got := score(base); math.Abs(got-want) > 1e-9 {
		t.Errorf("round score %v, want %v", got, want)
	}
	faster := round(50, 200, 100) // all-reduce ×2 faster, all-gather ×2 slower
	if got := score(base) / score(faster); math.Abs(got-math.Pow(2, 0.6)) > 1e-9 {
		t.Errorf("speedup %v, want 2^0.6 = %v", got, math.Pow(2, 0.6))
	}
	if _, err := w.roundScore(map[nccl.Op]model.Launch{nccl.AllReduce: base[nccl.AllReduce]}); err == nil {
		t.Error("a round without its all-gather launch was scored")
	}
	tr := &Trial{}
	tr.addRound(vocab.PhaseConfirm, base, score(base))
	ag := tr.ConfirmOf(nccl.AllGather)
	if len(ag) != 1 || ag[0].Times[1<<20][0] != 50 || len(ag[0].Times) != 1 {
		t.Errorf("ConfirmOf(all_gather) = %v, want the all-gather's own sizes", ag)
	}
	if got := tr.Confirm[0].Times[scoreKey][0]; math.Abs(got-want) > 1e-9 || len(tr.Confirm[0].Times) != 1 {
		t.Errorf("the round's score launch %v, want only its score %v", tr.Confirm[0], want)
	}
}

// One part given as a workload is today's study, launch for launch.
func TestOnePartWorkloadIsTodaysStudy(t *testing.T) {
	t.Parallel()
	o := spark4Options(2)
	want, _, _ := runStudy(t, "spark4", o)
	o.Workload = nccl.Workload{{Op: nccl.AllReduce, Band: o.Band, Weight: 1}}
	got, _, _ := runStudy(t, "spark4", o)
	if got.Env().Key() != want.Env().Key() || got.Launches != want.Launches || got.Ending != want.Ending ||
		got.Decision.Speedup != want.Decision.Speedup || got.Decision.P != want.Decision.P {
		t.Errorf("one-part workload: %s ×%v p=%v in %d launches (%s); today's study: %s ×%v p=%v in %d (%s)",
			got.Env(), got.Decision.Speedup, got.Decision.P, got.Launches, got.Ending,
			want.Env(), want.Decision.Speedup, want.Decision.P, want.Launches, want.Ending)
	}
}

// A workload of two ops: every measurement is one launch per op, the
// budget counts them all, and each part reports what it measured.
func TestTwoPartWorkload(t *testing.T) {
	t.Parallel()
	o := spark4Options(1)
	o.Workload = nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 0.8},
		{Op: nccl.AllGather, Band: nccl.Band{Min: 1 << 20, Max: 8 << 20}, Weight: 0.2},
	}
	o.Band, o.Budget = Hull(o.Workload), 120
	l := &opLauncher{simLauncher: newSimLauncher(t, "spark4", 1, o.Seed), version: "2.28.3",
		factor: func(op nccl.Op, _ nccl.Config, _ int64) float64 {
			if op == nccl.AllGather {
				return 0.5
			}
			return 1
		}}
	res := runOps(t, o, l)
	if res.Launches > o.Budget || len(l.launches) != res.Launches {
		t.Errorf("%d launches (%d made) for a budget of %d", res.Launches, len(l.launches), o.Budget)
	}
	if l.ops[nccl.AllGather] < 10 || l.ops[nccl.AllReduce] < l.ops[nccl.AllGather] {
		t.Errorf("launches per op %v: every measurement launches both ops", l.ops)
	}
	if !res.Recommend || len(res.Parts) != 2 {
		t.Fatalf("want a recommendation with two parts, got %s (%s) parts %d", res.Ending, res.Reason, len(res.Parts))
	}
	for _, p := range res.Parts {
		if !(p.Comparison.Speedup > 1.5) || p.Comparison.CandidateN != len(res.Winner.Confirm) {
			t.Errorf("part %s: speedup %.2f over %d launches, want the fix's gain over every confirmation round", p.Part, p.Comparison.Speedup, p.Comparison.CandidateN)
		}
	}
	// The decision's speedup is the weighted combination of the parts'.
	comb := math.Exp(0.8*math.Log(res.Parts[0].Comparison.Speedup) + 0.2*math.Log(res.Parts[1].Comparison.Speedup))
	if math.Abs(res.Decision.Speedup/comb-1) > 0.05 {
		t.Errorf("workload speedup %.3f, parts combine to %.3f", res.Decision.Speedup, comb)
	}
}

// A winner that slows another collective by more than the minimum effect
// is refused, and the verdict names the op and the size; one that does
// not is recommended with the guard's numbers reported.
func TestGuardOpsRefuseNamingOpAndSize(t *testing.T) {
	t.Parallel()
	slows := func(op nccl.Op, cfg nccl.Config, b int64) float64 {
		if op == nccl.Broadcast && (cfg["NCCL_MAX_NCHANNELS"] != "" || cfg["NCCL_MAX_CTAS"] != "") && b == 1<<20 {
			return 1.6
		}
		return 1
	}
	for _, tc := range []struct {
		name   string
		factor func(nccl.Op, nccl.Config, int64) float64
		ending string
	}{
		{"broadcast 1M slower", slows, vocab.EndingOpRegression},
		{"no op slower", nil, vocab.EndingRecommended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := spark4Options(1)
			o.GuardOps = []nccl.Op{nccl.AllGather, nccl.Broadcast, nccl.AllToAll}
			o.Budget = 60 + o.guardReserve()
			l := &opLauncher{simLauncher: newSimLauncher(t, "spark4", 1, o.Seed), factor: tc.factor, version: "2.28.3",
				fixed: map[nccl.Op]bool{nccl.Broadcast: true}}
			res := runOps(t, o, l)
			if res.Ending != tc.ending {
				t.Fatalf("ending %s (%s), want %s", res.Ending, res.Reason, tc.ending)
			}
			if len(res.OpGuards) != 3 {
				t.Fatalf("%d guarded ops reported, want 3", len(res.OpGuards))
			}
			for _, g := range res.OpGuards {
				if g.Result.BaselineN != o.GuardLaunches || g.Result.CandidateN != o.GuardLaunches {
					t.Errorf("%s: %d+%d launches, want %d per arm", g.Op, g.Result.BaselineN, g.Result.CandidateN, o.GuardLaunches)
				}
			}
			if tc.ending == vocab.EndingOpRegression && (!strings.Contains(res.Reason, "broadcast") || !strings.Contains(res.Reason, "broadcast at 1M")) {
				t.Errorf("verdict %q does not name broadcast and 1M", res.Reason)
			}
			if res.Launches > o.Budget {
				t.Errorf("%d launches over the budget of %d", res.Launches, o.Budget)
			}
		})
	}
}

// Guards cost nothing when the confirmation keeps the defaults: they are
// spent only on a recommended candidate.
func TestGuardOpsOnlyForARecommendation(t *testing.T) {
	t.Parallel()
	o := spark4Options(1)
	o.GuardOps = []nccl.Op{nccl.Broadcast}
	o.Budget = 60 + o.guardReserve()
	l := &opLauncher{simLauncher: newSimLauncher(t, "flat", 1, o.Seed), version: "2.28.3"}
	res := runOps(t, o, l)
	guards := 0
	for _, req := range l.launches {
		if req.Phase == vocab.PhaseGuard {
			guards++
		}
	}
	// The one other broadcast launch reads NCCL's plan of it (planGuardedOps).
	if res.Recommend || guards != 0 || l.ops[nccl.Broadcast] != 1 {
		t.Errorf("flat fabric: %s, %d guard launches, %d broadcast launches; want the defaults kept, no guard launch and one plan launch", res.Ending, guards, l.ops[nccl.Broadcast])
	}
}

// With NCCL 2.24+ a winning list is recommended in the per-function form
// for the workload's ops (and that form is what the confirmation
// measured); before 2.24 the plain list. On spark4 with 8 channels,
// NCCL_PROTO=^LL128 and NCCL_PROTO=Simple run the same (178.0 µs true
// band score): either is the fix.
func TestScopedRecommendation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{"2.28.3", []string{"NCCL_MAX_NCHANNELS=8 NCCL_PROTO=allreduce:^LL128", "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=allreduce:Simple"}},
		{"2.23.4", []string{"NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=Simple"}},
	} {
		o := spark4Options(1)
		o.ScopeLists = true
		l := &opLauncher{simLauncher: newSimLauncher(t, "spark4", 1, o.Seed), version: tc.version}
		res := runOps(t, o, l)
		if got := res.Env().Key(); !slices.Contains(tc.want, got) {
			t.Errorf("NCCL %s: recommended %q (%s), want one of %q", tc.version, got, res.Reason, tc.want)
		}
		if res.Winner != nil && len(res.Winner.Confirm) == 0 {
			t.Errorf("NCCL %s: the recommended config was not itself confirmed", tc.version)
		}
		// The export reads NCCL's choices for a scoped recommendation from
		// the config it was scoped from when it has no log of its own.
		scoped := len(res.Scoped) > 0
		if scoped != (res.ScopedFrom != nil) {
			t.Errorf("NCCL %s: scoped %v but scoped from %v", tc.version, res.Scoped, res.ScopedFrom)
		}
		if scoped {
			if cfg, _ := nccl.ScopeConfig(res.ScopedFrom.Config, o.Parts().Ops(), tc.version); cfg.Key() != res.Winner.Config.Key() {
				t.Errorf("NCCL %s: scoped from %s, which scopes to %s, not the winner %s", tc.version, res.ScopedFrom.Config.Key(), cfg.Key(), res.Winner.Config.Key())
			}
		}
	}
}

// Regroup rebuilds a resumed workload study's rounds from its stored
// launches: one launch per op makes a round, a round cut short by a
// failure or the interruption is dropped, guard launches go to their op.
func TestRegroupRounds(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	o.Workload = nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1},
		{Op: nccl.AllGather, Band: nccl.Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1},
	}
	o.Band = Hull(o.Workload)
	at := func(us float64) model.Launch { return model.Launch{Times: map[int64][]float64{1 << 20: {us}}} }
	ok := func(op nccl.Op, phase string, us float64) StoredLaunch {
		return StoredLaunch{Op: op, Phase: phase, Scored: true, Launch: at(us)}
	}
	failed := func(op nccl.Op, phase string) StoredLaunch { return StoredLaunch{Op: op, Phase: phase, Failed: true} }
	ls := []StoredLaunch{
		{Op: nccl.AllReduce, Phase: vocab.PhaseWarmup},
		ok(nccl.AllReduce, vocab.PhaseExplore, 100), ok(nccl.AllGather, vocab.PhaseExplore, 400),
		ok(nccl.AllReduce, vocab.PhaseExplore, 100), failed(nccl.AllGather, vocab.PhaseExplore),
		ok(nccl.AllReduce, vocab.PhaseConfirm, 50), ok(nccl.AllGather, vocab.PhaseConfirm, 200),
		ok(nccl.Broadcast, vocab.PhaseGuard, 10), failed(nccl.Broadcast, vocab.PhaseGuard),
		ok(nccl.AllReduce, vocab.PhaseConfirm, 50), // interrupted before its all-gather
	}
	tr := &Trial{}
	o.Regroup(tr, ls)
	if len(tr.Explore) != 1 || len(tr.Confirm) != 1 || len(tr.Guards[nccl.Broadcast]) != 1 || tr.guardFailed != 1 {
		t.Fatalf("explore %d confirm %d guards %v failed %d; want 1, 1, one broadcast, 1", len(tr.Explore), len(tr.Confirm), tr.Guards, tr.guardFailed)
	}
	if got := tr.Explore[0].Times[scoreKey][0]; math.Abs(got-200) > 1e-9 { // √(100·400)
		t.Errorf("round score %v, want 200", got)
	}
	if got := tr.Score(o.ScoredKeys()); math.Abs(got-200) > 1e-9 {
		t.Errorf("trial score over ScoredKeys %v, want 200", got)
	}
	// Rounds are the rounds Regroup kept, each at the launch that
	// completed it (a figure of the search in time puts it there).
	rounds, isWorkload := o.Rounds(ls)
	want := []Round{{Phase: vocab.PhaseExplore, ScoreUS: 200, Last: 2}, {Phase: vocab.PhaseConfirm, ScoreUS: 100, Last: 6}} // √(50·200)
	if !isWorkload || len(rounds) != len(want) {
		t.Fatalf("rounds %+v (%v); want %+v", rounds, isWorkload, want)
	}
	for i, r := range rounds {
		if r.Phase != want[i].Phase || r.Last != want[i].Last || math.Abs(r.ScoreUS-want[i].ScoreUS) > 1e-9 {
			t.Errorf("round %d: %+v, want %+v", i, r, want[i])
		}
	}
	one := DefaultOptions()
	one.Band = nccl.Band{Min: 1 << 20, Max: 1 << 20}
	if _, isWorkload := one.Rounds(ls); isWorkload {
		t.Errorf("a one-part study has rounds")
	}
	tr = &Trial{}
	one.Regroup(tr, []StoredLaunch{ok("", vocab.PhaseExplore, 1), ok("", vocab.PhaseConfirm, 2), ok(nccl.Broadcast, vocab.PhaseGuard, 3)})
	if len(tr.Explore) != 1 || len(tr.Confirm) != 1 || len(tr.Guards[nccl.Broadcast]) != 1 {
		t.Errorf("one-part study: explore %d confirm %d guards %v", len(tr.Explore), len(tr.Confirm), tr.Guards)
	}
}

// A workload's guard checks name each op's guard size as the user gave it:
// the op and the bytes, one check per op and size, in nccl.Ops' order (a
// round's op and size were once packed into one integer, which
// GuardCheck.Bytes then held: 2<<48|16M for all_gather's 16M).
func TestWorkloadGuardChecksNameOpAndSize(t *testing.T) {
	t.Parallel()
	const guard = 16 << 20
	for _, tc := range []struct {
		name string
		// slowAG: a changed config's all-gather is ×2 slower at the guard.
		slowAG     bool
		wantEnding string
		wantReason string
	}{
		{"no guard slower", false, vocab.EndingRecommended, ""},
		{"all_gather slower at its guard size", true, vocab.EndingGuard, "guard size all_gather 16M"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := spark4Options(1)
			o.Workload = nccl.Workload{
				{Op: nccl.AllGather, Band: nccl.Band{Min: 1 << 20, Max: 8 << 20}, Weight: 0.2},
				{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 0.8},
			}
			o.Band, o.Budget, o.Guard = Hull(o.Workload), 120, []int64{guard}
			l := &opLauncher{simLauncher: newSimLauncher(t, "spark4", 1, o.Seed), version: "2.28.3",
				factor: func(op nccl.Op, cfg nccl.Config, bytes int64) float64 {
					if tc.slowAG && op == nccl.AllGather && bytes == guard && len(cfg.Canonical()) > 0 {
						return 2
					}
					return 1
				}}
			res := runOps(t, o, l)
			if res.Winner == nil || res.Decision == nil {
				t.Fatalf("no confirmation: %s (%s)", res.Ending, res.Reason)
			}
			var got []string
			for _, g := range res.Guards {
				got = append(got, string(g.Op)+" "+nccl.FormatSize(g.Bytes))
			}
			if want := []string{"all_reduce 16M", "all_gather 16M"}; !slices.Equal(got, want) {
				t.Errorf("guard checks %q, want %q", got, want)
			}
			if res.Ending != tc.wantEnding || !strings.Contains(res.Reason, tc.wantReason) {
				t.Errorf("ending %s (%s), want %s naming %q", res.Ending, res.Reason, tc.wantEnding, tc.wantReason)
			}
		})
	}
}
