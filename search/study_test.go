package search

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

func spark4Options(seed int64) Options {
	o := DefaultOptions()
	o.Band = nccl.Band{Min: 512 << 10, Max: 4 << 20}
	o.Guard = DefaultGuard(o.Band)
	o.Seed = seed
	return o
}

func runStudy(t testing.TB, profile string, o Options) (*Result, *memRecorder, *simLauncher) {
	t.Helper()
	l := newSimLauncher(t, profile, 1, o.Seed)
	rec := newMemRecorder(t)
	res, err := Run(context.Background(), o, l, rec, nil, 0, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", o.Seed, err)
	}
	return res, rec, l
}

// TestSpark4FindsTheFix: on the simulated four-Spark fabric, in at least 9
// of 10 seeds and within 60 launches, the recommendation's true band score
// is within 5 % of the best of the whole default space, and it avoids
// LL128 with few channels (the seed documents' fix) or does better.
func TestSpark4FindsTheFix(t *testing.T) {
	t.Parallel()
	o := spark4Options(1)
	prof := newSimLauncher(t, "spark4", 0, 0).prof
	best, bestCfg := bestInSpace(t, prof, o.Space, o.Band.Sizes())
	fix := trueScore(t, prof, nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, o.Band.Sizes())
	t.Logf("best of %d configs: %s at %.1f µs; the seed fix scores %.1f µs", o.Space.Size(), bestCfg, best, fix)

	good := 0
	for seed := int64(1); seed <= 10; seed++ {
		o := spark4Options(seed)
		res, rec, l := runStudy(t, "spark4", o)
		if len(l.launches) > o.Budget {
			t.Errorf("seed %d: %d launches, budget %d", seed, len(l.launches), o.Budget)
		}
		if rec.launches != len(l.launches) {
			t.Errorf("seed %d: %d launches recorded of %d made", seed, rec.launches, len(l.launches))
		}
		env := res.Env()
		got := trueScore(t, prof, env, o.Band.Sizes())
		within := got <= best*1.05
		if within && (env["NCCL_PROTO"] == "LL128" || env["NCCL_PROTO"] == "") && got > fix {
			within = false // kept LL128 and did worse than the fix
		}
		if within {
			good++
		}
		t.Logf("seed %2d: %-58s true %.1f µs (%.2f× best) speedup %.2f [%.2f, %.2f] %s; %s; winner %s",
			seed, env, got, got/best, res.Decision.Speedup, res.Decision.Lo, res.Decision.Hi, res.Stopped, res.Reason, res.Winner.Config)
	}
	if good < 9 {
		t.Errorf("only %d of 10 seeds within 5%% of the best", good)
	}
}

// TestFlatKeepsDefaults: where no knob matters, the study says "keep
// NCCL's defaults" in at least 95 % of seeds, exploring in separate
// launches or in batches.
func TestFlatKeepsDefaults(t *testing.T) {
	t.Parallel()
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	// Explored in batch launches too: a batch result ranks nothing until
	// a second batch, and separate launches still decide.
	for _, batch := range []int{0, 8} {
		changes := 0
		for seed := int64(1); seed <= int64(seeds); seed++ {
			o := spark4Options(seed)
			o.BatchSize = batch
			res, _, _ := runStudy(t, "flat", o)
			if res.Recommend {
				changes++
				t.Logf("batch %d seed %d recommended %s: %s", batch, seed, res.Env(), res.Reason)
			}
		}
		t.Logf("batch %d: recommended a change in %d of %d seeds", batch, changes, seeds)
		if float64(changes) > 0.05*float64(seeds) {
			t.Errorf("batches of %d: recommended a change in %d of %d seeds on the flat fabric", batch, changes, seeds)
		}
	}
}

