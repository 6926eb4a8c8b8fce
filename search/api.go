package search

// The study's API: what a caller gives (Options, a Launcher, a Recorder)
// and gets back (Event per launch, Result).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// Launcher runs one launch of the benchmark. The CLI's launcher calls
// runner.Run; tests and benchmarks evaluate the simulated fabric in process.
type Launcher interface {
	Launch(ctx context.Context, req Request) (*benchfmt.Launch, error)
}

// Request is one launch the study wants.
type Request struct {
	// Op is the collective to launch; "" is the study's own (the
	// launcher's base spec). A workload of several ops sets it per launch.
	Op     nccl.Op
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
	// the trial as the launch left it (state, reason, launches). scored
	// says the launch is one of the trial's measurements; scoreUS is its
	// band score as measured (Measure), 0 when it is not scored or lacks a
	// band size: the recorder stores it, it does not score again.
	SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool, scoreUS float64) error
	// SaveRefusal is called when a confirmation after a refusal begins,
	// with the refusal and where the study stood (Refusal.Restart): a
	// study interrupted after it resumes from there (Resume.Refused), not
	// from its first confirmation again.
	SaveRefusal(r Refusal) error
	// SaveDesign is called when a confirmation's design is fixed, before
	// its first launch: a study interrupted during it resumes with that
	// design (Resume.Design).
	SaveDesign(p Planned) error
}

// Options configure a study.
type Options struct {
	// Band is the band of a one-part study; a workload of several parts
	// sets Workload and Band to their hull (Hull).
	Band nccl.Band
	// Op is the collective of a one-part study ("" is all-reduce).
	Op nccl.Op
	// Workload, when it has several parts, is what the study tunes for:
	// its objective is the weighted geometric combination of the parts'
	// band scores, and one measurement of a config is one launch per op.
	// Empty or one part: the study of Band and Op.
	Workload nccl.Workload
	// GuardOps are the collectives outside the workload the confirmation
	// also measures for the candidate, interleaved with the baseline, at
	// the workload's sizes and the guard sizes, GuardLaunches launches per
	// arm each: a recommendation that makes one significantly slower by
	// more than the minimum effect is refused (vocab.EndingOpRegression).
	GuardOps      []nccl.Op
	GuardLaunches int
	// ScopeLists writes a winning NCCL_ALGO/NCCL_PROTO in NCCL's
	// per-function form for the workload's ops (NCCL 2.24+), so the other
	// collectives keep NCCL's defaults; the scoped config is what the
	// confirmation measures. Set for a study of collectives (--part,
	// --guard-ops); today's one-band study recommends the plain list.
	ScopeLists bool
	// Guard sizes: the winner may not be significantly slower there.
	Guard []int64
	Space Space
	// Budget is the total number of launches, warm-up and confirmation included.
	Budget int
	// Time bounds the study's wall time; 0 means no limit.
	Time time.Duration
	// clock is the study's wall clock, time.Now unless a test runs the
	// study on the simulated fabric's modelled time.
	clock func() time.Time
	Seed  int64
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
	// BatchSize is how many configs one batch launch of exploration
	// measures, the baseline included, when the launcher has the mode
	// (BatchLauncher); 0 or 1: every config on its own. A config that
	// sets a knob NCCL reads once per process is always launched on its
	// own. Each config's share of a batch counts one launch against the
	// budget, as a launch of its own does: a batch spends the budget as
	// separate launches would, in less time (one start-up, not one per
	// config).
	BatchSize int
	// Ranks is the number of ranks a launch runs on (the launcher's -np),
	// 0 when the launcher decides: the smallest size nccl-tests runs of an
	// op that splits its buffer grows with it (explainRange).
	Ranks int
	// Baseline is what the study compares with and starts from: the
	// user's current settings (--baseline-env), or empty for NCCL's
	// defaults. With a baseline, NCCL's defaults are explored as one more
	// config, so the study can say whether they would be better still.
	Baseline nccl.Config
	// pastPlan is set for a study resumed from launches past its plan
	// phase (Resumed): the guarded ops' plan launches it owed were made
	// then, or, stored by an nccltune from before them, never owed, so
	// neither the budget nor its minimum counts them (guardPlanOps).
	pastPlan bool
}

