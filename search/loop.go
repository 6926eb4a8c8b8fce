package search

// The study loop, and the one place a launch is made and recorded.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

var errSpaceExhausted = errors.New("every config of the space has been tried")

// loop is the state of one run of the study loop: it makes and records
// every launch, and asks NCCL's plan (plan: which configs run alike) and
// the ranking (rank: which trial leads, which to confirm) what to do next.
type loop struct {
	opts     Options
	work     *workload // how a workload of several parts scores a round; nil for one part
	sizes    []int64   // the keys a measurement is scored over: the band's, or scoreKey
	launcher Launcher
	rec      Recorder
	onEvent  func(Event)
	prop     proposer
	rng      *rand.Rand

	*measured                   // the trials and the launches so far
	byKey     map[string]*Trial // the trials by plan key (planner.keyOf)
	rejected  []nccl.Config     // proposals never launched, learnt as failures
	start     time.Time
	// launchTook and launchCost sum the Duration and Cost (modelled on a
	// simulated fabric: batchesPay) of the launches of their own, no
	// batch's; ownLaunches counts them.
	launchTook, launchCost time.Duration
	ownLaunches            int
	localRun               int // local steps since the sampler's last proposal
	localDim               int // the knob the next local step starts from
	plan                   planner
	rank                   ranking
	// planRead: the defaults' plan launch was made; candidateRead: the
	// candidate's (or its twin's) debug launch was; readEarly: readCandidate
	// made it before the calls were judged (a refusal gives the reserve back).
	planRead, candidateRead, readEarly bool
	exactRead                          map[string]nccl.Plan      // NCCL's plan at the calls' own sizes, by exactKey
	exactRuns                          map[string][]model.Launch // measureExact's launches, by exactRunsKey
	exactDone                          bool                      // a candidate's calls were shown safe at their own sizes
	exactSkipped                       bool                      // a reconfirmation: no call judged at its own size
	// guardPlanned are the guarded ops whose defaults' plan launch was
	// made; guardPlansDone is set once no more are owed.
	guardPlanned   map[nccl.Op]bool
	guardPlansDone bool
	resumed        bool // continued from stored launches
	guardsDone     bool // the guards were run or are not owed
	// timeCut: --time ended a stage after exploration or kept a
	// confirmation after a refusal from starting (outOfConfirmTime).
	timeCut   bool
	version   string                  // NCCL's version as the launches print it ("" until one did)
	refusedAt map[*Trial]refusedSites // the candidates refusals ruled out, with their sites
	forced    *Trial                  // the next candidate to confirm in place of the ranking's
	restarted []Refusal               // the refusals a resumed study restored
	planned   *Planned                // a resumed confirmation's stored design, nil once taken
	// perFunction are per-function forms of explored global lists that
	// lost an op, to explore next (notePerFunction).
	perFunction   []nccl.Config
	batches       int                          // batch launches made
	batched       map[nccl.Op]*benchfmt.Launch // the records of the batch member being recorded
	filling       []*Trial                     // the members of the batch being filled
	batchesCostly bool                         // a batch cost more than it saved (batchesPay)
}

// newLoop is a study of opts with no trial yet and nothing launched.
func newLoop(opts Options) *loop {
	sizes := opts.Band.Sizes()
	if opts.clock == nil {
		opts.clock = time.Now
	}
	s := &loop{opts: opts, sizes: sizes, measured: &measured{}, byKey: map[string]*Trial{}, start: opts.clock(),
		rng: rand.New(rand.NewSource(opts.Seed ^ 0x5eed)), plan: newPlanner(opts.Op, sizes, opts.Guard, opts.AllowDisabled),
		exactRead: map[string]nccl.Plan{}, exactRuns: map[string][]model.Launch{}, guardPlanned: map[nccl.Op]bool{},
		refusedAt: map[*Trial]refusedSites{}}
	if s.work = newWorkload(opts.Parts()); s.work != nil {
		// NCCL plans each op apart: configs merge when every op runs alike.
		s.plan = newWorkloadPlanner(opts.Parts(), opts.Guard, opts.AllowDisabled)
		s.sizes = []int64{scoreKey}
	}
	s.rank = ranking{measured: s.measured, plan: &s.plan, sizes: s.sizes, guard: append(s.guardSizes(), s.work.timedCalls()...),
		minEffect: opts.Stats.MinEffect, maxLaunches: opts.MaxLaunchesPerTrial, ruledOut: s.ruledOut}
	return s
}