// TestReproducible: the same seed makes the same study, launch for launch.
func TestReproducible(t *testing.T) {
	t.Parallel()
	trace := func() []string {
		o := spark4Options(7)
		o.Budget = 30
		_, _, l := runStudy(t, "spark4", o)
		var out []string
		for _, r := range l.launches {
			out = append(out, fmt.Sprintf("%s %d %s", r.Phase, r.Trial, r.Config))
		}
		return out
	}
	a, b := trace(), trace()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs with seed 7 differ:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestPhases: the defaults' unscored debug launch first, which is the
// warm-up too (no launch of its own), then exploration, and the
// confirmation interleaves baseline and candidate.
func TestPhases(t *testing.T) {
	t.Parallel()
	o := spark4Options(3)
	res, _, l := runStudy(t, "spark4", o)
	if first := l.launches[0]; first.Phase != vocab.PhasePlan || first.Trial != 0 || !first.Debug {
		t.Fatalf("first launch %+v, want the defaults' debug launch", first)
	}
	for _, r := range l.launches {
		if r.Phase == vocab.PhaseWarmup {
			t.Errorf("launch %d is a warm-up of its own; the plan's debug launch warmed the fabric", r.Seq)
		}
	}
	var confirm []Request
	for _, r := range l.launches {
		if r.Phase == vocab.PhaseConfirm {
			confirm = append(confirm, r)
		}
	}
	if len(confirm) != 2*o.ConfirmLaunches {
		t.Fatalf("%d confirmation launches, want %d", len(confirm), 2*o.ConfirmLaunches)
	}
	for i, r := range confirm {
		want := 0
		if i%2 == 1 {
			want = res.Winner.Number
		}
		if r.Trial != want {
			t.Errorf("confirmation launch %d is trial %d, want %d (interleaved B C B C …)", i, r.Trial, want)
		}
		if r.MaxBytes < o.Guard[0] {
			t.Errorf("confirmation launch %d sweeps to %d, missing the guard %d", i, r.MaxBytes, o.Guard[0])
		}
	}
}

// TestFailedConfigsNeverWin: forcing LL128 on spark4 gives wrong results;
// such trials are recorded as invalid with their reason and never win.
func TestFailedConfigsNeverWin(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 5; seed++ {
		res, rec, _ := runStudy(t, "spark4", spark4Options(seed))
		for _, tr := range rec.trials {
			if tr.Config["NCCL_PROTO"] == "LL128" && tr.Launches > 0 && tr.State != vocab.TrialInvalid {
				t.Errorf("seed %d: trial %d (%s) is %s, want invalid", seed, tr.Number, tr.Config, tr.State)
			}
			if !tr.State.Usable() && tr.Reason == "" {
				t.Errorf("seed %d: trial %d is %s without a reason", seed, tr.Number, tr.State)
			}
		}
		if res.Winner != nil && !res.Winner.State.Usable() {
			t.Errorf("seed %d: the winner %s is %s", seed, res.Winner.Config, res.Winner.State)
		}
	}
}

// TestResume: a study interrupted after some launches continues from its
// trials without repeating a config as a new trial and within its budget.
// Its plan read back from the stored debug launch, no debug launch comes
// first, so it warms up with a launch of its own.
func TestResume(t *testing.T) {
	t.Parallel()
	o := spark4Options(5)
	l := newSimLauncher(t, "spark4", 1, o.Seed)
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.cancelAt = cancel, 25
	rec := debugRecorder{newMemRecorder(t)}
	res, err := Run(ctx, o, l, rec, nil, 0, nil)
	if !errors.Is(err, context.Canceled) || res == nil || res.Stopped != "interrupted" {
		t.Fatalf("interrupted run: res %+v err %v", res, err)
	}
	var prior []*Trial
	for _, tr := range res.Trials {
		prior = append(prior, tr)
	}
	l2 := newSimLauncher(t, "spark4", 1, o.Seed)
	res2, err := Run(context.Background(), o, l2, rec, prior, res.Launches, nil)
	if err != nil {
		t.Fatal(err)
	}
	if total := res.Launches + len(l2.launches); total > o.Budget {
		t.Errorf("%d launches in all, budget %d", total, o.Budget)
	}
	if l2.launches[0].Phase != vocab.PhaseWarmup {
		t.Errorf("a resumed study starts with %s, want a warm-up", l2.launches[0].Phase)
	}
	if res2.Decision == nil {
		t.Errorf("the resumed study reached no decision: %s", res2.Reason)
	}
}

// TestBaselineFailure: when NCCL's defaults do not run, the study stops
// with ErrBaselineFailed instead of searching a broken fabric.
func TestBaselineFailure(t *testing.T) {
	t.Parallel()
	o := spark4Options(1)
	l := newSimLauncher(t, "spark4", 1, 1)
	broken := &brokenLauncher{inner: l}
	_, err := Run(context.Background(), o, broken, newMemRecorder(t), nil, 0, nil)
	if !errors.Is(err, ErrBaselineFailed) {
		t.Fatalf("err %v, want ErrBaselineFailed", err)
	}
}

type brokenLauncher struct{ inner Launcher }

func (b *brokenLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	return &benchfmt.Launch{Outcome: benchfmt.Failed, Reason: "exit status 1: mpirun could not start"}, nil
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Budget = 5 }, "too small"},
		{func(o *Options) { o.ConfirmLaunches = 3 }, "cannot reach significance"},
		{func(o *Options) { o.Band = nccl.Band{Min: 4 << 20, Max: 1 << 20} }, "did you mean"},
		{func(o *Options) { o.Space = nil }, "empty"},
	}
	for _, tt := range tests {
		o := spark4Options(1)
		tt.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
}

