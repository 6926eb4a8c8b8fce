package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// Launcher runs one launch of the benchmark. The CLI's launcher calls
// runner.Run; tests and benchmarks evaluate the simulated fabric in process.
type Launcher interface {
	Launch(ctx context.Context, req Request) (*benchfmt.Launch, error)
}

// Request is one launch the study wants.
type Request struct {
	Config nccl.Config
	// MinBytes and MaxBytes are the sweep: the band while exploring, the
	// band and the guard sizes while confirming.
	MinBytes, MaxBytes int64
	// Seq is the launch's index in the study, counting from 0 (the
	// simulated fabric derives its per-launch seed from it).
	Seq   int
	Phase string
	Trial int
	// Debug asks for NCCL's debug log (NCCL_DEBUG=INFO with TUNING), which
	// records the algorithm, protocol and channels NCCL chose per size.
	Debug bool
}

// Recorder keeps what the study measures. The CLI's recorder writes the
// bbolt store; search never touches storage itself.
type Recorder interface {
	// SaveTrial is called when a trial is created.
	SaveTrial(t *Trial) error
	// SaveTrials is called once when the study ends, with the trials whose
	// state changed.
	SaveTrials(ts []*Trial) error
	// SaveLaunch is called once per launch, before the study goes on, with
	// the trial as the launch left it (state, reason, launches).
	SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool) error
}

// Options configure a study.
type Options struct {
	Band nccl.Band
	// Guard sizes: the winner may not be significantly slower there.
	Guard []int64
	Space Space
	// Budget is the total number of launches, warm-up and confirmation included.
	Budget int
	// Time bounds the study's wall time; 0 means no limit.
	Time time.Duration
	Seed int64
	// Sampler is "tpe" (default), "random" or "grid".
	Sampler string
	// Startup is the number of random configs before TPE takes over.
	Startup int
	// ConfirmLaunches is the number of interleaved launches per arm at the
	// confirmation's first look, and the fewest it plans. The most it plans
	// grows with the budget and with the launch spread measured while
	// exploring (see confirmMax).
	ConfirmLaunches int
	// MaxLaunchesPerTrial caps the exploration launches of one config.
	MaxLaunchesPerTrial int
	// LocalSteps is how many local steps from the leader follow each
	// proposal of the sampler, once past the start-up.
	LocalSteps int
	// TopConfigs is how many of the best configs the planner keeps measuring
	// until their order is settled.
	TopConfigs int
	Stats      model.Options
	// AllowDisabled lets the study explore and recommend configs that
	// switch on a protocol or algorithm NCCL's defaults disabled on this
	// platform (NCCL_PROTO=^LL or LL128 where NCCL keeps LL128 off): NCCL
	// disables them where they may give wrong results.
	AllowDisabled bool
	// Baseline is what the study compares with and starts from: the
	// user's current settings (--baseline-env), or empty for NCCL's
	// defaults. With a baseline, NCCL's defaults are explored as one more
	// config, so the study can say whether they would be better still.
	Baseline nccl.Config
}

// DefaultOptions returns the options of `nccltune search` without flags.
func DefaultOptions() Options {
	return Options{
		Space:               DefaultSpace(),
		Budget:              60,
		Seed:                1,
		Sampler:             "tpe",
		Startup:             8,
		ConfirmLaunches:     6,
		MaxLaunchesPerTrial: 3,
		TopConfigs:          3,
		LocalSteps:          2,
		Stats:               model.DefaultOptions(),
	}
}

// DefaultGuard is the size just above the band: a change that helps the
// band must not quietly hurt the next size up.
func DefaultGuard(b nccl.Band) []int64 {
	sizes := b.Sizes()
	if len(sizes) == 0 {
		return nil
	}
	return []int64{sizes[len(sizes)-1] * 2}
}

// The explain launches sweep at least this range.
const (
	explainMin = 32 << 10
	explainMax = 256 << 20
)

// explainLaunches is the budget the study keeps for its explain launches.
const explainLaunches = 2

// MinBudget is the smallest budget a study can decide with.
func (o Options) MinBudget() int { return 1 + 2*o.ConfirmLaunches + explainLaunches + 4 }

// Validate checks options before the first launch.
func (o Options) Validate() error {
	if err := o.Band.Validate(); err != nil {
		return err
	}
	if o.ConfirmLaunches < model.MinLaunchesForDecision(o.Stats) {
		return fmt.Errorf("%d confirmation launches per arm cannot reach significance at alpha %g; use at least %d",
			o.ConfirmLaunches, o.Stats.Alpha, model.MinLaunchesForDecision(o.Stats))
	}
	if o.Budget < o.MinBudget() {
		return fmt.Errorf("--budget %d is too small: a study needs at least %d launches (1 warm-up, %d confirmation, %d explain, 4 to explore)",
			o.Budget, o.MinBudget(), 2*o.ConfirmLaunches, explainLaunches)
	}
	if o.Time < 0 {
		return fmt.Errorf("--time %s cannot be negative", o.Time)
	}
	if !slices.Contains(Samplers, o.Sampler) && o.Sampler != "" {
		return fmt.Errorf("unknown sampler %q; use tpe, random or grid", o.Sampler)
	}
	for _, g := range o.Guard {
		if g <= 0 {
			return fmt.Errorf("guard size %d must be positive", g)
		}
	}
	if len(o.Space) == 0 {
		return fmt.Errorf("the search space is empty")
	}
	for _, d := range o.Space {
		if _, err := nccl.LookupKnob(d.Knob); err != nil {
			return err
		}
		if len(d.Choices) == 0 {
			return fmt.Errorf("%s has no values to try", d.Knob)
		}
	}
	return nil
}

// Event reports one finished launch, for progress output.
type Event struct {
	Seq, Budget int
	Phase       string
	Trial       *Trial
	Launch      *benchfmt.Launch
	// LaunchScore is the launch's band score in µs (0 if it failed or is unscored).
	LaunchScore float64
	// Best is the current leader and its estimated speedup over the
	// baseline from exploration launches (biased upward: a progress hint,
	// never the reported gain).
	Best        *Trial
	BestSpeedup float64
	Baseline    *Trial
	// Candidate is the config the study would confirm if it stopped now.
	Candidate *Trial
	// Trials counts the study's trials so far.
	Trials  int
	Elapsed time.Duration
}