// Run runs the study loop: warm-up, exploration, the interleaved
// confirmation and the decision. prior and priorLaunches are an
// interrupted study's; onEvent, if not nil, sees every launch. When ctx
// is cancelled Run returns what is known, Stopped "interrupted", and
// ctx's error.
func Run(ctx context.Context, opts Options, launcher Launcher, rec Recorder, prior []*Trial, priorLaunches int, onEvent func(Event)) (*Result, error) {
	return RunResume(ctx, opts, launcher, rec, Resume{Trials: prior, Launches: priorLaunches}, onEvent)
}

// RunResume is Run of a study that made prior before it was interrupted.
// After a refusal it goes on with that confirmation: it neither explores
// again nor confirms a refused candidate again.
func RunResume(ctx context.Context, opts Options, launcher Launcher, rec Recorder, prior Resume, onEvent func(Event)) (*Result, error) {
	opts = opts.withHull().Resumed(prior.Trials)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	prop, err := newProposer(opts.Sampler, opts.Space, opts.Seed, opts.Startup)
	if err != nil {
		return nil, err
	}
	s := newLoop(opts)
	s.launcher, s.rec, s.onEvent, s.prop = launcher, rec, onEvent, prop
	s.seq, s.resumed = prior.Launches, prior.Launches > 0
	for _, t := range prior.Trials {
		s.trials = append(s.trials, t)
		s.index(t)
		for _, b := range t.blocks {
			// A resumed study numbers its batches after the stored ones.
			s.batches = max(s.batches, b.Seq+1)
		}
	}
	s.replayDebug()
	for _, t := range s.trials {
		s.restoreExact(t)
	}
	if err := s.restore(prior.Refused); err != nil {
		return nil, err
	}
	s.planned = prior.Design
	return s.run(ctx)
}

// restoreEarlyRead marks w read when its explain launch was made before
// the interruption, else its reserve would be held back a second time.
func (s *loop) restoreEarlyRead(w *Trial) {
	if slices.ContainsFunc(w.Debug, func(d DebugLaunch) bool {
		return d.Phase == vocab.PhaseExplain && d.Launch != nil && d.Launch.Reason != benchfmt.ReasonInterrupted
	}) {
		s.candidateRead, s.readEarly = true, true
	}
}

// restore readies a study resumed after refusals to go on as
// nextAfterRefusal left it.
func (s *loop) restore(refused []Refusal) error {
	if len(refused) == 0 {
		return nil
	}
	last := refused[len(refused)-1].Restart
	if last == nil {
		return fmt.Errorf("the last stored refusal (trial %d) says nothing of the confirmation that followed it; the study cannot resume: start it again", refused[len(refused)-1].Trial.Number)
	}
	for _, r := range refused {
		s.noteRefusal(r)
	}
	s.rank.forget()
	s.restarted, s.exactDone = refused, last.ExactDone
	if last.Next != nil {
		t, err := s.trialOf(last.Next)
		if err != nil {
			return err
		}
		s.forced = t
	}
	return nil
}

// replayDebug reads NCCL's plan back from a resumed study's stored debug
// launches, the defaults' first.
func (s *loop) replayDebug() {
	for _, defaults := range []bool{true, false} {
		for _, t := range s.trials {
			if (len(t.Config.Canonical()) == 0) != defaults {
				continue
			}
			for _, d := range t.Debug {
				l := d.Launch
				// An exact read is restoreExact's; one the interruption stopped is made again.
				if l == nil || d.Phase == vocab.PhaseExact || l.Reason == benchfmt.ReasonInterrupted {
					continue
				}
				s.learnPlan(t, d.Phase, l.Op, l)
				switch {
				case d.Phase == vocab.PhasePlan && defaults && s.guardedOp(l.Op):
					s.guardPlanned[l.Op.OrAllReduce()] = true
				case d.Phase == vocab.PhasePlan && defaults:
					// Read, or failed for good: made once, like any launch.
					s.planRead = true
				case d.Phase == vocab.PhasePlan:
					s.plan.checks++
				}
			}
		}
	}
}

