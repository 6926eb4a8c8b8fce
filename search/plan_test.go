package search

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// protoSpace searches NCCL_PROTO alone, every value, in grid order.
func protoSpace(t *testing.T, o Options) Options {
	t.Helper()
	space, err := ParseSpace([]string{"NCCL_PROTO"}, true)
	if err != nil {
		t.Fatal(err)
	}
	o.Space, o.Sampler = space, "grid"
	return o
}

// TestRefusesDisabledProtocols: on a fabric where NCCL's defaults keep
// LL128 off (h200-loopback, as the real loopback), NCCL_PROTO=^LL and
// NCCL_PROTO=LL128 switch it on and are never launched, let alone
// recommended; --allow-disabled-protocols (AllowDisabled) lets them run.
func TestRefusesDisabledProtocols(t *testing.T) {
	t.Parallel()
	enablesLL128 := func(c nccl.Config) bool { return c["NCCL_PROTO"] == "^LL" || c["NCCL_PROTO"] == "LL128" }
	for _, allow := range []bool{false, true} {
		o := protoSpace(t, spark4Options(1))
		o.AllowDisabled = allow
		res, _, l := runStudy(t, "h200-loopback", o)
		launched := false
		for _, r := range l.launches {
			launched = launched || enablesLL128(r.Config)
		}
		if !res.Plan.Read {
			t.Fatalf("NCCL's plan was not read: %s", res.Plan.Note)
		}
		switch {
		case !allow && launched:
			t.Errorf("a config switching LL128 on was launched although NCCL's defaults disabled it")
		case !allow && res.Plan.Refused != 2:
			t.Errorf("refused %d configs, want 2 (^LL and LL128)", res.Plan.Refused)
		case !allow && enablesLL128(res.Env()):
			t.Errorf("recommended %s", res.Env())
		case allow && !launched:
			t.Errorf("with AllowDisabled no config switching LL128 on was launched")
		case allow && res.Plan.Refused != 0:
			t.Errorf("with AllowDisabled %d configs were refused", res.Plan.Refused)
		}
	}
}

// TestNoOpsMergedWithDefaults: on a fabric where NCCL uses its whole
// channel count and Simple in the band, caps at or above it and lists that
// keep NCCL's choices run NCCL's own plan: they are merged with the
// defaults, never launched as new trials.
func TestNoOpsMergedWithDefaults(t *testing.T) {
	t.Parallel()
	o := spark4Options(2)
	space, err := ParseSpace([]string{"NCCL_MAX_NCHANNELS=unset,1,2,4,64", "NCCL_CROSS_NIC"}, true)
	if err != nil {
		t.Fatal(err)
	}
	o.Space, o.Sampler = space, "grid"
	res, _, l := runStudy(t, "h200-loopback", o)
	for _, r := range l.launches {
		if r.Trial != 0 && (r.Config["NCCL_MAX_NCHANNELS"] == "4" || r.Config["NCCL_MAX_NCHANNELS"] == "64") {
			t.Errorf("launched %s, a cap above the 2 channels NCCL uses", r.Config)
		}
	}
	if res.Plan.PlansExplored != 2 || res.Plan.MergedConfigs != 13 {
		t.Errorf("%d plans explored, %d configs merged; the space has 2 plans (NCCL's and a cap of 1), and 13 configs run one of them (11 NCCL's, 2 the cap's)", res.Plan.PlansExplored, res.Plan.MergedConfigs)
	}
	if len(res.Plan.Merged) == 0 {
		t.Errorf("nothing merged: %+v", res.Plan)
	}
	if res.Recommend {
		t.Errorf("recommended %s where nothing changes NCCL's plan", res.Env())
	}
	t.Logf("plan %+v", *res.Plan)
}