// Result is how a study ended.
type Result struct {
	Trials   []*Trial
	Baseline *Trial
	// Winner is the candidate taken to confirmation (nil if none was).
	Winner *Trial
	// Decision compares the confirmation launches over the band; nil when
	// no candidate reached confirmation.
	Decision *model.Comparison
	Guards   []GuardCheck
	// Recommend is true when Winner's config is the recommendation.
	Recommend bool
	// Reason says in one sentence why the study recommends what it does.
	Reason   string
	Launches int
	// Stopped says why exploration ended: "budget", "time", "space",
	// "interrupted".
	Stopped string
	// Ending says why the study ended as it did, one of the Ending*
	// constants: the rule that decided, never a guess.
	Ending string
	// Design is the confirmation's group-sequential plan (nil when no
	// candidate reached confirmation); Looks counts the looks taken.
	Design *model.ConfirmDesign
	Looks  int
	// Plan is what the study did with NCCL's own plan.
	Plan *PlanSummary
	// Dropped are the candidate's knobs left out of the recommendation
	// because NCCL runs the same without them, each with its reason.
	Dropped []nccl.Drop
}

// Endings of a study. A confirmation that keeps the defaults ends with the
// verdict of model.Compare that decided (model.Verdict*: "not-significant",
// "below-min-effect", "slower", "futile", …).
const (
	EndingRecommended = "recommended"
	// EndingGuard: faster in the band, significantly slower at a guard size.
	EndingGuard = "guard-regression"
	// EndingCandidateFailed: the candidate failed during confirmation.
	EndingCandidateFailed = "candidate-failed"
	// EndingNoCandidate: no config other than the defaults ran successfully.
	EndingNoCandidate = "no-candidate"
	// EndingInterrupted: cancelled before a decision.
	EndingInterrupted = "interrupted"
	// EndingSwitchesOnDisabled: the candidate switches on a protocol or
	// algorithm NCCL's defaults disabled and the user did not allow it.
	EndingSwitchesOnDisabled = "switches-on-disabled"
	// EndingSameAsBaseline: the best candidate, its no-op knobs dropped,
	// is the baseline itself (a --baseline-env study whose baseline NCCL
	// already runs like the best config found): nothing to confirm.
	EndingSameAsBaseline = "same-as-baseline"
)

// GuardCheck is the winner against the baseline at one guard size.
type GuardCheck struct {
	Bytes      int64
	Comparison model.Comparison
}

// Env is the recommended config, empty when the answer is NCCL's defaults.
func (r *Result) Env() nccl.Config {
	if r.Recommend && r.Winner != nil {
		return r.Winner.Config.Clone()
	}
	return nccl.Config{}
}

// ErrBaselineFailed means the defaults themselves do not run: the fabric
// or the benchmark is broken, and no search can help: a fabric failure
// (vocab.ErrFabric, exit code 3).
var ErrBaselineFailed = vocab.Mark(vocab.ErrFabric, errors.New("the baseline (NCCL defaults) failed"))

// guardPenaltyWeight scales a guard regression into the sampler's objective.
const guardPenaltyWeight = 10

var errSpaceExhausted = errors.New("every config of the space has been tried")

// study is the state of one run of the loop.
type loop struct {
	opts     Options
	sizes    []int64
	launcher Launcher
	rec      Recorder
	onEvent  func(Event)
	prop     proposer
	rng      *rand.Rand

	trials          []*Trial
	byKey           map[string]*Trial
	rejected        []nccl.Config
	seq             int // launches so far, prior ones included
	start           time.Time
	launchDurations []time.Duration
	// localRun counts local steps since the sampler's last proposal.
	localRun int
	// localDim is the knob the next local step starts from.
	localDim int
	// cache holds what the decision rules compute over every trial
	// (spreads, the candidate), valid while cacheKey matches the study's
	// launches and trials: they are asked for many times per launch.
	cache    decisionCache
	cacheKey [2]int
	// plan is NCCL's own plan as far as the study has read it.
	plan planState
	// planRead is true once the defaults' plan launch was made;
	// candidateRead once the candidate's (or its twin's) debug launch was.
	planRead, candidateRead bool
	// resumed is true for a study continued from stored launches.
	resumed bool
}

// Run runs the study loop: a warm-up launch, then exploration (proposals
// and extra launches for the leaders), then confirmation of the leader
// against the baseline, interleaved, and the decision. prior holds the
// trials of an interrupted study being resumed, priorLaunches the number
// of launches it already made. onEvent, if not nil, sees every launch.
// When ctx is cancelled Run stops the running launch and returns what is
// known with Stopped "interrupted" and ctx's error.
func Run(ctx context.Context, opts Options, launcher Launcher, rec Recorder, prior []*Trial, priorLaunches int, onEvent func(Event)) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	prop, err := newProposer(opts.Sampler, opts.Space, opts.Seed, opts.Startup)
	if err != nil {
		return nil, err
	}
	s := &loop{
		opts: opts, sizes: opts.Band.Sizes(), launcher: launcher, rec: rec, onEvent: onEvent,
		prop: prop, rng: rand.New(rand.NewSource(opts.Seed ^ 0x5eed)),
		byKey: map[string]*Trial{}, seq: priorLaunches, start: time.Now(), resumed: priorLaunches > 0,
	}
	for _, t := range prior {
		s.trials = append(s.trials, t)
		if _, taken := s.byKey[s.keyOf(t.Config)]; !taken {
			s.byKey[s.keyOf(t.Config)] = t
		}
	}
	s.replayDebug()
	return s.run(ctx)
}