func (s *loop) run(ctx context.Context) (*Result, error) {
	res := &Result{}
	base := s.baseline()
	if base == nil {
		var err error
		if base, err = s.addTrial(s.opts.Baseline.Clone(), vocab.RoleBaseline); err != nil {
			return nil, err
		}
	}
	res.Baseline = base
	res.Refused = slices.Clone(s.restarted)
	defer func() { res.Plan = s.plan.summary(s.trials, s.opts.Space.Size()) }()

	if err := s.startBaseline(ctx, base); err != nil {
		return s.stop(res, err)
	}
	if err := s.exploreDefaults(ctx); err != nil {
		return s.stop(res, err)
	}
	if len(s.restarted) > 0 {
		res.Stopped = s.restarted[len(s.restarted)-1].Restart.Stopped
	} else if err := s.explore(ctx, res); err != nil {
		return s.stop(res, err)
	}
	// A refusal is not the end: the best candidate it does not rule out is
	// confirmed next, while the budget holds a confirmation that decides.
	for again := true; again; {
		if err := s.confirm(ctx, res); err != nil {
			return s.stop(res, err)
		}
		if err := s.guard(ctx, res); err != nil {
			return s.stop(res, err)
		}
		var err error
		if again, err = s.nextAfterRefusal(res); err != nil {
			return s.stop(res, err)
		}
	}
	if err := s.explain(ctx, res); err != nil {
		return s.stop(res, err)
	}
	return s.finish(res), nil
}

// startBaseline makes the launches before exploring: the warm-up, NCCL's
// plan under its defaults, and the baseline's first measured launch.
func (s *loop) startBaseline(ctx context.Context, base *Trial) error {
	// NCCL's plan is read first when it is still to read and the budget
	// holds its launch (a resumed study read it back: replayDebug).
	planFirst := !s.planRead && s.seq+s.cost() <= s.opts.Budget
	userBaseline := len(s.opts.Baseline.Clone()) > 0
	// Warm-up: the first launch after a fabric starts can be ~30 % slow;
	// it is stored, never scored. The plan's debug launch of the baseline
	// warms the fabric as well, so when it comes first it is the warm-up;
	// against the user's baseline the warm-up is the baseline's. A resumed
	// study warms up again only when a measured launch is still to come.
	if (!planFirst || userBaseline) && (!s.resumed || s.seq < s.opts.Budget-s.explainLeft()) {
		if err := s.launchOp(ctx, base, vocab.PhaseWarmup, false, s.opts.Parts()[0].Op, s.warmupRound()); err != nil {
			return err
		}
		if !base.State.Usable() {
			return fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason)
		}
	}
	// NCCL's own plan under its defaults: configs that provably run the
	// same plan are merged, and those that switch on what NCCL disabled refused.
	planOf := base
	if userBaseline {
		var err error
		if planOf, err = s.defaultsTrial(); err != nil {
			return err
		}
	}
	if planFirst {
		if err := s.launch(ctx, planOf, vocab.PhasePlan, false); err != nil {
			return err
		}
		if !base.State.Usable() {
			return fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason) // it was the warm-up (warmsUp)
		}
	}
	s.planRead = true
	if err := s.planGuardedOps(ctx, planOf); err != nil {
		return err
	}
	// Every later proposal is judged against the baseline's own launches.
	for len(base.Explore) < 1 && s.exploreLeft() >= s.cost() && s.batcher() == nil {
		if err := s.launch(ctx, base, vocab.PhaseExplore, true); err != nil {
			return err
		}
		if !base.State.Usable() {
			return fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason)
		}
	}
	return nil
}