// Resumed is o for a study resumed from prior, its stored trials: one
// whose launches went past the plan phase owes no guarded op's plan
// launch (planGuardedOps runs before the first launch past it), and a
// study stored before those launches existed, at what was then the
// minimum budget, still resumes.
func (o Options) Resumed(prior []*Trial) Options {
	o.pastPlan = o.pastPlan || slices.ContainsFunc(prior, (*Trial).madePastPlan)
	return o
}

// DefaultOptions returns the options of `nccltune search` without flags.
func DefaultOptions() Options {
	return Options{
		Space:               DefaultSpace(),
		Budget:              DefaultBudgetLaunches,
		Seed:                1,
		Sampler:             "tpe",
		Startup:             8,
		ConfirmLaunches:     6,
		MaxLaunchesPerTrial: 3,
		GuardLaunches:       DefaultGuardLaunches,
		TopConfigs:          3,
		LocalSteps:          2,
		Stats:               model.DefaultOptions(),
	}
}

// DefaultBudgetLaunches is --budget's default for a one-part study
// without guarded ops.
const DefaultBudgetLaunches = 60

// DefaultBudget is --budget's default for o: DefaultBudgetLaunches
// measurements, each one launch per op of the workload, plus the guarded
// ops' reserve (2 × GuardLaunches per guarded op) and their plan launches
// (one per guarded op the tuner plans: guardPlanOps), so that a workload or
// a guarded study explores and confirms as a one-part study does; a timed
// workload adds its calls' reserve (callsReserve) and the debug launches
// that read NCCL's plan at the sizes it calls (exactReserve).
func (o Options) DefaultBudget() int {
	return DefaultBudgetLaunches*o.cost() + o.guardReserve() + len(o.guardPlanOps()) + o.callsReserve() + o.exactReserve()
}

// callsReserve is what a timed workload of several calls adds to the
// default budget: its calls are guarded from the confirmation's rounds,
// topped up to as many as a guarded op gets and up to 3 × that while one
// is not yet shown safe or slower (topUpCalls), and a refusal is
// followed by another confirmation (nextAfterRefusal): 4 × GuardLaunches
// rounds in all.
func (o Options) callsReserve() int {
	if !o.Parts().ScoredByRounds() || !o.Parts().Timed() {
		return 0
	}
	return 4 * o.GuardLaunches * o.cost()
}