// replayDebug reads NCCL's plan back from a resumed study's stored debug
// launches, as the launches themselves did: the defaults' plan first (the
// other configs' plans are read against it), then the others in trial
// order. A completed plan launch of the defaults is not made again: that
// launch would count against the budget a second time.
func (s *loop) replayDebug() {
	isDefaults := func(t *Trial) bool { return len(t.Config.Canonical()) == 0 }
	replay := func(t *Trial) {
		for _, d := range t.Debug {
			l := d.Launch
			if l == nil {
				continue
			}
			if l.Reason == benchfmt.ReasonInterrupted {
				continue // stopped by the interruption: made again
			}
			s.learnPlan(t, d.Phase, l)
			switch {
			case d.Phase == vocab.PhasePlan && isDefaults(t):
				// Read, or failed for good: made once, like any launch.
				s.planRead = true
			case d.Phase == vocab.PhasePlan:
				s.plan.checks++
			}
			if l.Outcome != benchfmt.OK || l.Result == nil {
				continue
			}
			if l.Result.Facts != nil && len(l.Result.Facts.Choices) > 0 {
				if s.plan.logged == nil {
					s.plan.logged = map[*Trial]bool{}
				}
				s.plan.logged[t] = true
			}
		}
	}
	for _, t := range s.trials {
		if isDefaults(t) {
			replay(t)
		}
	}
	for _, t := range s.trials {
		if !isDefaults(t) {
			replay(t)
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
	defer func() { res.Plan = s.planSummary() }()

	// Warm-up: the first launch after a fabric starts can be ~30 % slow;
	// it is stored, never scored. A resumed study warms up again only when
	// a measured launch is still to come (the warm-up takes its place in
	// the budget); with only debug launches owed, it warms up for nothing.
	if !s.resumed || s.seq < s.opts.Budget-s.explainLeft() {
		if err := s.launch(ctx, base, vocab.PhaseWarmup, false); err != nil {
			return s.stop(res, err)
		}
		if !base.State.Usable() {
			return nil, fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason)
		}
	}
	// NCCL's own plan under its defaults, read from one debug launch before
	// exploring: configs that provably run the same plan are merged, and
	// configs that switch on what NCCL disabled are refused.
	planOf := base
	if len(s.opts.Baseline.Clone()) > 0 {
		// The plan is NCCL's under its defaults, not the user's baseline.
		var err error
		if planOf, err = s.defaultsTrial(); err != nil {
			return nil, err
		}
	}
	// A resumed study read it from its stored plan launch (replayDebug).
	if !s.planRead && s.seq < s.opts.Budget {
		if err := s.launch(ctx, planOf, vocab.PhasePlan, false); err != nil {
			return s.stop(res, err)
		}
	}
	s.planRead = true
	// Every later proposal is judged against the baseline's own launches.
	for len(base.Explore) < 1 && s.exploreLeft() > 0 {
		if err := s.launch(ctx, base, vocab.PhaseExplore, true); err != nil {
			return s.stop(res, err)
		}
		if !base.State.Usable() {
			return nil, fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason)
		}
	}

	// Against the user's own settings, NCCL's defaults are one more config
	// to measure early: they may be better still.
	if err := s.exploreDefaults(ctx); err != nil {
		return s.stop(res, err)
	}

	res.Stopped = "budget"
	for s.exploreLeft() > 0 || s.mustSettle() || s.mustFind() {
		if s.outOfTime() {
			res.Stopped = "time"
			break
		}
		t, phase, err := s.next()
		if errors.Is(err, errSpaceExhausted) {
			res.Stopped = "space"
			break
		}
		if err != nil {
			return nil, err
		}
		if err := s.launch(ctx, t, phase, true); err != nil {
			return s.stop(res, err)
		}
	}
	if err := s.confirm(ctx, res); err != nil {
		return s.stop(res, err)
	}
	if err := s.explain(ctx, res); err != nil {
		return s.stop(res, err)
	}
	return s.finish(res), nil
}

// stop ends the study early: on cancellation it returns what is known.
func (s *loop) stop(res *Result, err error) (*Result, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		res.Stopped, res.Ending = "interrupted", EndingInterrupted
		res.Reason = "interrupted before a decision; resume the study to continue"
		res.Trials, res.Launches = s.trials, s.seq
		return res, err
	}
	return nil, err
}

