// Package vocab defines, once, the words a study is recorded in: the kinds
// of study, their statuses, the roles and states of its trials and the
// phases of its launches, and the sentinel errors that say why a study
// could not run. store writes these words into the database, search and
// the commands act on them, report reads them back. Every value is a
// string in users' databases, so a released value never changes.
package vocab

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
