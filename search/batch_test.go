package search

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// soloLauncher is a simulated fabric without a batch mode (nccl-tests).
type soloLauncher struct{ sim *simLauncher }

func (s soloLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	return s.sim.Launch(ctx, req)
}

// TestBatchExploration: a study that asks for batches on a launcher with
// the mode explores in batches of at most BatchSize configs, the baseline
// first in each, only configs whose knobs are per communicator, every
// creation order a permutation; its confirmation and debug launches are
// launches of their own; the budget holds; and the answer is as good as
// separate launches find. Without the option or the mode, no batch.
func TestBatchExploration(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batchSize int
		solo      bool
		batches   bool
	}{
		{"batches of 6", 6, false, true},
		{"batches of 8", 8, false, true},
		{"separate launches asked", 0, false, false},
		{"launcher without batch mode", 6, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := newSimLauncher(t, "spark4", 0, 0).prof
			o := spark4Options(1)
			best, _ := bestInSpace(t, prof, o.Space, o.Band.Sizes())
			good := 0
			for seed := int64(1); seed <= 4; seed++ {
				o := spark4Options(seed)
				o.BatchSize = tc.batchSize
				sl := newSimLauncher(t, "spark4", 1, seed)
				var l Launcher = sl
				if tc.solo {
					l = soloLauncher{sl}
				}
				rec := newMemRecorder(t)
				res, err := Run(context.Background(), o, l, rec, nil, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(sl.batches) > 0; got != tc.batches {
					t.Fatalf("seed %d: %d batches, want batches: %v", seed, len(sl.batches), tc.batches)
				}
				if rec.launches > o.Budget {
					t.Errorf("seed %d: %d launches recorded, budget %d", seed, rec.launches, o.Budget)
				}
				for _, p := range []string{vocab.PhaseConfirm, vocab.PhasePlan, vocab.PhaseExplain, vocab.PhaseWarmup, vocab.PhaseGuard} {
					if rec.batched[p] > 0 {
						t.Errorf("seed %d: %d %s launches came from a batch: only exploration runs in batches", seed, rec.batched[p], p)
					}
				}
				for _, b := range sl.batches {
					if len(b.Members) < 2 || len(b.Members) > tc.batchSize || len(b.Members[0].Config) > 0 {
						t.Errorf("seed %d: batch %d of %d configs, first %s: want 2..%d, the baseline first", seed, b.Seq, len(b.Members), b.Members[0].Config, tc.batchSize)
					}
					order := slices.Sorted(slices.Values(b.CreationOrder))
					for i, m := range b.Members {
						if !Batchable(m.Config) {
							t.Errorf("seed %d: batch %d measures %s, which sets a knob NCCL reads once per process", seed, b.Seq, m.Config)
						}
						if i >= len(order) || order[i] != i {
							t.Errorf("seed %d: batch %d's creation order %v is not a permutation of its %d configs", seed, b.Seq, b.CreationOrder, len(b.Members))
							break
						}
					}
				}
				if got := trueScore(t, prof, res.Env(), o.Band.Sizes()); got <= best*1.05 {
					good++
				}
				t.Logf("seed %d: %s, %d launches, %d batches; %s", seed, res.Env(), res.Launches, len(sl.batches), res.Reason)
			}
			if good < 3 {
				t.Errorf("%d of 4 seeds within 5 %% of the best config", good)
			}
		})
	}
}