// TestMinimalRecommendation: a knob that NCCL's plan shows changes
// nothing is left out of the recommendation, with its reason, in every
// seed; the fix is what is recommended in at least 9 of 10 (a config
// measured once can lose to its family's leader by one launch's luck:
// seed 2 confirms NCCL_MAX_NCHANNELS=8 alone, 24 % slower than the fix).
func TestMinimalRecommendation(t *testing.T) {
	t.Parallel()
	fixes := 0
	for seed := int64(1); seed <= 10; seed++ {
		o := spark4Options(seed)
		space, err := ParseSpace([]string{"NCCL_PROTO=unset,^LL128", "NCCL_ALGO=Ring", "NCCL_MAX_NCHANNELS=unset,8"}, true)
		if err != nil {
			t.Fatal(err)
		}
		o.Space, o.Sampler = space, "grid"
		res, _, _ := runStudy(t, "spark4", o)
		env := res.Env()
		if _, ring := env["NCCL_ALGO"]; !res.Recommend || ring {
			t.Errorf("seed %d: recommended %q (%s), want a change without NCCL_ALGO=Ring", seed, env.Key(), res.Reason)
		}
		if env.Key() == "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" {
			fixes++
		} else {
			t.Logf("seed %d: recommended %q, not the fix", seed, env.Key())
		}
		dropped := false
		for _, d := range res.Dropped {
			dropped = dropped || d.Knob == "NCCL_ALGO" && d.Value == "Ring" && strings.Contains(d.Reason, "RING")
		}
		if !dropped {
			t.Errorf("seed %d: dropped %+v, want NCCL_ALGO=Ring with its reason", seed, res.Dropped)
		}
	}
	if fixes < 9 {
		t.Errorf("the fix NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128 recommended in %d of 10 seeds, want at least 9", fixes)
	}
}

