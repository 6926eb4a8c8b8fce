// Package vocab defines, once, the words a study is recorded in: the kinds
// of study, their statuses, the roles and states of its trials and the
// phases of its launches, and the sentinel errors that say why a study
// could not run. store writes these words into the database, search and
// the commands act on them, report reads them back. Every value is a
// string in users' databases, so a released value never changes.
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
	// RolePluginAlone is verify --tuner-plugin's tuner plugin with an
	// empty CSV, measured beside the candidate where the plugin retunes
	// NCCL at init.
	RolePluginAlone = "plugin-alone"
)

// TrialState says whether a trial's config can still be recommended.
type TrialState string

const (
	TrialRunning  TrialState = "running"  // measured, usable
	TrialComplete TrialState = "complete" // the study ended with it usable
	// TrialFailed, TrialTimedOut and TrialInvalid configs are never
	// recommended: one bad launch is enough (a config that corrupts data
	// once is not a winner).
	TrialFailed   TrialState = "failed"
	TrialTimedOut TrialState = "timeout"
	TrialInvalid  TrialState = "invalid"
	// TrialRejected configs broke a rule of NCCL (e.g. MIN > MAX) and were
	// never launched.
	TrialRejected TrialState = "rejected"
)

// Usable reports whether a trial in this state may still win.
func (s TrialState) Usable() bool { return s == TrialRunning || s == TrialComplete }

// Phases of launches in a study.
const (
	PhaseWarmup = "warmup"
	// PhasePlan launches are unscored debug launches that read NCCL's own
	// plan (algorithm, protocol and channels per size, what is enabled):
	// one of the defaults after the warm-up, before exploring, and one of a
	// config whose plan settles whether another config runs the same.
	PhasePlan    = "plan"
	PhaseExplore = "explore"
	PhaseRefine  = "refine"
	PhaseConfirm = "confirm"
	PhaseGuard   = "guard"
	PhaseSweep   = "sweep"
	PhaseImport  = "import"
	PhaseGate    = "gate"
	// PhaseExplain launches run with NCCL's debug log after the decision,
	// once for the baseline and once for the candidate, to record what NCCL
	// chose per size with each; they are not scored.
	PhaseExplain = "explain"
	// PhaseExact launches are unscored debug launches that read NCCL's
	// plan at the sizes a timed workload's process calls that are not the
	// powers of two its calls are measured at (nccl-tests -b X -e X), for
	// the baseline and the candidate, before the candidate is shipped
	// (search: the calls at their own sizes).
	PhaseExact = "exact"
)

// The statistics a study is judged at when it records none (alpha, the
// intervals' coverage, the smallest gain that counts: 0.03 = 3 %): what
// the record of a study that stored none of them means, so, like the
// words, never changed for a released study. model.DefaultOptions uses
// them.
const (
	DefaultAlpha      = 0.05
	DefaultConfidence = 0.95
	DefaultMinEffect  = 0.03
)

// Percent writes a confidence level (0.95, 0.9926) in percent to a
// hundredth, trailing zeros dropped: "95", "99.26", "97.5". The model's
// reasons and every printer's "99.26% CI" (store.CILevel.Label) say a
// level in these digits, so a reason and the line beside it agree.
func Percent(level float64) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(100*level, 'f', 2, 64), "0"), ".")
}

// Endings of a search study: why it ended as it did (the stored
// Recommendation.Ending). A confirmation that keeps the defaults ends with
// the verdict of the comparison that decided (Verdict*: "not-significant",
// "below-min-effect", "slower", "futile", …).
const (
	EndingRecommended = "recommended"
	// EndingGuard: faster in the band, significantly slower at a guard size.
	EndingGuard = "guard-regression"
	// EndingOpRegression: faster for the workload, but significantly
	// slower, by more than the minimum effect, for a guarded op or one of
	// the workload's parts (or it fails a guarded op).
	EndingOpRegression = "op-regression"
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
	// EndingCannotDecide: the budget left could not make the confirmation
	// recommend anything (too few launches per arm for the exact test to
	// reach its level), so none was made.
	EndingCannotDecide = "cannot-decide"
)

// Verdicts of a comparison (model.Compare): which condition of its rule
// decided.
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
	// VerdictFutile is set by a sequential confirmation's design: the
	// interval already excludes the minimum effect at an interim look.
	VerdictFutile = "futile"
)

// The mark of a study config written by `nccltune workload`: its first
// line is "generated-by: nccltune workload". Such a file is made from
// what a log says (communicator ids, file names), so it may only hold the
// workload (part); the config reader refuses every other key in it, and
// the launch flags come from the command line.
const (
	GeneratedKey      = "generated-by"
	GeneratedWorkload = "nccltune workload"
)