func (s *loop) finish(res *Result) *Result {
	res.Trials, res.Launches = s.trials, s.seq
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

// defaultsTrial is the trial of NCCL's defaults in a study against the
// user's baseline, added when the study has none yet.
func (s *loop) defaultsTrial() (*Trial, error) {
	for _, t := range s.trials {
		if len(t.Config.Canonical()) == 0 {
			return t, nil
		}
	}
	return s.addTrial(nccl.Config{}, vocab.RoleExplore)
}

// exploreDefaults launches NCCL's defaults once as an exploration trial
// when the baseline is the user's settings, so the study can say whether
// they would be better still.
func (s *loop) exploreDefaults(ctx context.Context) error {
	if len(s.opts.Baseline.Clone()) == 0 || s.exploreLeft() <= 0 {
		return nil
	}
	t, err := s.defaultsTrial()
	if err != nil || len(t.Explore) > 0 || !t.State.Usable() {
		return err
	}
	return s.launch(ctx, t, vocab.PhaseExplore, true)
}

func (s *loop) baseline() *Trial {
	for _, t := range s.trials {
		if t.Role == vocab.RoleBaseline {
			return t
		}
	}
	return nil
}

// exploreLeft is the number of launches exploration may still use, the
// confirmation's share held back.
func (s *loop) exploreLeft() int {
	return s.opts.Budget - 2*s.confirmMax() - s.explainLeft() - s.seq
}

// explainLeft is the number of debug launches still held back: the
// defaults' plan launch until it is made, and the candidate's (or its
// simpler twin's) until it is made.
func (s *loop) explainLeft() int {
	n := 0
	if !s.planRead {
		n++
	}
	if !s.candidateRead {
		n++
	}
	return n
}

// settleLaunches are exploration's last launches: they re-measure the
// leading configs instead of trying new ones, so that exploration does
// not end on a config measured once.
const settleLaunches = 1

// mustSettle reports a candidate measured only once while the budget can
// still give it a second launch and the smallest confirmation: it is
// re-measured before anything is decided, since a single launch may lead
// by luck.
func (s *loop) mustSettle() bool {
	c := s.candidate(s.baseline())
	return c != nil && len(c.Explore) < 2 &&
		s.opts.Budget-s.seq-2*s.opts.ConfirmLaunches-s.explainLeft() > 0
}

// mustFind reports that no config other than the defaults has run
// successfully yet while the budget still holds a launch beyond the
// smallest confirmation that could decide: exploration goes on into the
// confirmation's share rather than end with nothing to confirm.
func (s *loop) mustFind() bool {
	need := model.MinLaunchesForDecision(s.opts.Stats)
	return s.candidate(s.baseline()) == nil &&
		s.opts.Budget-s.seq-s.explainLeft()-2*need-1 > 0
}

// Confirmation sizing. The confirmation may use at least confirmShare of
// the budget, more when the launch spread and the candidate's estimated
// gain call for it (planned for confirmPower), but never so much that
// exploration gets less than half the budget.
const (
	confirmPower = 0.9
	// defaultSpread is the launch-to-launch spread (SD of log launch
	// scores) assumed until exploration has measured it.
	defaultSpread = 0.08
	// minSpreadDF is the degrees of freedom the pooled spread needs before
	// it replaces defaultSpread.
	minSpreadDF = 3
	// guardZ is how many standard errors a guard-size slowdown beyond the
	// minimum effect must exceed before exploration stops preferring the
	// config (see guardFails).
	guardZ = 1.0
)

// confirmMax is the most launches per arm the confirmation plans if it
// started now: what a fixed test would need for confirmPower at a
// cautious estimate of the candidate's gain (model.PlanBeta standard
// errors below the exploration estimate, which the winner's curse
// inflates) and the
// measured spread, at least ConfirmLaunches and at most the budget's
// confirmShare. A gain that is large and clear is confirmed with the
// fewest launches and leaves the rest to exploration; an unclear one gets
// what the budget allows.
func (s *loop) confirmMax() int {
	first := s.opts.ConfirmLaunches
	limit := max(first, int(math.Round(confirmShare*float64(s.opts.Budget)/2)))
	if limit == first {
		return first
	}
	base := s.baseline()
	c := s.candidate(base)
	if c == nil || base == nil {
		return limit
	}
	nb, _ := base.scoreStats(s.sizes)
	nc, _ := c.scoreStats(s.sizes)
	if nb == 0 || nc == 0 {
		return limit
	}
	sigma := s.spread()
	logGain := base.logScore(s.sizes) - c.logScore(s.sizes) - model.PlanBeta*sigma*math.Sqrt(1/float64(nb)+1/float64(nc))
	plan := model.PlanLaunches(sigma, math.Expm1(logGain), s.alpha(), confirmPower)
	return min(max(plan, first), limit)
}

// spread is the launch-to-launch standard deviation of log launch scores,
// pooled over every usable trial measured more than once (each about its
// own mean), or defaultSpread until that has minSpreadDF degrees of
// freedom.
func (s *loop) spread() float64 {
	c := s.cached()
	if c.spread == 0 {
		c.spread = s.computeSpread()
	}
	return c.spread
}

// decisionCache: see study.cache.
type decisionCache struct {
	spread     float64
	guardSD    map[int64]float64
	candidate  *Trial
	candidateN bool // candidate has been computed (it may be nil)
	candBase   *Trial
	guardFails map[*Trial]bool
}

// cached returns the cache, emptied first if a launch or a trial was
// added since it was filled. Trial states change only in launches.
func (s *loop) cached() *decisionCache {
	key := [2]int{s.seq, len(s.trials)}
	if key != s.cacheKey {
		s.cache, s.cacheKey = decisionCache{}, key
	}
	return &s.cache
}

func (s *loop) computeSpread() float64 {
	ss, df := 0.0, 0
	for _, t := range s.trials {
		if !t.State.Usable() {
			continue
		}
		n, tss := t.scoreStats(s.sizes)
		if n >= 2 {
			ss += tss
			df += n - 1
		}
	}
	if df < minSpreadDF {
		return defaultSpread
	}
	return max(math.Sqrt(ss/float64(df)), 0.005)
}

// rankKappa is how many standard errors of its mean log score a
// config's estimate is made pessimistic by when configs measured a
// different number of times are ranked (see candidate).
const rankKappa = 1.0

// confirmShare is the share of the budget the confirmation may grow to
// (both arms together): at the default budget of 60 that is the first
// look's 6 + 6; at 120, up to 12 + 12.
const confirmShare = 0.2

// rankScore is a trial's log score made pessimistic by rankKappa standard
// errors: a config measured once must beat one measured three times by
// more than luck before it ranks above it.
func (s *loop) rankScore(t *Trial, sigma float64) float64 {
	n, _ := t.scoreStats(s.sizes)
	if n == 0 {
		return math.Inf(1)
	}
	return t.logScore(s.sizes) + rankKappa*sigma/math.Sqrt(float64(n))
}

// outOfTime reports whether exploring once more would leave too little of
// --time for the confirmation stage.
func (s *loop) outOfTime() bool {
	if s.opts.Time <= 0 {
		return false
	}
	mean := s.meanLaunchDuration()
	need := time.Duration(2*s.opts.ConfirmLaunches+1) * mean
	return time.Since(s.start)+need > s.opts.Time
}

func (s *loop) meanLaunchDuration() time.Duration {
	if len(s.launchDurations) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range s.launchDurations {
		sum += d
	}
	return sum / time.Duration(len(s.launchDurations))
}

// next decides the next exploration launch. Launches go first where the
// model's planner says they settle which config leads (a config crowned by
// one lucky launch is measured again), as long as refinement has used no
// more launches than exploration; otherwise the sampler proposes a config.
// A proposal already measured becomes another launch of that trial; one
// measured enough is replaced by an untried neighbour.
func (s *loop) next() (*Trial, string, error) {
	base := s.baseline()
	// The config the study would confirm now is measured at least
	// MaxLaunchesPerTrial times: a config launched once that ranks first
	// even after its estimate is made pessimistic is promising, and one
	// more launch tells luck from a real gain before anything is decided.
	if c := s.candidate(base); c != nil && len(c.Explore) < min(3, s.opts.MaxLaunchesPerTrial) {
		return c, vocab.PhaseRefine, nil
	}
	if s.exploreLeft() <= settleLaunches {
		if r := s.runnerUp(base); r != nil {
			return r, vocab.PhaseRefine, nil
		}
	}
	// The planner settles the order of the current top configs only: ties
	// further down cost launches and change nothing.
	if s.refinements() < 2*s.explored() {
		top := s.leaders(s.opts.TopConfigs)
		arms := make([]model.Arm, len(top))
		for i, t := range top {
			arms[i] = model.Arm{Launches: t.Explore}
		}
		plan := model.PlanNext(arms, s.sizes, s.opts.Stats, s.opts.MaxLaunchesPerTrial)
		if !plan.Done && plan.Arm >= 0 {
			return top[plan.Arm], vocab.PhaseRefine, nil
		}
	}
	// Past the sampler's start-up, its proposals alternate with a local
	// step from the leader: a simplification (one of its knobs unset) if
	// one is untried, else a random untried neighbour (one knob changed).
	// TPE models each knob on its own; these steps test the leader's knobs
	// together, which is where NCCL's knobs interact (channels and CTAs,
	// protocol and channels).
	if s.localRun < s.opts.LocalSteps && s.explored() >= s.opts.Startup && s.opts.Sampler != "grid" && s.opts.Sampler != "random" {
		c := s.simplification()
		if c == nil {
			c = s.localStep()
		}
		if c != nil {
			s.localRun++
			t, err := s.addTrial(c, vocab.RoleExplore)
			return t, vocab.PhaseExplore, err
		}
	}
	s.localRun = 0
	for attempt := 0; attempt < 50; attempt++ {
		cfg, err := s.prop.propose(s.observations())
		if err != nil {
			return nil, "", err
		}
		if err := cfg.Validate(); err != nil {
			// Impossible combinations (MIN > MAX…) are never launched; the
			// sampler learns them as failures.
			s.rejected = append(s.rejected, cfg)
			continue
		}
		cfg = cfg.Canonical()
		if s.refuse(cfg) {
			// It switches on what NCCL's defaults disabled: never launched,
			// and the sampler learns it as a failure.
			s.rejected = append(s.rejected, cfg)
			continue
		}
		if t := s.checkTwin(cfg); t != nil {
			// Whether cfg runs like a config already tried depends on that
			// config's own plan: one debug launch of it tells.
			return t, vocab.PhasePlan, nil
		}
		if t, seen := s.byKey[s.keyOf(cfg)]; seen {
			s.noteMerge(cfg, t)
			if t.State.Usable() && len(t.Explore) < s.opts.MaxLaunchesPerTrial && s.refinements() < s.explored() {
				return t, vocab.PhaseRefine, nil
			}
			next := neighbour(s.opts.Space, cfg, s.tried, s.rng)
			if next == nil {
				// Every neighbour is measured: jump to an untried config.
				next = s.randomUntried()
			}
			if next == nil {
				continue
			}
			cfg = next
		}
		t, err := s.addTrial(cfg, vocab.RoleExplore)
		return t, vocab.PhaseExplore, err
	}
	return nil, "", errSpaceExhausted
}

// arms are the candidates the planner ranks: usable trials with a scored
// launch that do not fail the guard.
func (s *loop) arms() ([]model.Arm, []*Trial) {
	var arms []model.Arm
	var trials []*Trial
	for _, t := range s.trials {
		if t.State.Usable() && len(t.Explore) > 0 && !s.guardFails(t) {
			arms = append(arms, model.Arm{Launches: t.Explore})
			trials = append(trials, t)
		}
	}
	return arms, trials
}

// explored counts trials with a scored exploration launch; refinements the
// extra launches given to them.
func (s *loop) explored() int {
	n := 0
	for _, t := range s.trials {
		if len(t.Explore) > 0 {
			n++
		}
	}
	return n
}

func (s *loop) refinements() int {
	n := 0
	for _, t := range s.trials {
		n += max(0, len(t.Explore)-1)
	}
	return n
}

// guardFails reports a trial whose exploration launches are slower than
// the baseline's at a guard size by more than the minimum effect, and by
// more than guardZ standard errors of that difference (the guard sizes'
// own launch spread, pooled over the study): it would likely fail the
// guard check, so exploration prefers others. A config measured once or
// twice is not excluded on noise alone; the confirmation's guard check
// decides.
func (s *loop) guardFails(t *Trial) bool {
	c := s.cached()
	if f, ok := c.guardFails[t]; ok {
		return f
	}
	f := s.computeGuardFails(t)
	if c.guardFails == nil {
		c.guardFails = map[*Trial]bool{}
	}
	c.guardFails[t] = f
	return f
}

func (s *loop) computeGuardFails(t *Trial) bool {
	base := s.baseline()
	if t == base || base == nil {
		return false
	}
	p := s.guardPenalty(t, base)
	if p <= 0 {
		return false
	}
	for _, g := range s.opts.Guard {
		nt, nb := len(t.guardLog(g)), len(base.guardLog(g))
		if nt == 0 || nb == 0 {
			continue
		}
		se := s.guardSpread(g) * math.Sqrt(1/float64(nt)+1/float64(nb))
		tm, bm := t.guardMedian(g), base.guardMedian(g)
		if math.Log(tm/bm)-math.Log(1+s.opts.Stats.MinEffect) > guardZ*se {
			return true
		}
	}
	return false
}

// guardSpread is the pooled launch-to-launch standard deviation of the log
// launch medians at guard size g (defaultSpread until measured).
func (s *loop) guardSpread(g int64) float64 {
	c := s.cached()
	if sd, ok := c.guardSD[g]; ok {
		return sd
	}
	sd := s.computeGuardSpread(g)
	if c.guardSD == nil {
		c.guardSD = map[int64]float64{}
	}
	c.guardSD[g] = sd
	return sd
}

func (s *loop) computeGuardSpread(g int64) float64 {
	var groups [][]float64
	for _, t := range s.trials {
		if t.State.Usable() {
			groups = append(groups, t.guardLog(g))
		}
	}
	sd, df := model.PooledSD(groups)
	if df < minSpreadDF {
		return defaultSpread
	}
	return max(sd, 0.005)
}

// guardPenalty is how far (in log time) a trial is slower than the baseline
// at its worst guard size, beyond the minimum effect; 0 when it is not.
func (s *loop) guardPenalty(t, base *Trial) float64 {
	worst := 0.0
	for _, g := range s.opts.Guard {
		tm := t.guardMedian(g)
		bm := base.guardMedian(g)
		if tm <= 0 || bm <= 0 {
			continue
		}
		worst = math.Max(worst, math.Log(tm/bm)-math.Log(1+s.opts.Stats.MinEffect))
	}
	return worst
}

// tried reports whether a config NCCL would treat the same way (see
// nccl.Config.Canonical) already has a trial.
func (s *loop) tried(c nccl.Config) bool {
	if _, ok := s.byKey[s.keyOf(c)]; ok {
		return true
	}
	// A config that switches on what NCCL's defaults disabled is never
	// tried: treat it as done so no step proposes it.
	return !s.opts.AllowDisabled && len(s.resolve(c).Enables) > 0
}

// leaders returns up to n usable trials with the best score estimates.
func (s *loop) leaders(n int) []*Trial {
	_, ok := s.arms()
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].logScore(s.sizes) < ok[j].logScore(s.sizes) }) // cached
	if len(ok) > n {
		ok = ok[:n]
	}
	return ok
}