func TestSimpler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b nccl.Config
		want bool
	}{
		{nccl.Config{"NCCL_MAX_CTAS": "1"}, nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_ALGO": "Ring"}, true},
		{nccl.Config{"NCCL_MAX_CTAS": "1"}, nccl.Config{"NCCL_PROTO": "LL"}, true},
		{nccl.Config{"NCCL_PROTO": "LL"}, nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, false},
		{nccl.Config{"NCCL_MAX_CTAS": "1"}, nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, true},
	}
	for _, tt := range tests {
		if got := simpler(tt.a, tt.b); got != tt.want {
			t.Errorf("simpler(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestKnownPlanServesEquivalentConfigs: a plan read from one config's
// debug log proves the plan of every config with the same core (no-ops
// removed, caps spelt one way), and of those that add lists holding its
// choices. On the real 4-rank loopback log (one NIC, 2 channels).
func TestKnownPlanServesEquivalentConfigs(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../internal/benchfmt/testdata/real/ar4_explain_tuning.txt")
	if err != nil {
		t.Fatal(err)
	}
	o := spark4Options(1)
	s := newLoop(o)
	defaults := &Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}
	capped := &Trial{Number: 1, Role: vocab.RoleExplore, Config: nccl.Config{"NCCL_CROSS_NIC": "0", "NCCL_MAX_NCHANNELS": "1"}}
	s.trials = []*Trial{defaults, capped}
	s.learnPlan(defaults, vocab.PhasePlan, "", &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{Facts: benchfmt.ParseFacts(data)}})
	if s.plan.defaults() == nil {
		t.Fatalf("no plan read: %s", s.plan.note)
	}
	mustDiffer := func(a, b nccl.Config) {
		t.Helper()
		if s.plan.keyOf(a) == s.plan.keyOf(b) {
			t.Errorf("%s and %s share a key before the cap's plan is read", a, b)
		}
	}
	mustDiffer(nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_ALGO": "Ring"}, capped.Config)
	// The cap's own log: Ring/Simple on one channel at every size.
	cappedFacts := benchfmt.ParseFacts(data)
	for i := range cappedFacts.Choices {
		cappedFacts.Choices[i].ChannelHi, cappedFacts.Choices[i].Channels = 0, 1
	}
	cappedFacts.Channels = 1
	s.learnPlan(capped, vocab.PhasePlan, "", &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{Facts: cappedFacts}})
	for _, c := range []nccl.Config{
		{"NCCL_MAX_CTAS": "1"},
		{"NCCL_MAX_NCHANNELS": "1"},
		{"NCCL_CROSS_NIC": "1", "NCCL_MAX_CTAS": "1"},
		{"NCCL_MAX_CTAS": "1", "NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"},
	} {
		r := s.plan.resolve(c)
		if !r.Certain || s.plan.keyOf(c) != s.plan.keyOf(capped.Config) {
			t.Errorf("%s: certain %v, key %q; want the capped config's %q", c, r.Certain, r.Key, s.plan.keyOf(capped.Config))
		}
	}
	if r := s.plan.resolve(nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_ALGO": "Ring", "NCCL_CROSS_NIC": "0"}); len(r.Dropped) != 2 || r.Reduced.Key() != "NCCL_MAX_CTAS=1" {
		t.Errorf("dropped %+v, reduced %s; want NCCL_ALGO and NCCL_CROSS_NIC dropped", r.Dropped, r.Reduced)
	}
	if s.plan.keyOf(nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_PROTO": "LL"}) == s.plan.keyOf(capped.Config) {
		t.Errorf("NCCL_PROTO=LL leaves out the Simple NCCL chooses: it cannot share the cap's plan")
	}
}

// TestWithoutNCCLsPlan: when the debug launch shows no per-size choices
// (NCCL before 2.24), nothing is merged, the summary says why, and the
// study still finds spark4's fix; configs that may switch LL128 on stay
// refused, since nothing shows NCCL enables it.
func TestWithoutNCCLsPlan(t *testing.T) {
	t.Parallel()
	o := spark4Options(4)
	l := newSimLauncher(t, "spark4", 1, o.Seed)
	l.noDebugLog = true
	res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	if p.Read || !strings.Contains(p.Note, "no choice per size") || p.MergedConfigs != 0 || p.PlansExplored != p.ConfigsExplored {
		t.Errorf("summary %+v; want unread, said so, nothing merged", p)
	}
	if p.Refused == 0 {
		t.Errorf("no config refused: without the log, ^LL and LL128 may switch on what NCCL keeps off")
	}
	if env := res.Env(); !res.Recommend || env["NCCL_PROTO"] == "" || env["NCCL_PROTO"] == "LL128" {
		t.Errorf("recommended %s (%s), want spark4's fix", env, res.Reason)
	}
}

// TestDebugLaunchesNeverScored: plan launches (the defaults' and those
// that settle a rule) are stored as unscored, whoever asked for them.
func TestDebugLaunchesNeverScored(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		o := spark4Options(seed)
		l := newSimLauncher(t, "spark4", 1, o.Seed)
		rec := newMemRecorder(t)
		if _, err := Run(context.Background(), o, l, rec, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		if rec.scoredDebug > 0 {
			t.Errorf("seed %d: %d debug launches stored as scored", seed, rec.scoredDebug)
		}
	}
}

// TestDrawingAnExploredSpaceIsCheap: once every point of the space has a
// trial, each of randomUntried's thousand draws is a lookup, not a
// canonical form and a plan key (was 9 allocations a draw, and most of
// the search tests' time). The draws are the same: TestReproducible and
// the goldens hold the order of the proposals.
func TestDrawingAnExploredSpaceIsCheap(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	o := spark4Options(1)
	o.Space = Space{{Knob: "NCCL_PROTO", Choices: []string{"", "LL", "Simple"}},
		{Knob: "NCCL_MAX_NCHANNELS", Choices: []string{"", "2", "4", "8"}}}
	s := newLoop(o)
	for cfg := range o.Space.Each() {
		s.index(&Trial{Config: cfg.Canonical()})
	}
	var found nccl.Config
	perDraw := testing.AllocsPerRun(5, func() { found = s.randomUntried() }) / 1000
	if found != nil {
		t.Fatalf("randomUntried found %s untried in a space whose every point has a trial", found)
	}
	if perDraw > 4 {
		t.Errorf("a draw of a tried point allocates %.1f times; want a lookup (at most 4)", perDraw)
	}
}

// TestPlanReadFromTorchDebugLog: the torch instrument's process logs its
// start-up all-gathers (8 and 64 bytes) before the all-reduce it measures.
// A one-part study reads its own op's lines, not the log's first
// collective: the real 4-rank debug launch below (torch 2.11, NCCL 2.28.9)
// once left a band study with "NCCL's log shows no choice per size".
func TestPlanReadFromTorchDebugLog(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../internal/benchfmt/testdata/torch/real_torch_ar4_plan_debug.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := benchfmt.ParseTorch(data)
	if err != nil {
		t.Fatal(err)
	}
	l := &benchfmt.Launch{Outcome: benchfmt.OK, Result: res}
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	for _, op := range []nccl.Op{"", nccl.AllReduce} {
		p := newPlanner(op, band.Sizes(), DefaultGuard(band), false)
		if !p.learn(&Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}, vocab.PhasePlan, "", l) {
			t.Fatalf("op %q: no plan read (%s)", op, p.note)
		}
		got := p.defaults().Plan[1<<20]
		if got.Algo != "RING" || got.Proto != "SIMPLE" || got.Channels != 2 {
			t.Errorf("op %q: plan at 1M is %+v, want the log's RING/SIMPLE on 2 channels", op, got)
		}
	}
	// The log holds no broadcast: a band study of broadcast reads no plan
	// rather than the all-reduce's.
	p := newPlanner(nccl.Broadcast, band.Sizes(), DefaultGuard(band), false)
	if p.learn(&Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}, vocab.PhasePlan, "", l) {
		t.Errorf("a broadcast study read a plan from a log of all-reduces: %+v", p.defaults().Plan)
	}
}