// TestBlockRanked: a config measured in batches ranks once two batches
// created it at different positions, or a launch of its own measured it
// too; one never batched ranks as always.
func TestBlockRanked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		positions []int
		want      bool
	}{
		{"never batched", nil, true},
		{"one batch", []int{2}, false},
		{"two batches, same position", []int{1, 1}, false},
		{"two batches, two positions", []int{1, 3}, true},
		{"three batches, the last moved", []int{0, 0, 2}, true},
		{"one batch and a launch of its own", []int{2, -1}, true},
	} {
		tr := &Trial{}
		for i, p := range tc.positions {
			tr.Explore = append(tr.Explore, model.Launch{})
			if p >= 0 {
				tr.blocks = append(tr.blocks, benchfmt.BatchMember{Seq: i, Position: p, Configs: 4})
			}
		}
		if got := tr.blockRanked(); got != tc.want {
			t.Errorf("%s: blockRanked %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCreationOrder: a batch creates a config still to be ranked at a
// position no earlier batch created it at.
func TestCreationOrder(t *testing.T) {
	base := &Trial{Role: vocab.RoleBaseline, blocks: []benchfmt.BatchMember{{Position: 0}, {Position: 1}}}
	for _, tc := range []struct {
		name    string
		members []*Trial
		seq     int
	}{
		{"pending at 1, batch 1", []*Trial{base, {blocks: []benchfmt.BatchMember{{Position: 1}}}, {}}, 1},
		{"pending at 2, batch 5", []*Trial{base, {}, {blocks: []benchfmt.BatchMember{{Position: 2}}}}, 5},
		{"two pending", []*Trial{base, {blocks: []benchfmt.BatchMember{{Position: 1}}}, {blocks: []benchfmt.BatchMember{{Position: 0}}}, {}}, 0},
	} {
		order := creationOrder(tc.members, tc.seq)
		for i, m := range tc.members {
			pos := slices.Index(order, i)
			if m != base && len(m.blocks) > 0 && m.blocks[0].Position == pos {
				t.Errorf("%s: order %v creates member %d at %d again", tc.name, order, i, pos)
			}
		}
	}
}

// TestCandidateWaitsForSecondBatch: the fastest config measured in one
// batch is not the candidate while a config ranked by its launches is.
func TestCandidateWaitsForSecondBatch(t *testing.T) {
	sizes := []int64{1 << 20}
	launch := func(us float64) *Trial {
		tr := &Trial{State: vocab.TrialRunning}
		tr.addExplore(model.Launch{Times: map[int64][]float64{sizes[0]: {us}}}, us)
		return tr
	}
	base := launch(100)
	base.Role = vocab.RoleBaseline
	slow, fast := launch(90), launch(50)
	fast.blocks = []benchfmt.BatchMember{{Seq: 0, Position: 1, Configs: 3}}
	m := &measured{trials: []*Trial{base, slow, fast}, seq: 3}
	p := newPlanner("", sizes, nil, false)
	r := ranking{measured: m, plan: &p, sizes: sizes, minEffect: 0.03, maxLaunches: 3}
	if c := r.candidate(base); c != slow {
		t.Errorf("candidate %v, want the config ranked by its launches (the batched one awaits a second batch)", c)
	}
	fast.blocks = append(fast.blocks, benchfmt.BatchMember{Seq: 1, Position: 0, Configs: 3})
	fast.addExplore(model.Launch{Times: map[int64][]float64{sizes[0]: {50}}}, 50)
	m.seq++
	if c := r.candidate(base); c != fast {
		t.Errorf("candidate %v after a second batch at another position, want the fast config", c)
	}
}

// TestRegroupKeepsBlocks: a resumed study reads back which batches
// measured a trial (Regroup over its stored launches), so a config one
// batch measured still waits for a second before it ranks.
func TestRegroupKeepsBlocks(t *testing.T) {
	o := spark4Options(1)
	at := func(us float64, b *benchfmt.BatchMember) StoredLaunch {
		l := model.Launch{Times: map[int64][]float64{}}
		for _, size := range o.Band.Sizes() {
			l.Times[size] = []float64{us}
		}
		return StoredLaunch{Phase: vocab.PhaseExplore, Scored: true, Launch: l, Batch: b}
	}
	for _, tc := range []struct {
		name     string
		launches []StoredLaunch
		want     bool
	}{
		{"launches of its own", []StoredLaunch{at(10, nil), at(11, nil)}, true},
		{"one batch", []StoredLaunch{at(10, &benchfmt.BatchMember{Seq: 0, Position: 2, Configs: 5})}, false},
		{"two batches, two positions", []StoredLaunch{at(10, &benchfmt.BatchMember{Seq: 0, Position: 2, Configs: 5}),
			at(11, &benchfmt.BatchMember{Seq: 1, Position: 0, Configs: 5})}, true},
	} {
		tr := &Trial{State: vocab.TrialRunning}
		o.Regroup(tr, tc.launches)
		if got := tr.blockRanked(); got != tc.want || len(tr.Explore) != len(tc.launches) {
			t.Errorf("%s: %d measurements, blockRanked %v; want %d, %v", tc.name, len(tr.Explore), got, len(tc.launches), tc.want)
		}
	}
}

// TestAwaitsMember: while a batch is filled, a proposal whose plan is in
// doubt only by its twin's waits when that twin is a member not yet
// measured (the batch would measure one plan twice), and not once the
// twin was measured (checkTwin's debug launch settles it then) or outside
// a batch.
func TestAwaitsMember(t *testing.T) {
	data, err := os.ReadFile("../internal/benchfmt/testdata/real/ar4_explain_tuning.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := newLoop(spark4Options(1))
	defaults := &Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}}
	capped := &Trial{Number: 1, Role: vocab.RoleExplore, Config: nccl.Config{"NCCL_MAX_NCHANNELS": "1"}}
	s.trials = []*Trial{defaults, capped}
	s.learnPlan(defaults, vocab.PhasePlan, "", &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{Facts: benchfmt.ParseFacts(data)}})
	s.index(capped)
	spelling := nccl.Config{"NCCL_MAX_NCHANNELS": "1", "NCCL_PROTO": "Simple"}
	measured := &Trial{Number: 1, Config: capped.Config, Explore: []model.Launch{{}}}
	for _, tc := range []struct {
		name    string
		filling []*Trial
		twin    *Trial
		want    bool
	}{
		{"its twin a member still to measure", []*Trial{defaults, capped}, capped, true},
		{"not filling a batch", nil, capped, false},
		{"its twin measured", []*Trial{defaults, measured}, measured, false},
		{"its twin not a member", []*Trial{defaults}, capped, false},
	} {
		s.filling, s.byKey[s.plan.keyOf(capped.Config)] = tc.filling, tc.twin
		if got := s.awaitsMember(spelling); got != tc.want {
			t.Errorf("%s: awaitsMember(%s) %v, want %v", tc.name, spelling, got, tc.want)
		}
	}
	if s.filling = []*Trial{defaults, capped}; s.awaitsMember(nccl.Config{"NCCL_ALGO": "Tree"}) {
		t.Errorf("NCCL_ALGO=Tree waits for a one-channel member: its plan is its own")
	}
}

// timedLauncher is a simulated fabric whose launches of their own take
// solo and whose batches take perMember for each config.
type timedLauncher struct {
	*simLauncher
	solo, perMember time.Duration
	cutShort        bool // every batch measures none: each member launched on its own, as LaunchBatch does then
}

func (l timedLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	r, err := l.simLauncher.Launch(ctx, req)
	if r != nil {
		r.Duration = l.solo
	}
	return r, err
}

func (l timedLauncher) LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error) {
	ls, err := l.simLauncher.LaunchBatch(ctx, b)
	for k, r := range ls {
		r.Duration = l.perMember / time.Duration(len(b.Ops)) // each record its share
		if l.cutShort && err == nil {
			req, op := b.Members[k/len(b.Ops)], b.Ops[k%len(b.Ops)]
			req.Seq, req.Op, req.MinBytes, req.MaxBytes = req.Seq+k%len(b.Ops), op.Op, op.MinBytes, op.MaxBytes
			if ls[k], err = l.Launch(ctx, req); err != nil {
				return nil, err
			}
		}
	}
	return ls, err
}