// observations are what the sampler learns from: every trial's log score,
// failures and rejected combinations at a penalty.
func (s *loop) observations() []observation {
	worst := math.Inf(-1)
	var obs []observation
	base := s.baseline()
	for _, t := range s.trials {
		if t.State.Usable() && len(t.Explore) > 0 {
			v := t.logScore(s.sizes)
			if base != nil && t != base {
				// Slower at a guard size: as bad as being that much slower
				// in the band, and then some, so TPE leaves the region.
				if p := s.guardPenalty(t, base); p > 0 {
					v += guardPenaltyWeight * p
				}
			}
			worst = math.Max(worst, v)
			obs = append(obs, observation{config: t.Config, value: v})
		}
	}
	penalty := failurePenalty(worst)
	for _, t := range s.trials {
		if !t.State.Usable() {
			obs = append(obs, observation{config: t.Config, value: penalty})
		}
	}
	for _, c := range s.rejected {
		obs = append(obs, observation{config: c, value: penalty})
	}
	return obs
}

func (s *loop) addTrial(cfg nccl.Config, role string) (*Trial, error) {
	t := &Trial{Number: len(s.trials), Config: cfg.Canonical(), Role: role, State: vocab.TrialRunning}
	if err := s.rec.SaveTrial(t); err != nil {
		return nil, err
	}
	s.trials = append(s.trials, t)
	if _, taken := s.byKey[s.keyOf(t.Config)]; !taken {
		s.byKey[s.keyOf(t.Config)] = t
	}
	return t, nil
}