// planGuardedOps reads NCCL's defaults' plan of each guarded op still owed
// over the wide range, so the tuner CSV keeps NCCL's own choice for them.
func (s *loop) planGuardedOps(ctx context.Context, planOf *Trial) error {
	for _, op := range s.guardPlansOwed() {
		if s.seq+1+s.candidateExplainLeft() > s.opts.Budget {
			break
		}
		if err := s.launchOp(ctx, planOf, vocab.PhasePlan, false, op, map[nccl.Op]model.Launch{}); err != nil {
			return err
		}
		s.guardPlanned[op.OrAllReduce()] = true
	}
	// Owed no longer: the budget holds none back for them (explainLeft).
	s.guardPlansDone = true
	return nil
}

// guardPlansOwed are the guarded ops whose plan launch is still to make.
func (s *loop) guardPlansOwed() []nccl.Op {
	if s.guardPlansDone {
		return nil
	}
	return slices.DeleteFunc(s.opts.guardPlanOps(), func(op nccl.Op) bool { return s.guardPlanned[op.OrAllReduce()] })
}

// guardedOp reports whether op is one of the guarded ops.
func (s *loop) guardedOp(op nccl.Op) bool {
	return slices.ContainsFunc(s.opts.GuardOps, func(g nccl.Op) bool { return g.OrAllReduce() == op.OrAllReduce() })
}