// TestBatchesStopWhenCostly: a study keeps exploring in batches while a
// member costs less than half a launch of its own (a config ranks after
// two batches, after one launch); once a batch cost more, it explores in
// launches of its own, and each config that batch measured and could
// still lead gets one as its second block.
func TestBatchesStopWhenCostly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perMember time.Duration
		cutShort  bool
		many      bool
	}{
		{"a member costs a fifth of a launch", 600 * time.Millisecond, false, true},
		{"a member costs two thirds of a launch", 2 * time.Second, false, false},
		{"a batch cut short measures no member", 600 * time.Millisecond, true, false},
	} {
		for seed := int64(1); seed <= 3; seed++ {
			o := spark4Options(seed)
			o.BatchSize = 8
			l := timedLauncher{newSimLauncher(t, "spark4", 1, seed), 3 * time.Second, tc.perMember, tc.cutShort}
			res, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(l.batches) > 1; got != tc.many || len(l.batches) == 0 {
				t.Errorf("%s, seed %d: %d batches, want more than one: %v", tc.name, seed, len(l.batches), tc.many)
			}
			if tc.many {
				continue
			}
			var best *Trial
			for _, tr := range res.Trials {
				if tr.State.Usable() && len(tr.blocks) > 0 && tr != res.Baseline && (best == nil || tr.Score(o.Band.Sizes()) < best.Score(o.Band.Sizes())) {
					best = tr
				}
			}
			// Out of reach of the winner it may stay unranked (plausible).
			if best != nil && !best.blockRanked() && (res.Winner == nil || best.Score(o.Band.Sizes()) < 1.1*res.Winner.Score(o.Band.Sizes())) {
				t.Errorf("%s, seed %d: %s, the best the batch measured, was never measured again (%.1f; winner %s %.1f, %s)", tc.name, seed, best.Config, best.Score(o.Band.Sizes()), res.Env(), res.Winner.Score(o.Band.Sizes()), res.Stopped)
			}
		}
	}
}

