package search

// The study's API: Options, Launcher, Recorder, Event and Result.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/record"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// Launcher runs one launch of the benchmark.
type Launcher interface {
	Launch(ctx context.Context, req Request) (*benchfmt.Launch, error)
}

// Request is one launch the study wants.
type Request struct {
	// Op is the collective to launch; "" is the launcher's base spec's.
	Op     nccl.Op
	Config nccl.Config
	// MinBytes and MaxBytes are the sweep: the band, and the guard sizes.
	MinBytes, MaxBytes int64
	// Seq is the launch's index in the study, from 0 (the simulated fabric
	// seeds each launch from it).
	Seq   int
	Phase string
	Trial int
	// Debug asks for NCCL's debug log (NCCL_DEBUG=INFO with TUNING), which
	// records the algorithm, protocol and channels NCCL chose per size.
	Debug bool
}

// Recorder keeps what the study measures; search never touches storage.
type Recorder interface {
	// SaveTrial is called when a trial is created.
	SaveTrial(t *Trial) error
	// SaveTrials is called once when the study ends, with changed trials.
	SaveTrials(ts []*Trial) error
	// SaveLaunch is called once per launch; scoreUS is its band score as
	// measured (Measure), 0 when unscored: the recorder never scores again.
	SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool, scoreUS float64) error
	// SaveRefusal is called when a confirmation after a refusal begins: an
	// interrupted study resumes from there (Resume.Refused).
	SaveRefusal(r Refusal) error
	// SaveDesign is called when a confirmation's design is fixed, before its
	// first launch (Resume.Design).
	SaveDesign(p Planned) error
}

// Options configure a study.
type Options struct {
	// Band is the band of a one-part study, a workload's hull (Hull).
	Band nccl.Band
	// Op is the collective of a one-part study ("" is all-reduce).
	Op nccl.Op
	// Workload, when it has several parts, is what the study tunes for: one
	// measurement is one launch per op, scored together (roundScore).
	Workload nccl.Workload
	// GuardOps are the collectives outside the workload measured for the
	// candidate, GuardLaunches per arm each: one significantly slower refuses it.
	GuardOps      []nccl.Op
	GuardLaunches int
	// ScopeLists scopes a winning NCCL_ALGO/NCCL_PROTO to the workload's ops
	// (NCCL 2.24+), so other collectives keep NCCL's defaults.
	ScopeLists bool
	// Guard sizes: the winner may not be significantly slower there.
	Guard []int64
	Space Space
	// Budget is the total number of launches, warm-up and confirmation included.
	Budget int
	// Time bounds the study's wall time; 0 means no limit.
	Time time.Duration
	// clock is the study's wall clock, time.Now unless a test runs on the
	// simulated fabric's modelled time.
	clock func() time.Time
	Seed  int64
	// Sampler is "tpe" (default), "random" or "grid".
	Sampler string
	// Startup is the number of random configs before TPE takes over.
	Startup int
	// ConfirmLaunches is the launches per arm at the confirmation's first look.
	ConfirmLaunches int
	// MaxLaunchesPerTrial caps the exploration launches of one config.
	MaxLaunchesPerTrial int
	// LocalSteps is how many local steps follow each proposal.
	LocalSteps int
	// TopConfigs is how many of the best configs the planner keeps measuring.
	TopConfigs int
	Stats      model.Options
	// AllowDisabled allows configs that switch on what NCCL's defaults
	// disabled, where it may give wrong results.
	AllowDisabled bool
	// BatchSize is how many configs one batch launch of exploration
	// measures (BatchLauncher); 0 or 1: every config on its own. A member
	// counts one launch against the budget.
	BatchSize int
	// Ranks is the launcher's -np, 0 when the launcher decides.
	Ranks int
	// Baseline is the user's current settings, empty for NCCL's defaults;
	// with one, NCCL's defaults are explored as one more config.
	Baseline nccl.Config
	// pastPlan: a resumed study past its plan phase owes no plan launch.
	pastPlan bool
}

// Resumed is o for a study resumed from prior, its stored trials.
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

// DefaultBudgetLaunches is --budget's default for a one-part study.
const DefaultBudgetLaunches = 60

// DefaultBudget is --budget's default for o: DefaultBudgetLaunches
// measurements plus what guards and a timed workload's calls reserve.
func (o Options) DefaultBudget() int {
	return DefaultBudgetLaunches*o.cost() + o.guardReserve() + len(o.guardPlanOps()) + o.callsReserve() + o.exactReserve()
}

// callsReserve is what a timed workload of several calls adds to the
// default budget: calls topped up to GuardLaunches and up to callLooks×
// that while undecided, plus a confirmation after a refusal: 4 ×
// GuardLaunches rounds.
func (o Options) callsReserve() int {
	if !o.Parts().ScoredByRounds() || !o.Parts().Timed() {
		return 0
	}
	return 4 * o.GuardLaunches * o.cost()
}

