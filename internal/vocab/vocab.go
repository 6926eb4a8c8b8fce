// Package vocab defines, once, the words a study is recorded in and the
// sentinel errors. Every value is a string in users' databases, so a
// released value never changes.
package vocab

import (
	"strconv"
	"strings"
)

// Kinds of study: what a study set out to do.
const (
	KindSearch  = "search"  // the study loop: explore, confirm, recommend
	KindSweep   = "sweep"   // one config's whole curve
	KindImport  = "import"  // saved nccl-tests outputs brought in by `nccltune import`
	KindGate    = "gate"    // the fabric gate: one config against thresholds
	KindVerify  = "verify"  // a recommendation re-measured against its baseline
	KindCompare = "compare" // two configs measured interleaved
)

// Statuses of a study.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Roles of trials in a study.
const (
	RoleBaseline  = "baseline"
	RoleExplore   = "explore"
	RoleConfirm   = "confirm"
	RoleSweep     = "sweep"
	RoleImport    = "import"
	RoleGate      = "gate"
	RoleCandidate = "candidate" // the config a verify or compare measures against the baseline
	// RolePluginAlone is verify --tuner-plugin's plugin with an empty CSV.
	RolePluginAlone = "plugin-alone"
)

// TrialState says whether a trial's config can still be recommended.
type TrialState string

const (
	TrialRunning  TrialState = "running"  // measured, usable
	TrialComplete TrialState = "complete" // the study ended with it usable
	// Failed, timed-out and invalid configs are never recommended: one
	// bad launch is enough.
	TrialFailed   TrialState = "failed"
	TrialTimedOut TrialState = "timeout"
	TrialInvalid  TrialState = "invalid"
	// TrialRejected configs broke a rule of NCCL and were never launched.
	TrialRejected TrialState = "rejected"
)

// Usable reports whether a trial in this state may still win.
func (s TrialState) Usable() bool { return s == TrialRunning || s == TrialComplete }

// Phases of launches in a study.
const (
	PhaseWarmup = "warmup"
	// PhasePlan launches are unscored debug launches that read NCCL's plan.
	PhasePlan    = "plan"
	PhaseExplore = "explore"
	PhaseRefine  = "refine"
	PhaseConfirm = "confirm"
	PhaseGuard   = "guard"
	PhaseSweep   = "sweep"
	PhaseImport  = "import"
	PhaseGate    = "gate"
	// PhaseExplain launches record NCCL's choices after the decision; unscored.
	PhaseExplain = "explain"
	// PhaseExact launches are unscored debug launches that read NCCL's
	// plan at called sizes off the powers of two.
	PhaseExact = "exact"
)

// The statistics a study that records none is judged at: like the words,
// never changed for a released study.
const (
	DefaultAlpha      = 0.05
	DefaultConfidence = 0.95
	DefaultMinEffect  = 0.03
)

// Percent writes a confidence level in percent to a hundredth, trailing
// zeros dropped: "95", "99.26", "97.5"; every printer says a level so.
func Percent(level float64) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(100*level, 'f', 2, 64), "0"), ".")
}

// Endings of a search study (Recommendation.Ending); one that keeps the
// defaults ends with the deciding comparison's Verdict*.
const (
	EndingRecommended = "recommended"
	// EndingGuard: faster in the band, significantly slower at a guard size.
	EndingGuard = "guard-regression"
	// EndingOpRegression: significantly slower for a guarded op or a part.
	EndingOpRegression = "op-regression"
	// EndingCandidateFailed: the candidate failed during confirmation.
	EndingCandidateFailed = "candidate-failed"
	// EndingNoCandidate: no config other than the defaults ran successfully.
	EndingNoCandidate = "no-candidate"
	// EndingInterrupted: cancelled before a decision.
	EndingInterrupted = "interrupted"
	// EndingSwitchesOnDisabled: it enables what NCCL's defaults disabled
	// and the user did not allow it.
	EndingSwitchesOnDisabled = "switches-on-disabled"
	// EndingSameAsBaseline: the best candidate, no-op knobs dropped, is
	// the baseline itself.
	EndingSameAsBaseline = "same-as-baseline"
	// EndingCannotDecide: the budget left could not reach a decision.
	EndingCannotDecide = "cannot-decide"
)

// Verdicts of a comparison (model.Compare): which condition decided.
const (
	VerdictRecommend      = "recommend"        // every condition holds
	VerdictNoData         = "no-data"          // an arm has no scored launch
	VerdictTooFew         = "too-few-launches" // the test cannot reach alpha with these counts
	VerdictNotSignificant = "not-significant"  // p ≥ alpha
	VerdictSlower         = "slower"           // significantly slower by at least the minimum effect
	VerdictSlightlySlower = "slightly-slower"  // significantly slower, within the minimum effect
	VerdictNoDirection    = "no-direction"     // significant without a direction (ties)
	VerdictNoInterval     = "no-interval"      // no interval of the confidence asked exists
	VerdictIntervalHasOne = "interval-has-one" // the interval still includes no change
	VerdictBelowMinEffect = "below-min-effect" // faster, but by less than the minimum effect
	// VerdictFutile: the interval excludes the minimum effect at a look.
	VerdictFutile = "futile"
)

// The mark of a study config written by `nccltune workload`: made from a
// log, it may hold only the workload (studyconfig refuses other keys).
const (
	GeneratedKey      = "generated-by"
	GeneratedWorkload = "nccltune workload"
)