// TestLocalStepChecksTwin: a local step from the leader that may be a
// second spelling of a measured config whose plan is unread is, like a
// proposal, first the debug launch of that config (checkTwin): after a
// batch the leader's neighbours were measured as configs of their own
// (three one-channel spellings, three launches each, on the loopback
// replay's seed 4).
func TestLocalStepChecksTwin(t *testing.T) {
	data, err := os.ReadFile("../internal/benchfmt/testdata/real/ar4_explain_tuning.txt")
	if err != nil {
		t.Fatal(err)
	}
	o := spark4Options(1)
	o.Startup, o.LocalSteps = 0, 100
	s := newLoop(o)
	s.rec = newMemRecorder(t)
	measure := func(tr *Trial, us float64) {
		l := model.Launch{Times: map[int64][]float64{}}
		for _, b := range o.Band.Sizes() {
			l.Times[b] = []float64{us}
		}
		tr.addExplore(l, us)
	}
	defaults := &Trial{Role: vocab.RoleBaseline, Config: nccl.Config{}, State: vocab.TrialRunning}
	capped := &Trial{Number: 1, Role: vocab.RoleExplore, Config: nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, State: vocab.TrialRunning}
	measure(defaults, 100)
	measure(defaults, 101)
	measure(capped, 80)
	measure(capped, 81)
	s.trials = []*Trial{defaults, capped}
	s.learnPlan(defaults, vocab.PhasePlan, "", &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{Facts: benchfmt.ParseFacts(data)}})
	s.index(defaults)
	s.index(capped)
	checked := false
	for range 2 * len(o.Space) {
		tr, phase, err := s.nextLocalStep()
		if err != nil || tr == nil {
			t.Fatalf("no local step (%v)", err)
		}
		if phase == vocab.PhasePlan {
			if tr != capped {
				t.Errorf("debug launch of %s, want the leader's", tr.Config)
			}
			checked = true
			break
		}
		if r := s.plan.resolve(tr.Config); !r.Certain && len(r.Conditional) > 0 && s.plan.keyOf(twin(r)) == s.plan.keyOf(capped.Config) {
			t.Errorf("local step %s measured as a config of its own: its plan waits on %s's", tr.Config, capped.Config)
		}
	}
	if !checked {
		t.Errorf("no local step asked for the leader's debug launch")
	}
}

// fastLastLauncher is a simulated fabric whose batches measure their last
// member twice as fast as it is: the config a batch's last event ranks.
type fastLastLauncher struct{ *simLauncher }

func (l fastLastLauncher) LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error) {
	ls, err := l.simLauncher.LaunchBatch(ctx, b)
	for _, r := range ls[len(ls)-len(b.Ops):] {
		if r.Result == nil {
			continue // the member failed
		}
		for i := range r.Result.Rows {
			r.Result.Rows[i].Out.TimeUS /= 2
		}
	}
	return ls, err
}

// TestBatchedMemberWaitsWithProgress: with progress heard (onEvent, as the
// CLI always sets it), a config one batch measured is not confirmed before
// a second block ranks it (blockRanked), even when it is the batch's last
// member, whose event asks for the candidate as it is recorded; and the
// study is the one made without progress (a workload's round is added
// after its launches' events asked).
func TestBatchedMemberWaitsWithProgress(t *testing.T) {
	twoOps := nccl.Workload{
		{Op: nccl.AllReduce, Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Weight: 0.8},
		{Op: nccl.AllGather, Band: nccl.Band{Min: 1 << 20, Max: 8 << 20}, Weight: 0.2},
	}
	for _, tc := range []struct {
		name     string
		workload nccl.Workload
		budget   int // the first batch is exploration's last
	}{
		{"one op", nil, 24},
		{"a workload of two ops", twoOps, 48},
	} {
		for seed := int64(1); seed <= 4; seed++ {
			o := spark4Options(seed)
			o.BatchSize, o.Budget, o.Workload = 8, tc.budget, tc.workload
			if tc.workload != nil {
				o.Band = Hull(o.Workload)
			}
			l := fastLastLauncher{newSimLauncher(t, "spark4", 1, seed)}
			confirmed, unranked := 0, []*Trial{}
			onEvent := func(ev Event) {
				if ev.Phase == vocab.PhaseConfirm && ev.Trial.Role != vocab.RoleBaseline {
					confirmed++
					if !ev.Trial.blockRanked() && !slices.Contains(unranked, ev.Trial) {
						unranked = append(unranked, ev.Trial)
						t.Errorf("%s, seed %d: %s confirmed after one batch measured it (blocks %v, %d launches)", tc.name, seed, ev.Trial.Config, ev.Trial.blocks, len(ev.Trial.Explore))
					}
				}
			}
			heard, err := Run(context.Background(), o, l, newMemRecorder(t), nil, 0, onEvent)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.batches) == 0 || confirmed == 0 {
				t.Errorf("%s, seed %d: %d batches, %d confirmation launches: the test checks nothing", tc.name, seed, len(l.batches), confirmed)
			}
			// Hearing the progress changes nothing of the study.
			res, err := Run(context.Background(), o, fastLastLauncher{newSimLauncher(t, "spark4", 1, seed)}, newMemRecorder(t), nil, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Env().Key() != heard.Env().Key() || res.Launches != heard.Launches || res.Reason != heard.Reason {
				t.Errorf("%s, seed %d: with progress heard %s in %d launches (%s); without, %s in %d (%s)", tc.name, seed,
					heard.Env(), heard.Launches, heard.Reason, res.Env(), res.Launches, res.Reason)
			}
		}
	}
}