// explore launches what next proposes until the budget, the time or the
// space runs out (res.Stopped says which).
func (s *loop) explore(ctx context.Context, res *Result) error {
	res.Stopped = "budget"
	for s.exploreLeft() >= s.cost() || s.mustSettle() || s.mustFind() {
		if s.outOfTime() && !s.mustFindInTime() {
			res.Stopped = "time"
			break
		}
		var batched bool
		var err error
		if b := s.batcher(); b != nil {
			batched, err = s.exploreBatch(ctx, b)
		}
		if !batched && err == nil {
			var t *Trial
			var phase string
			if t, phase, err = s.next(); err == nil {
				err = s.launch(ctx, t, phase, true)
			}
		}
		if errors.Is(err, errSpaceExhausted) {
			res.Stopped = "space"
			return s.settleLeaders(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stop ends the study early: on cancellation it returns what is known.
func (s *loop) stop(res *Result, err error) (*Result, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		res.Stopped, res.Ending = "interrupted", vocab.EndingInterrupted
		res.Reason = "interrupted before a decision; resume the study to continue"
		res.Trials, res.Launches = s.trials, s.seq
		return res, err
	}
	return nil, err
}

func (s *loop) finish(res *Result) *Result {
	res.Trials, res.Launches = s.trials, s.seq
	s.settle(res)
	var done []*Trial
	for _, t := range s.trials {
		if t.State == vocab.TrialRunning {
			t.State = vocab.TrialComplete
			done = append(done, t)
		}
	}
	if len(done) > 0 {
		_ = s.rec.SaveTrials(done) // the decision stands even if this write fails
	}
	return res
}

// defaultsTrial is the trial of NCCL's defaults, added when there is none.
func (s *loop) defaultsTrial() (*Trial, error) {
	if i := slices.IndexFunc(s.trials, func(t *Trial) bool { return len(t.Config.Canonical()) == 0 }); i >= 0 {
		return s.trials[i], nil
	}
	return s.addTrial(nccl.Config{}, vocab.RoleExplore)
}

// exploreDefaults launches NCCL's defaults once when the baseline is the
// user's settings: they may be better still.
func (s *loop) exploreDefaults(ctx context.Context) error {
	if len(s.opts.Baseline.Clone()) == 0 || s.exploreLeft() < s.cost() {
		return nil
	}
	t, err := s.defaultsTrial()
	if err != nil || len(t.Explore) > 0 || !t.State.Usable() {
		return err
	}
	return s.launch(ctx, t, vocab.PhaseExplore, true)
}

// exploreLeft is the number of launches exploration may still use: the
// confirmation's share (or a timed workload's calls' looks, callsLooks,
// if more) and heldBack are held back.
func (s *loop) exploreLeft() int {
	return s.opts.Budget - 2*max(s.confirmMax(), s.opts.callsLooks())*s.cost() - s.heldBack() - s.seq
}

// cost is the launches one measurement of a config takes: one per op.
func (s *loop) cost() int {
	if s.work == nil {
		return 1
	}
	return len(s.work.ops)
}

// explainLeft is the number of debug launches still held back: the
// defaults' plan launch, each guarded op's, the candidate's (or its
// twin's), and a timed workload's calls' at their own sizes (exactLeft).
func (s *loop) explainLeft() int {
	n := len(s.guardPlansOwed()) + s.candidateExplainLeft() + s.exactLeft()
	if !s.planRead {
		n += s.cost()
	}
	return n
}

// heldBack is what every stage leaves for the stages after it, in
// launches (TestTimeKeepsTheCallsOwnSizesTheirLaunches).
func (s *loop) heldBack() int { return s.explainLeft() + s.guardLeft() }

// inTime is what --time holds of held: the calls' own-size check only at
// its least, since --time does not grow by its reserve.
func (s *loop) inTime(held int) int {
	return held - s.exactLeft() + min(s.exactLeft(), s.opts.exactFirst())
}

// candidateExplainLeft is the candidate's debug launches still held back.
func (s *loop) candidateExplainLeft() int {
	if s.candidateRead {
		return 0
	}
	return s.cost()
}

// settleLaunches are exploration's last launches, which re-measure the
// leading configs.
const settleLaunches = 1

// mustSettle reports a plausible candidate measured only once while the
// budget can still give it a second launch.
func (s *loop) mustSettle() bool {
	c := s.rank.candidate(s.baseline())
	return c != nil && len(c.Explore) < 2 && s.plausible(c) &&
		s.holdsBesideConfirm()
}

// holdsBesideConfirm reports whether the budget and --time hold one more
// measurement beside the smallest confirmation and what is held back.
func (s *loop) holdsBesideConfirm() bool {
	return s.seq+s.cost() <= s.opts.Budget-2*s.firstLook()*s.cost()-s.heldBack() && !s.outOfTime()
}

// firstLook is the launches per arm a recommendation needs before it can
// ship.
func (s *loop) firstLook() int {
	if s.opts.Parts().Timed() {
		return max(s.opts.ConfirmLaunches, s.opts.GuardLaunches)
	}
	return s.opts.ConfirmLaunches
}

// mustFind reports that no config but the defaults has run yet while the
// budget still holds more than the smallest confirmation that decides.
func (s *loop) mustFind() bool {
	need := model.MinLaunchesForDecision(s.opts.Stats)
	return s.rank.candidate(s.baseline()) == nil &&
		s.opts.Budget-s.seq-s.heldBack()-(2*need+1)*s.cost() >= s.cost()
}

// mustFindInTime is mustFind for --time.
func (s *loop) mustFindInTime() bool {
	need := model.MinLaunchesForDecision(s.opts.Stats)
	return s.rank.candidate(s.baseline()) == nil && !s.pastTime((2*need+2)*s.cost())
}

// outOfTime reports whether exploring once more would leave too little of
// --time for what a recommendation needs, the guards' launches included
// (without them every recommendation was refused for its guards).
func (s *loop) outOfTime() bool {
	if s.opts.Time <= 0 {
		return false
	}
	need := time.Duration((2*s.firstLook()+1)*s.cost()+s.inTime(s.heldBack())) * s.meanLaunchDuration()
	return s.elapsed()+need > s.opts.Time
}

// elapsed is the study's wall time so far.
func (s *loop) elapsed() time.Duration {
	return s.opts.clock().Sub(s.start)
}

func (s *loop) meanLaunchDuration() time.Duration {
	return s.launchTook / time.Duration(max(s.ownLaunches, 1))
}

// meanLaunchCost is the mean Launch.Cost of the launches of their own.
func (s *loop) meanLaunchCost() time.Duration {
	return s.launchCost / time.Duration(max(s.ownLaunches, 1))
}

func (s *loop) addTrial(cfg nccl.Config, role string) (*Trial, error) {
	t := &Trial{Number: len(s.trials), Config: cfg.Canonical(), Role: role, State: vocab.TrialRunning}
	if err := s.rec.SaveTrial(t); err != nil {
		return nil, err
	}
	s.trials = append(s.trials, t)
	s.index(t)
	return t, nil
}

// index keys t in the trial index, unless a trial NCCL runs alike holds
// the key already.
func (s *loop) index(t *Trial) {
	if _, taken := s.byKey[s.plan.keyOf(t.Config)]; !taken {
		s.byKey[s.plan.keyOf(t.Config)] = t
	}
}

// trialOf is the trial of exactly cfg, added when the study has none.
func (s *loop) trialOf(cfg nccl.Config) (*Trial, error) {
	key := cfg.Canonical().Key()
	if i := slices.IndexFunc(s.trials, func(t *Trial) bool { return t.Config.Key() == key }); i >= 0 {
		return s.trials[i], nil
	}
	return s.addTrial(cfg, vocab.RoleExplore)
}

// learnPlan hands a debug launch of t to NCCL's plan; when it learnt a
// plan, the trial index is rebuilt, the trial measured most keeping a key.
func (s *loop) learnPlan(t *Trial, phase string, op nccl.Op, l *benchfmt.Launch) {
	if s.guardedOp(op) {
		// Judged by the guard alone: it merges and refuses no config.
		return
	}
	if !s.plan.learn(t, phase, op, l) {
		return
	}
	s.byKey = map[string]*Trial{}
	for _, t := range s.trials {
		k := s.plan.keyOf(t.Config)
		old, ok := s.byKey[k]
		if !ok || t.Role == vocab.RoleBaseline || old.Role != vocab.RoleBaseline && len(t.Explore) > len(old.Explore) {
			s.byKey[k] = t
		}
	}
}

// launch runs and records one measurement of t; the error is non-nil only
// when the study cannot go on.
func (s *loop) launch(ctx context.Context, t *Trial, phase string, scored bool) error {
	if s.work == nil {
		return s.launchOp(ctx, t, phase, scored, s.opts.Parts()[0].Op, nil)
	}
	return s.launchRound(ctx, t, phase, scored)
}

// launchRound makes one launch of t per op of the workload: one round.
func (s *loop) launchRound(ctx context.Context, t *Trial, phase string, scored bool) error {
	round := map[nccl.Op]model.Launch{}
	explored := scored && (phase == vocab.PhaseExplore || phase == vocab.PhaseRefine)
	for _, op := range s.work.ops {
		if err := s.launchOp(ctx, t, phase, scored, op, round); err != nil {
			return err
		}
		if !t.State.Usable() {
			if explored {
				s.notePerFunction(t, round)
			}
			return nil // failed: the round is incomplete, the trial failed
		}
	}
	if explored && len(t.Explore) == 0 {
		// Its first round: does the global list lose an op?
		s.notePerFunction(t, round)
	}
	if len(round) < len(s.work.ops) {
		return nil // unscored (warm-up, debug)
	}
	sc, err := s.work.roundScore(round)
	if err != nil {
		t.State, t.Reason = vocab.TrialFailed, "launch lacks band sizes: "+err.Error()
		return nil
	}
	if phase == vocab.PhaseConfirm || scored {
		t.addRound(phase, round, sc)
		if l := s.batched[s.requestOp(s.work.ops[0])]; l != nil {
			t.addBlock(l.Batch)
		}
		// The round's launches told their events before it was added.
		s.rank.forget()
	}
	return nil
}

// launchOp runs and records one launch of t measuring op; round, when not
// nil, collects the measurement. Every launch sweeps the band and the
// guard sizes: the guard sizes keep exploration away from configs that
// would fail the guard check.
func (s *loop) launchOp(ctx context.Context, t *Trial, phase string, scored bool, op nccl.Op, round map[nccl.Op]model.Launch) error {
	debug := phase == vocab.PhaseExplain || phase == vocab.PhasePlan
	// A debug launch's times are not measurements of the config.
	scored = scored && !debug
	req := Request{Config: t.Config, Seq: s.seq, Phase: phase, Trial: t.Number, Debug: debug, Op: s.requestOp(op)}
	req.MinBytes, req.MaxBytes = SweepRange(s.opts, op)
	if debug && (t.Role == vocab.RoleBaseline || len(t.Config.Canonical()) == 0) {
		// The defaults' and the baseline's choices fill the tuner file
		// outside every band; other configs' are read inside their band.
		lo, hi := s.opts.explainRange(op)
		req.MinBytes, req.MaxBytes = min(req.MinBytes, lo), max(req.MaxBytes, hi)
	}
	l, err := s.runCounted(ctx, t, req)
	if err != nil {
		return err
	}
	score, eventScore := s.measureOp(t, phase, scored, op, round, l)
	if debug {
		s.learnPlan(t, phase, op, l)
	}
	if l.Outcome != benchfmt.OK && (!debug || s.warmsUp(t, phase) && (l.Result == nil || len(l.Result.Rows) == 0)) && !s.guardedOp(op) {
		// A guarded op that fails is judged by the guard, not the trial.
		t.State, t.Reason, t.failedOp = stateFor(l.Outcome), l.Reason, op.OrAllReduce()
		if l.Outcome == benchfmt.Invalid {
			s.plan.noteWrong(t)
		}
	}
	if s.version == "" && l.Result != nil {
		s.version = l.Result.NCCLVersion
	}
	counted := scored && l.Outcome == benchfmt.OK
	if !counted {
		score = 0
	}
	return s.record(t, req, l, scored, counted, score, eventScore)
}

// runCounted makes req's launch of t (or hands back the running batch's)
// and counts it.
func (s *loop) runCounted(ctx context.Context, t *Trial, req Request) (*benchfmt.Launch, error) {
	l, err := s.launchOrBatched(ctx, req)
	if err != nil && (l == nil || ctx.Err() == nil) {
		return nil, err
	}
	s.seq++
	t.Launches++
	if err != nil {
		_ = s.rec.SaveLaunch(t, req, l, false, 0)
		return nil, err
	}
	if l.Batch == nil {
		// A batch's records each carry a share of its duration (batchTook).
		s.launchTook += l.Duration
		s.launchCost += l.Cost()
		s.ownLaunches++
	}
	return l, nil
}

// record stores launch l of t and tells its event. scored: the launch
// measures the config (not a debug launch); counted: its score counts
// (scored and OK).
func (s *loop) record(t *Trial, req Request, l *benchfmt.Launch, scored, counted bool, score, eventScore float64) error {
	if err := s.rec.SaveLaunch(t, req, l, counted, score); err != nil {
		return err
	}
	if s.onEvent != nil {
		s.onEvent(s.event(req, t, l, scored, eventScore))
	}
	return nil
}

// warmsUp reports whether a launch of t in phase is the warm-up made by
// the plan's debug launch of the baseline: it fails the baseline when it
// ran no size at all, so that the study ends after one launch, not two.
func (s *loop) warmsUp(t *Trial, phase string) bool {
	return phase == vocab.PhasePlan && t.Role == vocab.RoleBaseline && !s.planRead
}

// measureOp adds an OK launch of op to t's measurements (round nil) or to
// the round, and returns its band score and the progress's (eventScore).
func (s *loop) measureOp(t *Trial, phase string, scored bool, op nccl.Op, round map[nccl.Op]model.Launch, l *benchfmt.Launch) (score, eventScore float64) {
	if round == nil {
		score = s.measure(t, phase, scored, l)
		return score, score
	}
	if l.Outcome != benchfmt.OK || !scored && phase != vocab.PhaseConfirm {
		return 0, 0
	}
	ml, sc, err := Measure(l, s.opts.OpSizes(op))
	if err != nil {
		l.Outcome, l.Reason = benchfmt.Failed, "launch lacks band sizes: "+err.Error()
		return 0, 0
	}
	round[op] = ml
	return sc, 0
}

// guardSizes are the guard sizes of every op measured.
func (s *loop) guardSizes() []opSize {
	if s.work != nil {
		return s.work.guardSizes(s.opts.Guard)
	}
	out := make([]opSize, len(s.opts.Guard))
	for i, g := range s.opts.Guard {
		out[i] = opSize{bytes: g}
	}
	return out
}

// warmupRound is where a warm-up launch's measurement goes: nowhere.
func (s *loop) warmupRound() map[nccl.Op]model.Launch {
	if s.work == nil {
		return nil
	}
	return map[nccl.Op]model.Launch{}
}

// requestOp is the op a request names: "" for a one-part study's op.
func (s *loop) requestOp(op nccl.Op) nccl.Op {
	if s.work == nil && len(s.opts.Parts().Sizes(op)) > 0 {
		return ""
	}
	return op.OrAllReduce()
}

// measure adds an OK launch of t to its measurements and returns its band
// score; a launch that lacks a band size is failed instead, and scores 0.
func (s *loop) measure(t *Trial, phase string, scored bool, l *benchfmt.Launch) float64 {
	if l.Outcome != benchfmt.OK {
		return 0
	}
	ml, sc, err := Measure(l, s.sizes)
	if err != nil {
		l.Outcome, l.Reason = benchfmt.Failed, "launch lacks band sizes: "+err.Error()
		return 0
	}
	switch {
	case phase == vocab.PhaseConfirm:
		t.Confirm = append(t.Confirm, ml)
	case scored:
		t.addExplore(ml, sc)
		t.addBlock(l.Batch)
	}
	return sc
}

// Measure is an OK launch as the statistics read it and its band score
// over sizes in µs: the one place a launch is scored as it is measured
// (the study loop, verify, compare and sweep hand its score to their
// Recorder); err, with a score of 0, when it lacks a band size.
func Measure(l *benchfmt.Launch, sizes []int64) (model.Launch, float64, error) {
	ml := model.LaunchOf(benchfmt.SizesOf(l.Result))
	sc, err := model.LaunchScore(ml, sizes)
	if err != nil {
		return ml, 0, err
	}
	return ml, sc, nil
}

// event is what the progress output hears of one launch of t.
func (s *loop) event(req Request, t *Trial, l *benchfmt.Launch, scored bool, score float64) Event {
	ev := Event{Seq: req.Seq, Budget: s.opts.Budget, Phase: req.Phase, Trial: t, Launch: l, Elapsed: s.elapsed(), Trials: len(s.trials)}
	if scored {
		ev.LaunchScore = score
	}
	ev.Baseline = s.baseline()
	if lead := s.rank.leaders(1); len(lead) == 1 {
		ev.Best = lead[0]
		if base := ev.Baseline; base != nil && len(base.Explore) > 0 {
			ev.BestSpeedup = base.Score(s.sizes) / lead[0].Score(s.sizes)
		}
		ev.BestGain = gainBounds(ev.Baseline, ev.Best, s.sizes, s.opts.Stats)
	}
	ev.Candidate = s.rank.candidate(ev.Baseline)
	return ev
}

// gainBounds bound best's exploration gain over base: the comparison's
// interval, else the range of best's launches; nil when best is base or
// has fewer than two launches.
func gainBounds(base, best *Trial, sizes []int64, stats model.Options) *GainBounds {
	if base == nil || best == base {
		return nil
	}
	cmp := model.Compare(base.Explore, best.Explore, sizes, stats)
	if cmp.CIOK {
		return &GainBounds{Lo: cmp.Lo, Hi: cmp.Hi, Interval: true}
	}
	b := base.Score(sizes)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, sc := range best.exploreScores(sizes) {
		if sc > 0 {
			lo, hi = math.Min(lo, b/sc), math.Max(hi, b/sc)
		}
	}
	if len(best.Explore) < 2 || math.IsInf(lo, 0) || math.IsNaN(b) {
		return nil
	}
	return &GainBounds{Lo: lo, Hi: hi}
}

func stateFor(o benchfmt.Outcome) vocab.TrialState {
	switch o {
	case benchfmt.TimedOut:
		return vocab.TrialTimedOut
	case benchfmt.Invalid:
		return vocab.TrialInvalid
	}
	return vocab.TrialFailed
}

// explain runs one debug launch of the baseline and one of the candidate,
// so the store records what NCCL chose per size with each.
func (s *loop) explain(ctx context.Context, res *Result) error {
	for _, t := range []*Trial{res.Baseline, res.Winner} {
		// The budget holds it back (explainLeft); a plan launch of t already
		// recorded NCCL's choices with it.
		if t == nil || s.seq+s.cost() > s.opts.Budget || s.plan.logged[t] {
			continue
		}
		if err := s.launch(ctx, t, vocab.PhaseExplain, false); err != nil {
			return err
		}
	}
	return nil
}