// launch runs and records one launch of t. The error is non-nil only when
// the study cannot go on (cancelled, nothing launchable, store failure).
func (s *loop) launch(ctx context.Context, t *Trial, phase string, scored bool) error {
	// Every launch sweeps the band and the guard sizes: the band is scored,
	// the guard sizes keep exploration away from configs that would fail the
	// guard check at the end.
	debug := phase == vocab.PhaseExplain || phase == vocab.PhasePlan
	// A debug launch prints NCCL's log as it runs: its times are not
	// measurements of the config.
	scored = scored && !debug
	req := Request{Config: t.Config, Seq: s.seq, Phase: phase, Trial: t.Number, Debug: debug}
	req.MinBytes, req.MaxBytes = s.sweepRange()
	if debug {
		// NCCL's choices outside the band matter too: the tuner-plugin
		// export must say what NCCL does at every size.
		req.MinBytes, req.MaxBytes = min(req.MinBytes, explainMin), max(req.MaxBytes, explainMax)
	}
	l, err := s.launcher.Launch(ctx, req)
	if err != nil {
		if l != nil && ctx.Err() != nil {
			// Interrupted: keep the output for the record, but the launch
			// says nothing about the config.
			s.seq++
			t.Launches++
			_ = s.rec.SaveLaunch(t, req, l, false)
		}
		return err
	}
	s.seq++
	t.Launches++
	s.launchDurations = append(s.launchDurations, l.Duration)
	score := 0.0
	if l.Outcome == benchfmt.OK {
		ml := ModelLaunch(l.Result)
		if sc, err := model.LaunchScore(ml, s.sizes); err != nil {
			// The benchmark ran but skipped a band size: not a usable measurement.
			l.Outcome, l.Reason = benchfmt.Failed, "launch lacks band sizes: "+err.Error()
		} else {
			score = sc
			switch {
			case phase == vocab.PhaseConfirm:
				t.Confirm = append(t.Confirm, ml)
			case scored && !debug:
				t.Explore = append(t.Explore, ml)
			}
		}
	}
	if debug {
		s.learnPlan(t, phase, l)
		if l.Outcome == benchfmt.OK && l.Result != nil && l.Result.Facts != nil && len(l.Result.Facts.Choices) > 0 {
			if s.plan.logged == nil {
				s.plan.logged = map[*Trial]bool{}
			}
			s.plan.logged[t] = true
		}
	}
	if l.Outcome != benchfmt.OK && !debug {
		t.State, t.Reason = stateFor(l.Outcome), l.Reason
	}
	if err := s.rec.SaveLaunch(t, req, l, scored && l.Outcome == benchfmt.OK); err != nil {
		return err
	}
	if s.onEvent != nil {
		ev := Event{Seq: req.Seq, Budget: s.opts.Budget, Phase: phase, Trial: t, Launch: l, Elapsed: time.Since(s.start), Trials: len(s.trials)}
		if scored {
			ev.LaunchScore = score
		}
		ev.Baseline = s.baseline()
		if lead := s.leaders(1); len(lead) == 1 {
			ev.Best = lead[0]
			if base := s.baseline(); base != nil && len(base.Explore) > 0 {
				ev.BestSpeedup = base.Score(s.sizes) / lead[0].Score(s.sizes)
			}
		}
		ev.Candidate = s.candidate(s.baseline())
		s.onEvent(ev)
	}
	return nil
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

// candidate picks the config to confirm. Trials measured a different
// number of times are compared fairly: each is ranked by its mean log
// band score made pessimistic by rankKappa standard errors (σ/√n, σ the
// pooled launch-to-launch spread), so a config measured once wins only by
// more than one launch's luck, and one measured three times is not
// preferred merely for having more launches. Configs the guard filter
// expects to fail rank after the others but are never excluded: when
// every config other than the defaults looks slower at a guard size, the
// best of them is still confirmed, and the guard check on the
// confirmation launches decides. There is no preference for fewer knobs
// here: trading a measured gain for a shorter env on noisy estimates
// recommended the worse config (spark2: NCCL_PROTO=Simple, 9 % slower than
// the cap it dropped); knobs that change nothing are dropped by NCCL's
// plan instead (see simplest). nil only when no config other than the
// baseline has a usable scored launch.
func (s *loop) candidate(base *Trial) *Trial {
	c := s.cached()
	if !c.candidateN || c.candBase != base {
		c.candidate, c.candidateN, c.candBase = s.computeCandidate(base), true, base
	}
	return c.candidate
}

func (s *loop) computeCandidate(base *Trial) *Trial {
	sigma := s.spread()
	type ranked struct {
		t     *Trial
		score float64
		guard bool
	}
	var pool []ranked
	for _, t := range s.trials {
		if t == base || !t.State.Usable() || len(t.Explore) == 0 || s.runsDefaults(t) {
			// A config that provably runs NCCL's own plan is the defaults
			// under another name: nothing to confirm.
			continue
		}
		if base != nil && s.plan.native != nil && s.keyOf(t.Config) == s.keyOf(base.Config) {
			// Likewise a config proved to run the baseline's plan (learnt
			// after it became a trial of its own): the baseline again.
			continue
		}
		sc := s.rankScore(t, sigma)
		if math.IsInf(sc, 1) {
			continue
		}
		pool = append(pool, ranked{t, sc, s.guardFails(t)})
	}
	if len(pool) == 0 {
		return nil
	}
	sort.SliceStable(pool, func(i, j int) bool {
		if pool[i].guard != pool[j].guard {
			return !pool[i].guard
		}
		return pool[i].score < pool[j].score
	})
	return pool[0].t
}

// runnerUp is the config ranked second by candidate's rule, if it has
// fewer than MaxLaunchesPerTrial launches and could still overtake the
// candidate (its score made optimistic by PlanBeta standard errors is
// below the candidate's pessimistic one); nil otherwise.
func (s *loop) runnerUp(base *Trial) *Trial {
	c := s.candidate(base)
	if c == nil {
		return nil
	}
	sigma := s.spread()
	bar := s.rankScore(c, sigma)
	var best *Trial
	bestScore := math.Inf(1)
	for _, t := range s.trials {
		if t == base || t == c || !t.State.Usable() || len(t.Explore) == 0 || len(t.Explore) >= s.opts.MaxLaunchesPerTrial {
			continue
		}
		n, _ := t.scoreStats(s.sizes)
		if n == 0 {
			continue
		}
		opt := t.logScore(s.sizes) - model.PlanBeta*sigma/math.Sqrt(float64(n))
		if opt < bar && s.rankScore(t, sigma) < bestScore {
			best, bestScore = t, s.rankScore(t, sigma)
		}
	}
	return best
}

// randomUntried draws untried, valid configs from the space, nil if a
// thousand draws find none.
func (s *loop) randomUntried() nccl.Config {
	for i := 0; i < 1000; i++ {
		c := s.opts.Space.Random(s.rng).Canonical()
		if !s.tried(c) && c.Validate() == nil {
			return c
		}
	}
	return nil
}

// localLeader is the best config measured at least twice (or the best
// one, if none was): where local steps start.
func (s *loop) localLeader() *Trial {
	leaders := s.leaders(len(s.trials))
	for _, t := range leaders {
		if len(t.Explore) >= 2 {
			return t
		}
	}
	if len(leaders) > 0 {
		return leaders[0]
	}
	return nil
}

// localStep returns an untried config one step from the local leader: for
// a numeric knob (channels, CTAs, threads…) the next value up or down its
// list, for a named one (protocol, algorithm) any other value. Knobs take
// turns, so every knob of the leader gets its steps.
func (s *loop) localStep() nccl.Config {
	lead := s.localLeader()
	if lead == nil {
		return nil
	}
	idx, ok := s.opts.Space.Index(lead.Config)
	if !ok {
		return nil
	}
	obs := s.observations()
	n := len(s.opts.Space)
	for k := 0; k < n; k++ {
		d := (s.localDim + k) % n
		dim := s.opts.Space[d]
		var moves []int
		if numeric(dim.Choices) && idx[d] > 0 {
			for _, j := range []int{idx[d] - 1, idx[d] + 1} {
				if j >= 1 && j < len(dim.Choices) {
					moves = append(moves, j)
				}
			}
		} else {
			for j := range dim.Choices {
				if j != idx[d] {
					moves = append(moves, j)
				}
			}
		}
		// Most promising first: by the mean score of every trial measured
		// with that value, whatever its other knobs (values not yet seen
		// rank in the middle).
		marg := marginals(dim, obs)
		sort.SliceStable(moves, func(a, b int) bool { return marg[moves[a]] < marg[moves[b]] })
		for _, j := range moves {
			next := append([]int(nil), idx...)
			next[d] = j
			c := s.opts.Space.Config(next)
			if !s.tried(c) && c.Validate() == nil {
				s.localDim = d + 1
				return c
			}
		}
	}
	return neighbour(s.opts.Space, lead.Config, s.tried, s.rng)
}

// marginals is, for each choice of dim, the mean log score of the
// observations made with it (failed ones at the sampler's penalty); choices
// not yet measured get the mean over all choices.
func marginals(dim Dimension, obs []observation) []float64 {
	sum := make([]float64, len(dim.Choices))
	n := make([]int, len(dim.Choices))
	for _, o := range obs {
		v := o.config[dim.Knob]
		for j, c := range dim.Choices {
			if c == v {
				sum[j] += o.value
				n[j]++
			}
		}
	}
	all, alln := 0.0, 0
	for j := range sum {
		all += sum[j]
		alln += n[j]
	}
	out := make([]float64, len(sum))
	for j := range sum {
		switch {
		case n[j] > 0:
			out[j] = sum[j] / float64(n[j])
		case alln > 0:
			out[j] = all / float64(alln)
		}
	}
	return out
}

// numeric reports whether every set choice is a number: such a knob is
// ordered, and its neighbours are the values beside it.
func numeric(choices []string) bool {
	for _, c := range choices {
		if c == "" {
			continue
		}
		if _, err := strconv.Atoi(c); err != nil {
			return false
		}
	}
	return true
}

// simplification returns an untried config that is the leader with one
// of its knobs unset, or nil. Trying these is a coordinate step towards
// the best config and towards the simplest one: a knob that TPE set in
// passing (NCCL_ALGO=Tree next to the channel cap that really mattered)
// gets a direct test.
func (s *loop) simplification() nccl.Config {
	lead := s.localLeader()
	if lead == nil {
		return nil
	}
	for _, k := range lead.Config.Names() {
		c := lead.Config.Clone()
		delete(c, k)
		if !s.tried(c) && c.Validate() == nil {
			if _, ok := s.opts.Space.Index(c); ok {
				return c
			}
		}
	}
	return nil
}

// explain runs one debug launch of the baseline and one of the candidate,
// so the store records what NCCL chose per size with each (for show,
// doctor and the tuner-plugin export). A failed explain launch is kept but
// changes nothing: the decision is already made.
func (s *loop) explain(ctx context.Context, res *Result) error {
	for _, t := range []*Trial{res.Baseline, res.Winner} {
		// The budget holds it back (explainLeft), a resumed study's too:
		// its warm-up is made only with room to spare and NCCL's plan is
		// read back from the store, so it is never spent before.
		if t == nil || s.seq >= s.opts.Budget || s.plan.logged[t] {
			// A plan launch of this trial already recorded what NCCL chose
			// with it (the tuner-plugin export reads it from the trial's own
			// launches).
			continue
		}
		if err := s.launch(ctx, t, vocab.PhaseExplain, false); err != nil {
			return err
		}
	}
	return nil
}

// sweepRange covers the band and the guard sizes.
func (s *loop) sweepRange() (int64, int64) {
	lo, hi := s.opts.Band.Min, s.opts.Band.Max
	for _, g := range s.opts.Guard {
		lo, hi = min(lo, g), max(hi, g)
	}
	return lo, hi
}

// confirm measures the candidate against the baseline, interleaved (B C B
// C …) so that drift hits both, and decides from those launches alone: the
// exploration numbers are biased by the winner's curse. It is a
// group-sequential test (model.ConfirmDesign): looks at
// ConfirmLaunches per arm and then up to the most the budget left and the
// measured spread call for (confirmMax); it stops at the first look that
// recommends, finds the candidate significantly slower, or finds the gain
// already excluded (futility), and otherwise goes on until the last look.
// The design's levels keep the false-recommendation rate at alpha however
// many looks are taken.
func (s *loop) confirm(ctx context.Context, res *Result) error {
	base := res.Baseline
	// The best candidate other than the defaults is always confirmed, even
	// when exploring says it is no better: only confirmation launches give
	// a number honest enough to report.
	w := s.candidate(base)
	if w == nil {
		res.Ending = EndingNoCandidate
		res.Reason = "no config other than NCCL's defaults ran successfully; keep NCCL's defaults"
		return nil
	}
	// The config confirmed is the simplest that NCCL provably runs like the
	// candidate: the env a user gets is exactly what was measured.
	var dropped []nccl.Drop
	for tries := 0; ; tries++ {
		first := w
		var err error
		if w, dropped, err = s.simplest(ctx, w); err != nil {
			return err
		}
		if w != base || tries == 2 {
			break
		}
		// The candidate proved to be the baseline under another name (its
		// plan was read just now): the next best config, if any, instead.
		next := s.candidate(base)
		if next == nil || next == first {
			break
		}
		w = next
	}
	res.Winner, res.Dropped = w, dropped
	if w == base {
		// Confirming the baseline against itself would compare one set of
		// launches with itself (speedup 1, p = 1) and read as a measurement.
		res.Ending = EndingSameAsBaseline
		res.Reason = "the best config found runs the same NCCL plan as the baseline once its no-op knobs are dropped; keep the baseline"
		return nil
	}
	// What the budget still allows, launches already made for the
	// confirmation (a resumed study) included.
	room := (s.opts.Budget - s.seq - s.explainLeft() + len(base.Confirm) + len(w.Confirm)) / 2
	maxN := max(min(s.confirmMax(), room), 1)
	if res.Stopped == "space" {
		// Every distinct config was explored: what exploration did not use
		// buys the confirmation power instead of going unspent.
		maxN = max(min(room, maxConfirmLaunches), 1)
	}
	d := model.PlanConfirm(min(s.opts.ConfirmLaunches, maxN), maxN, s.alpha())
	res.Design = &d
	var look model.Look
	for k, n := range d.Looks {
		final := false
		for len(base.Confirm) < n || len(w.Confirm) < n {
			if s.seq >= s.opts.Budget-s.explainLeft() || s.outOfConfirmTime() {
				final = true
				break
			}
			if len(base.Confirm) <= len(w.Confirm) {
				if err := s.launch(ctx, base, vocab.PhaseConfirm, true); err != nil {
					return err
				}
				if !base.State.Usable() {
					return fmt.Errorf("%w during confirmation: %s", ErrBaselineFailed, base.Reason)
				}
			} else {
				if err := s.launch(ctx, w, vocab.PhaseConfirm, true); err != nil {
					return err
				}
				if !w.State.Usable() {
					res.Ending = EndingCandidateFailed
					res.Reason = fmt.Sprintf("the candidate %s failed during confirmation (%s); keep NCCL's defaults", w.Config, w.Reason)
					return nil
				}
			}
		}
		look = d.Decide(k, base.Confirm, w.Confirm, s.sizes, s.opts.Stats, final)
		res.Looks = k + 1
		if look.Stop {
			break
		}
	}
	cmp := look.Comparison
	res.Decision = &cmp
	res.Recommend = cmp.Recommend
	res.Reason = cmp.Reason
	res.Ending = cmp.Verdict
	if cmp.Recommend {
		res.Ending = EndingRecommended
	}
	if res.Looks > 1 || len(d.Looks) > 1 {
		res.Reason += fmt.Sprintf(" [sequential confirmation: look %d of %d, %s]", res.Looks, len(d.Looks), d)
	}
	if r := s.resolve(w.Config); res.Recommend && !s.opts.AllowDisabled && len(r.Enables) > 0 {
		res.Recommend, res.Ending = false, EndingSwitchesOnDisabled
		res.Reason = fmt.Sprintf("%s switches on what NCCL's defaults disabled (%s); keep NCCL's defaults, or allow it with --allow-disabled-protocols at the risk of wrong results",
			w.Config, strings.Join(r.Enables, "; "))
	}
	for _, g := range s.opts.Guard {
		gc := model.Compare(base.Confirm, w.Confirm, []int64{g}, s.opts.Stats)
		res.Guards = append(res.Guards, GuardCheck{Bytes: g, Comparison: gc})
		if res.Recommend && gc.Slower {
			res.Recommend = false
			res.Ending = EndingGuard
			// The change in time, signed as the size table prints it.
			res.Reason = fmt.Sprintf("%s is faster in the band but significantly slower at the guard size %s (%+.1f%% time); keep NCCL's defaults or narrow the guard",
				w.Config, nccl.FormatSize(g), 100*(1/gc.Speedup-1))
		}
	}
	return nil
}

// maxConfirmLaunches bounds a confirmation's launches per arm (the exact
// Mann-Whitney distribution is used up to 50 per arm).
const maxConfirmLaunches = 50

// alpha is the study's significance level, its default filled in.
func (s *loop) alpha() float64 {
	if s.opts.Stats.Alpha > 0 {
		return s.opts.Stats.Alpha
	}
	return model.DefaultAlpha
}

// outOfConfirmTime reports whether --time leaves too little for one more
// pair of confirmation launches.
func (s *loop) outOfConfirmTime() bool {
	if s.opts.Time <= 0 {
		return false
	}
	return time.Since(s.start)+2*s.meanLaunchDuration() > s.opts.Time
}