// reserveLauncher is a simulated fabric that checks, as each batch
// launches, that the study's exploration can still pay for every member.
type reserveLauncher struct {
	*simLauncher
	s         *loop
	overspent []int // exploreLeft after each batch that did not fit
}

func (l *reserveLauncher) LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error) {
	if left := l.s.exploreLeft() - len(b.Members)*l.s.cost(); left < 0 {
		l.overspent = append(l.overspent, left)
	}
	return l.simLauncher.LaunchBatch(ctx, b)
}

// TestBatchKeepsReserve: a batch never takes more than exploration has
// left, debug launches made while it was filled included: the
// confirmation keeps its reserve (spark2, where checking a proposal's
// twin is common).
func TestBatchKeepsReserve(t *testing.T) {
	batches := 0
	for seed := int64(1); seed <= 20; seed++ {
		o := spark4Options(seed).withHull()
		o.BatchSize = 8
		prop, err := newProposer(o.Sampler, o.Space, o.Seed, o.Startup)
		if err != nil {
			t.Fatal(err)
		}
		s := newLoop(o)
		l := &reserveLauncher{simLauncher: newSimLauncher(t, "spark2", 1, seed), s: s}
		s.launcher, s.rec, s.prop = l, newMemRecorder(t), prop
		if _, err := s.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(l.overspent) > 0 {
			t.Errorf("seed %d: batches left exploration %v launches", seed, l.overspent)
		}
		batches += len(l.batches)
	}
	if batches == 0 {
		t.Errorf("no batch: the test checks nothing")
	}
}

// TestBatchRows: a batch member's rows leave round 0 (the warm-up round)
// out and take each size's median over the other rounds, which are its
// samples; a slow visit moves the median little.
func TestBatchRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rounds  []map[int64]float64
		want    map[int64]float64
		samples int
	}{
		{"warm-up round only", []map[int64]float64{{1024: 9}}, map[int64]float64{}, 0},
		{"warm-up left out", []map[int64]float64{{1024: 900}, {1024: 10}, {1024: 12}}, map[int64]float64{1024: 11}, 2},
		{"a visit 40 % slow", []map[int64]float64{{1024: 20, 2048: 40}, {1024: 10, 2048: 20}, {1024: 14, 2048: 21}, {1024: 10.5, 2048: 19}},
			map[int64]float64{1024: 10.5, 2048: 20}, 3},
	} {
		rows := BatchRows(tc.rounds)
		if len(rows) != len(tc.want) {
			t.Fatalf("%s: %d rows, want %d", tc.name, len(rows), len(tc.want))
		}
		for i, r := range rows {
			if i > 0 && rows[i-1].Bytes >= r.Bytes {
				t.Errorf("%s: rows out of order: %d after %d", tc.name, r.Bytes, rows[i-1].Bytes)
			}
			if r.Out.TimeUS != tc.want[r.Bytes] || len(r.Out.Iter.TimesUS) != tc.samples {
				t.Errorf("%s: %d bytes: %.1f µs over %d rounds, want %.1f over %d", tc.name, r.Bytes, r.Out.TimeUS, len(r.Out.Iter.TimesUS), tc.want[r.Bytes], tc.samples)
			}
		}
	}
}