// callsLooks is the launches per arm that exploration leaves to a timed
// workload's calls (exploreLeft): what the budget holds beyond the
// default budget of a study without calls (the calls' reserve,
// callsReserve, at the default), up to all of the calls' looks
// (topUpCalls: callLooks × GuardLaunches per arm, while a call is
// neither shown safe nor slower); 0 for a study without calls to judge,
// or a budget without that room. Holding back only the confirmation's
// share let exploration spend the reserve: on random fabrics
// (TestUnseenFabrics) safe winners of ×1.2 to ×5 were refused "not shown
// safe after 6 launches per arm", the budget gone before the calls' first
// look. A smaller --budget than the default keeps exploring as before:
// the reserve is the default budget's, not taken from a budget that has
// none.
func (o Options) callsLooks() int {
	if !o.Parts().ScoredByRounds() || !o.Parts().Timed() {
		return 0
	}
	room := o.Budget - (o.DefaultBudget() - o.callsReserve())
	return max(0, min(callLooks*o.GuardLaunches, room/(2*o.cost())))
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

// DefaultGuardFor is --guard's default for a study of w: none for a
// timed workload (calls, nccl.ParseCall), each of whose sizes is guarded
// at its own size and which never calls the size above its largest (a
// guard there refused a ×1.33 winner over a 1M the process never calls);
// DefaultGuard of the band for a --band or --part study.
func DefaultGuardFor(w nccl.Workload) []int64 {
	if w.Timed() {
		return nil
	}
	return DefaultGuard(Hull(w))
}

// explainMax is where the wide range of the explain launches ends at
// least (explainRange).
const explainMax = 256 << 20

// explainRange is the wide range the debug launches of NCCL's defaults
// and of the baseline sweep for op (debugsWide), whose choices the tuner
// CSV keeps wherever nothing was proven: from the smallest size
// nccl-tests runs of op on the study's ranks (nccl.Op.MinBytes), so that
// every size below a band gets the choice NCCL logged at its own power of
// two, not the one it made at the range's floor (from a floor of 32K, a
// band study's CSV gave 10 KB all-reduces NCCL's 32K choice, Ring/LL on 2
// channels where NCCL itself runs 1, and made them 1.6 times slower on
// the real 4-rank loopback: issue 41), to 256M. An op that splits its
// buffer on ranks the study does not know (Ranks 0) starts higher
// (nccl.Op.SmallestSafe).
func (o Options) explainRange(op nccl.Op) (lo, hi int64) {
	return op.OrAllReduce().SmallestSafe(o.Ranks), explainMax
}

// explainLaunches is the budget the study keeps for its explain launches.
const explainLaunches = 2

// MinBudget is the smallest budget a study can decide with.
func (o Options) MinBudget() int {
	k := o.cost()
	return 1 + (2*o.ConfirmLaunches+explainLaunches+4)*k + o.guardReserve() + len(o.guardPlanOps())
}

// cost is the launches one measurement takes: one per op of a workload of
// several parts.
func (o Options) cost() int {
	if !o.Parts().ScoredByRounds() {
		return 1
	}
	return len(o.Parts().Ops())
}

// Validate checks options before the first launch.
func (o Options) Validate() error {
	if err := o.Band.Validate(); err != nil {
		return err
	}
	if err := o.Parts().Validate(); err != nil {
		return err
	}
	for _, op := range o.GuardOps {
		if !op.Valid() {
			return fmt.Errorf("unknown guarded collective %q: use one of %s", op, strings.Join(nccl.OpNames(), ", "))
		}
		if len(o.Parts().Sizes(op)) > 0 {
			return fmt.Errorf("%s is a part of the workload: its parts are guarded already; leave it out of --guard-ops", op)
		}
	}
	if len(o.GuardOps) > 0 && o.GuardLaunches < 2 {
		return fmt.Errorf("%d launches per guarded op cannot measure a spread; use at least 2", o.GuardLaunches)
	}
	if o.ConfirmLaunches < model.MinLaunchesForDecision(o.Stats) {
		return fmt.Errorf("%d confirmation launches per arm cannot reach significance at alpha %g; use at least %d",
			o.ConfirmLaunches, o.Stats.Alpha, model.MinLaunchesForDecision(o.Stats))
	}
	if o.Budget < o.MinBudget() {
		if k, g := o.cost(), o.guardReserve()+len(o.guardPlanOps()); k > 1 || g > 0 {
			return fmt.Errorf("--budget %d is too small: this workload needs at least %d launches (1 warm-up; %d per measurement, one per op: %d confirmation, %d explain, %d to explore; %d for the guarded ops, their plan launches included)",
				o.Budget, o.MinBudget(), k, 2*o.ConfirmLaunches*k, explainLaunches*k, 4*k, g)
		}
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
	// BestGain bounds the leader's gain over the baseline from the same
	// exploration launches; nil when it is the baseline or too few
	// launches give even a range.
	BestGain *GainBounds
	Baseline *Trial
	// Candidate is the config the study would confirm if it stopped now.
	Candidate *Trial
	// Trials counts the study's trials so far.
	Trials  int
	Elapsed time.Duration
}

// GainBounds bound a speedup over the baseline: the comparison's interval
// (Interval) once both trials have launches enough for one, else the
// range of the leader's single launches against the baseline's score.
type GainBounds struct {
	Lo, Hi   float64
	Interval bool
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
	// Ending says why the study ended as it did, one of the vocab.Ending*
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
	// Parts are the confirmation's comparison part by part (a workload of
	// several parts; nil for one, whose Decision is the part's).
	Parts []PartResult
	// OpGuards are the guarded ops outside the workload, measured for a
	// recommended candidate (none when the confirmation kept the baseline).
	OpGuards []OpGuard
	// Scoped are the knobs the recommendation writes in NCCL's
	// per-function form for the workload's ops (NCCL 2.24+).
	Scoped []string
	// ScopedFrom is the trial whose lists Scoped rewrote: it runs the
	// workload's ops exactly as the recommendation does, so its debug log
	// records NCCL's choices for them (nil when nothing was scoped).
	ScopedFrom *Trial
	// Unspent is the launches of the budget the study did not make.
	Unspent int
	// UnspentForGuards is the part of Unspent held back for the guarded
	// ops, which are measured only beside a config the confirmation
	// recommends: while held, the confirmation could not use them.
	UnspentForGuards int
	// Settled, when not "", says why more launches could not have changed
	// the answer (every distinct plan explored and the confirmation
	// decided), with the launches left unspent; "" when the study spent
	// its budget or ended for another reason.
	Settled string
	// Refused are the candidates confirmed and refused before the last
	// confirmation (Winner, Ending, Reason are the last one's), in order:
	// a refusal narrows the search to the candidates it does not rule out
	// (refusable, nextAfterRefusal).
	Refused []Refusal
}

// Refusal is one candidate the study confirmed and refused, and why.
type Refusal struct {
	Trial *Trial
	// Ending is why (vocab.EndingGuard, vocab.EndingOpRegression,
	// vocab.EndingSwitchesOnDisabled, vocab.EndingCandidateFailed), Reason its sentence.
	Ending, Reason string
	// Decision is its confirmation's comparison with the baseline over
	// what the study scores (nil when it failed before a look).
	Decision *model.Comparison
	// ScopedFrom is the trial whose lists the refused candidate's rewrote
	// (Result.ScopedFrom), ruled out with it; nil when none was.
	ScopedFrom *Trial
	// Restart is where the study stood as the confirmation after this
	// refusal began (nextAfterRefusal); nil when none followed it.
	Restart *Restart
	// SlowerAt are the (op, size) sites where it was refused
	// (refusalSites): a candidate exploration measured slower there ranks
	// after the others, in a resumed study too, and one NCCL provably
	// runs otherwise at every one of them is not ruled out with it
	// (loop.ruledOut).
	SlowerAt []Site
}

// Site is one op at one size.
type Site struct {
	Op    nccl.Op
	Bytes int64
}

// Restart is what a confirmation after a refusal starts from, beyond the
// refusals so far: what a study resumed during it restores (Resume).
type Restart struct {
	// Seq is the launch the confirmation began at: the baseline's
	// confirmation launches before it belong to the confirmations that
	// ended (Trial.restartConfirm), not to this one.
	Seq int
	// Next is the refused list's per-function form, confirmed in place of
	// the ranking's candidate (perFunctionForm); nil for the ranking's.
	Next nccl.Config
	// Stopped is why exploration ended (Result.Stopped): exploration is
	// over once a confirmation began.
	Stopped string
	// ExactDone: a candidate's calls were shown to stand at their own
	// sizes before it (loop.exactDone), so their launches are no longer
	// held back (exactLeft).
	ExactDone bool
}

// Resume is what an interrupted study made before, for RunResume to go
// on from: its trials with their measurements as the study made them
// (Options.Regroup; the baseline's confirmation launches those of the
// confirmation under way, since the last Restart.Seq), the launches it
// made, and
// the refusals whose next confirmation began (Recorder.SaveRefusal), in
// order.
type Resume struct {
	Trials   []*Trial
	Launches int
	Refused  []Refusal
	// Design is the design of the confirmation under way when the study
	// was interrupted (Recorder.SaveDesign); nil when none was stored.
	Design *Planned
}

// Planned is a confirmation's design as fixed when it began: the config
// of the candidate it confirms (a candidate the confirmation launches
// first has no stored id or number yet), the launch it began at (the
// study's launches then), and the launches per arm at its first and
// last look, from which model.PlanConfirm plans the same looks and
// levels again.
type Planned struct {
	Candidate   nccl.Config
	Seq         int
	First, Last int
}

// GuardCheck is the winner against the baseline at one guard size.
type GuardCheck struct {
	// Op is the guard size's op in a workload of several parts, "" in a
	// one-part study (its one op).
	Op         nccl.Op
	Bytes      int64
	Comparison model.Comparison
}

// ErrBaselineFailed means the defaults themselves do not run: the fabric
// or the benchmark is broken, and no search can help: a fabric failure
// (vocab.ErrFabric, exit code 3).
var ErrBaselineFailed = vocab.Mark(vocab.ErrFabric, errors.New("the baseline (NCCL defaults) failed"))