// callsLooks is the launches per arm that exploration leaves to a timed
// workload's calls. Holding back only the confirmation's share let
// exploration spend the reserve, and safe winners were refused "not shown
// safe" (TestUnseenFabrics); a --budget below the default keeps exploring
// as before.
func (o Options) callsLooks() int {
	if !o.Parts().ScoredByRounds() || !o.Parts().Timed() {
		return 0
	}
	room := o.Budget - (o.DefaultBudget() - o.callsReserve())
	return max(0, min(callLooks*o.GuardLaunches, room/(2*o.cost())))
}

// DefaultGuard is the size just above the band.
func DefaultGuard(b nccl.Band) []int64 {
	sizes := b.Sizes()
	if len(sizes) == 0 {
		return nil
	}
	return []int64{sizes[len(sizes)-1] * 2}
}

// DefaultGuardFor is --guard's default for a study of w: none for a timed
// workload, which never calls the size above its largest; else DefaultGuard.
func DefaultGuardFor(w nccl.Workload) []int64 {
	if w.Timed() {
		return nil
	}
	return DefaultGuard(Hull(w))
}

// explainMax is where the wide range of the explain launches ends.
const explainMax = 256 << 20

// explainRange is the wide range the debug launches of NCCL's defaults
// and of the baseline sweep for op, from the smallest size nccl-tests runs
// of op (issue 41).
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

// cost is the launches one measurement takes.
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
	// baseline from exploration launches (biased upward: a hint).
	Best        *Trial
	BestSpeedup float64
	// BestGain bounds the leader's gain over the baseline; nil when it is
	// the baseline or too few launches give a range.
	BestGain *GainBounds
	Baseline *Trial
	// Candidate is the config the study would confirm if it stopped now.
	Candidate *Trial
	// Trials counts the study's trials so far.
	Trials  int
	Elapsed time.Duration
}

// GainBounds bound a speedup over the baseline.
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
	// Decision compares the confirmation launches; nil when no candidate
	// reached confirmation.
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
	// Ending is the rule that decided, one of the vocab.Ending* constants.
	Ending string
	// Design is the confirmation's group-sequential plan; Looks counts the
	// looks taken.
	Design *model.ConfirmDesign
	Looks  int
	// Plan is what the study did with NCCL's own plan.
	Plan *PlanSummary
	// Dropped are the candidate's knobs left out of the recommendation.
	Dropped []nccl.Drop
	// Parts are the confirmation's comparison part by part (nil for one).
	Parts []PartResult
	// OpGuards are the guarded ops measured for a recommended candidate.
	OpGuards []OpGuard
	// Scoped are the knobs the recommendation writes in per-function form.
	Scoped []string
	// ScopedFrom is the trial whose lists Scoped rewrote (nil when none).
	ScopedFrom *Trial
	// Unspent is the launches of the budget the study did not make.
	Unspent int
	// UnspentForGuards is the part of Unspent held back for the guarded
	// ops, which the confirmation could not use.
	UnspentForGuards int
	// Settled, when not "", says why more launches could not have changed
	// the answer.
	Settled string
	// Refused are the candidates confirmed and refused before the last
	// confirmation (Winner, Ending, Reason are the last one's), in order.
	Refused []Refusal
}

// Refusal is one candidate the study confirmed and refused, and why.
type Refusal struct {
	Trial *Trial
	// Ending is why (a vocab.Ending* constant), Reason its sentence.
	Ending, Reason string
	// Decision is its confirmation's comparison (nil when it failed before
	// a look).
	Decision *model.Comparison
	// ScopedFrom is the trial whose lists the refused candidate's rewrote.
	ScopedFrom *Trial
	// Restart is where the study stood as the next confirmation began.
	Restart *Restart
	// SlowerAt are the (op, size) sites where it was refused.
	SlowerAt []Site
}

// Site is one op at one size (record.Site).
type Site = record.Site

// Restart is what a confirmation after a refusal starts from.
type Restart struct {
	// Seq is the launch the confirmation began at: the baseline's
	// confirmation launches before it belong to earlier confirmations.
	Seq int
	// Next is the refused list's per-function form to confirm next; nil
	// for the ranking's candidate.
	Next nccl.Config
	// Stopped is why exploration ended (Result.Stopped).
	Stopped string
	// ExactDone: a candidate's calls were shown safe at their own sizes.
	ExactDone bool
}

// Resume is what an interrupted study made, for RunResume to go on from.
type Resume struct {
	Trials   []*Trial
	Launches int
	Refused  []Refusal
	// Design is the design of the confirmation under way; nil when none.
	Design *Planned
}

// Planned is a confirmation's design as fixed when it began: the
// candidate's config, the launch it began at, and the launches per arm at
// its first and last look (model.PlanConfirm).
type Planned struct {
	Candidate   nccl.Config
	Seq         int
	First, Last int
}

// GuardCheck is the winner against the baseline at one guard size.
type GuardCheck struct {
	// Op is the guard size's op, "" in a one-part study.
	Op         nccl.Op
	Bytes      int64
	Comparison model.Comparison
}

// ErrBaselineFailed means the defaults themselves do not run: the fabric
// or the benchmark is broken (vocab.ErrFabric, exit code 3).
var ErrBaselineFailed = vocab.Mark(vocab.ErrFabric, errors.New("the baseline (NCCL defaults) failed"))