// debugRecorder keeps each trial's debug launches on the trial, as the
// CLI's store does for a resumed study.
type debugRecorder struct{ *memRecorder }

func (r debugRecorder) SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool, scoreUS float64) error {
	if req.Debug {
		t.Debug = append(t.Debug, DebugLaunch{Phase: req.Phase, Launch: l})
	}
	return r.memRecorder.SaveLaunch(t, req, l, scored, scoreUS)
}

// TestResumeReadsThePlanBack: a resumed study reads NCCL's plan from its
// stored plan launch instead of launching it again, knows it (merges by
// plan as before), and stays within its budget.
func TestResumeReadsThePlanBack(t *testing.T) {
	t.Parallel()
	o := spark4Options(5)
	l := newSimLauncher(t, "spark4", 1, o.Seed)
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.cancelAt = cancel, 10
	rec := debugRecorder{newMemRecorder(t)}
	res, err := Run(ctx, o, l, rec, nil, 0, nil)
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("interrupted run: res %+v err %v", res, err)
	}
	l2 := newSimLauncher(t, "spark4", 1, o.Seed)
	res2, err := Run(context.Background(), o, l2, rec, res.Trials, res.Launches, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range l2.launches {
		if req.Phase == vocab.PhasePlan && len(req.Config.Canonical()) == 0 {
			t.Errorf("the resumed study launched NCCL's defaults again to read the plan (launch %d)", req.Seq)
		}
	}
	if res2.Plan == nil || !res2.Plan.Read {
		t.Errorf("the resumed study does not know NCCL's plan: %+v", res2.Plan)
	}
	if total := res.Launches + len(l2.launches); total > o.Budget {
		t.Errorf("%d launches in all, budget %d", total, o.Budget)
	}
}

// TestDebugLaunchRanges: the defaults' debug launch sweeps the wide range
// (the tuner file takes NCCL's default choices at every size from it);
// any other config's sweeps only what a launch of it measures, the band
// and the guard sizes: its plan is read there and nowhere else.
func TestDebugLaunchRanges(t *testing.T) {
	t.Parallel()
	o := spark4Options(3)
	_, _, l := runStudy(t, "spark4", o)
	others := 0
	for _, r := range l.launches {
		if !r.Debug {
			continue
		}
		lo, hi := o.Band.Min, o.Guard[len(o.Guard)-1]
		if len(r.Config.Canonical()) == 0 {
			lo, hi = o.explainRange(o.Op)
		} else {
			others++
		}
		if r.MinBytes != lo || r.MaxBytes != hi {
			t.Errorf("debug launch %d (%s, %s) sweeps %d-%d, want %d-%d", r.Seq, r.Phase, r.Config, r.MinBytes, r.MaxBytes, lo, hi)
		}
	}
	if others == 0 {
		t.Fatal("no debug launch of a config other than the defaults: the test checks nothing")
	}
}
