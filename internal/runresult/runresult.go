// Package runresult holds the records a study's run hands to its printer
// (internal/ui): each command's result as plain data, the --json document
// most of them are (doctor's, gate's, verify's and compare's, sweep's rows,
// import's files). internal/studyrun builds them; ui prints them. They
// live apart from studyrun so that the printers depend on no statistics
// routine: runresult imports neither model, search nor studyrun
// (TestPrintersDependOnNoStatistics in internal/ui), and decides nothing.
package runresult

import (
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// DoctorReport is doctor's diagnosis (its JSON document): the fabric
// report and where it came from.
type DoctorReport struct {
	fabric.Report
	// Source is "launch" or "log".
	Source  string   `json:"source"`
	LogFile string   `json:"log_file,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	// Failed is true when the launch (or the run in the log) failed or hung.
	Failed bool `json:"failed"`
	// Compare is NCCL's choices per size with the defaults and with --env,
	// when --env was given.
	CompareEnv map[string]string    `json:"compare_env,omitempty"`
	Compare    []benchfmt.ChoiceRow `json:"compare,omitempty"`
	// CompareChoices are NCCL's choices with the defaults and with --env,
	// as logged, for the text's side by side table.
	CompareChoices [2][]benchfmt.Choice `json:"-"`

	// FailedBecause says why the launch or the saved run failed, "" when
	// it did not.
	FailedBecause string `json:"-"`
}

// Failure is the vocab.ErrFabric error of a launch or saved run that
// failed, to return once the diagnosis is shown; nil when none failed.
func (r *DoctorReport) Failure() error {
	if r.FailedBecause == "" {
		return nil
	}
	what := "the launch"
	if r.Source == "log" {
		what = "the run in " + r.LogFile
	}
	return vocab.Mark(vocab.ErrFabric, fmt.Errorf("%s failed (%s); the diagnosis above says what it saw", what, r.FailedBecause))
}

// GateReport is gate's JSON document.
type GateReport struct {
	fabric.Verdict
	Study      string            `json:"study"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Env        nccl.Config       `json:"env"`
	BaseEnv    map[string]string `json:"base_env,omitempty"`
	Launches   int               `json:"launches"`
	Notes      []vocab.Warning   `json:"notes,omitempty"`
	// TextNotes are the notes gate's text prints: every caveat but too
	// few launches for an interval, which its table says by the interval
	// it leaves out (--json keeps them all).
	TextNotes []string `json:"-"`
	// FabricFailed is set when a launch failed, hung or returned wrong
	// results; Failure says which and why, Error is that in the one error
	// shape (the command sets it: it knows the exit code), Warnings are
	// doctor's diagnosis.
	FabricFailed bool             `json:"fabric_failed"`
	Failure      string           `json:"-"`
	Error        *vocab.ErrorJSON `json:"error,omitempty"`
	Warnings     []fabric.Warning `json:"warnings,omitempty"`
}

// DeliveredSizes are the sizes of one op a delivered candidate is judged
// at (studyrun.AB.Delivered).
type DeliveredSizes struct {
	Op    nccl.Op `json:"op"`
	Sizes []int64 `json:"sizes"`
}

// Claim is a search's claimed speedup, which verify checks, and whether
// the search recommended the config (a fresh refusal by a part or a
// guarded op then fails verify).
type Claim struct {
	Speedup     float64    `json:"speedup"`
	SpeedupCI   [2]float64 `json:"speedup_ci"`
	Recommended bool       `json:"recommended"`
}

// VerifyResult is the verdict of a verify (or interleaved compare) run,
// its --json document.
type VerifyResult struct {
	Study    string `json:"study"`
	Verifies string `json:"verifies,omitempty"`
	// BaselineEnv is what the config was compared with ({} for NCCL's
	// defaults).
	BaselineEnv map[string]string `json:"baseline_env"`
	Simulated   bool              `json:"simulated"`
	Env         map[string]string `json:"env"`
	Launches    int               `json:"launches_per_arm"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	// CILevel is the confidence SpeedupCI was taken at (the stored
	// recommendation's).
	CILevel     store.CILevel `json:"ci_level,omitempty"`
	PValue      float64       `json:"p_value"`
	Significant bool          `json:"significant"`
	Reason      string        `json:"reason"`
	Claimed     *Claim        `json:"claimed"`
	Consistent  bool          `json:"consistent"`
	// TunerPlugin is what verify --tuner-plugin saw of the plugin.
	TunerPlugin *TunerVerify `json:"tuner_plugin,omitempty"`
	// Ending is the rule that decided (vocab.Ending*, or the comparison's
	// vocab.Verdict*); Verdict the conclusion in the words show and the
	// search use (stored.Conclusion).
	Ending  string `json:"ending"`
	Verdict string `json:"verdict"`
	// Parts are a workload's parts, compared one by one (none for one
	// part); Guards the guarded ops measured (none without guarded ops, or
	// when the comparison did not recommend the config). Each has its
	// verdict in stored.OpVerdicts' words.
	Parts  []VerifyPart  `json:"parts"`
	Guards []VerifyGuard `json:"guards"`
	// GuardOpsSkipped are the default guarded ops the comparison left
	// out, each with why, as the study stores them ([] when none).
	GuardOpsSkipped []string `json:"guard_ops_skipped"`
	// Refused names the part or guarded op that refused the config ("its
	// part alltoall 512K-8M", "broadcast at 1M"), "" when none did.
	Refused string `json:"refused"`
	// Failed: the fresh measurement contradicts the claim (Consistent is
	// false), or verify refused a config the study recommended (or one
	// named with --env): verify exits 1.
	Failed bool `json:"failed"`
}

// VerifyPart is one part of a workload as verify measured it.
type VerifyPart struct {
	store.PartComparison
	Verdict string `json:"verdict"`
}

// VerifyGuard is one guarded op as verify measured it.
type VerifyGuard struct {
	store.OpGuard
	Verdict string `json:"verdict"`
}

// TunerVerify is a tuner CSV measured through a plugin: the plugin, what
// its debug launch showed, the warnings, and whether the CSV reproduced
// the study's gain.
type TunerVerify struct {
	Plugin string `json:"plugin"`
	// Check is the plugin as the debug launch logged it (nil without
	// NCCL's lines).
	Check    *benchfmt.TunerPlugin `json:"check"`
	Warnings []fabric.Warning      `json:"warnings"`
	// Reproduces: the CSV's speedup agrees with the study's claim.
	Reproduces bool `json:"reproduces"`
	// PerOp are a workload's check launches, one per op (Check is the
	// first op's); nil for one op.
	PerOp []OpCheck `json:"per_op,omitempty"`
	// PluginAlone is the third arm's account (studyrun.AB.PluginAlone), nil
	// where it was not measured.
	PluginAlone *PluginAloneEffect `json:"plugin_alone,omitempty"`
	// EqualByRule are the sizes between an op's called ones where the CSV
	// keeps NCCL's own choice (studyrun.AB.EqualByRule), not judged.
	EqualByRule []DeliveredSizes `json:"equal_by_rule"`
	// AtOwnSize are the sizes the process calls off the powers of two
	// where the CSV was measured at the size itself (studyrun.AB.Calls),
	// judged with the delivered sizes.
	AtOwnSize []DeliveredSizes `json:"at_own_size"`
}

// PluginAloneEffect is what the plugin with an empty CSV showed
// (studyrun.AB.PluginAlone), at every size the CSV is judged at
// (studyrun.AB.Delivered).
type PluginAloneEffect struct {
	// Launches is the arm's measured launches of each op.
	Launches int               `json:"launches"`
	Sizes    []PluginAloneSize `json:"sizes"`
}

// PluginAloneSize is one (op, size): Plugin is the empty CSV against the
// baseline, what loading the plugin alone changes; Rows the CSV against
// the empty CSV, what its rows change beside it.
type PluginAloneSize struct {
	Op     nccl.Op `json:"op"`
	Bytes  int64   `json:"bytes"`
	Plugin Effect  `json:"plugin"`
	Rows   Effect  `json:"rows"`
}

// Effect is one arm against another at one size (launchstats.SizeComparisons), with
// its verdict in stored.ChangeWords.
type Effect struct {
	Speedup     float64 `json:"speedup"`
	PValue      float64 `json:"p_value"`
	Significant bool    `json:"significant"`
	Verdict     string  `json:"verdict"`
}

// OpCheck is the candidate's debug check launch of one op: what the
// tuner plugin did with its calls, and the warnings, each naming the op.
type OpCheck struct {
	Op nccl.Op `json:"op"`
	// Plugin is the plugin as the launch logged it (nil without NCCL's
	// lines).
	Plugin   *benchfmt.TunerPlugin `json:"check"`
	Warnings []fabric.Warning      `json:"warnings"`
}

// SweepRow is one size of a sweep's result.
type SweepRow struct {
	Bytes  int64   `json:"bytes"`
	TimeUS float64 `json:"time_us"`
	Lo     float64 `json:"time_lo_us"`
	Hi     float64 `json:"time_hi_us"`
	BusBW  float64 `json:"busbw"`
	AlgBW  float64 `json:"algbw"`
}

// ImportedFile is one file studyrun.Import stored, as one launch.
type ImportedFile struct {
	File       string `json:"file"`
	Launch     uint64 `json:"launch"`
	Seq        int    `json:"seq"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	Simulated  bool   `json:"simulated"`
	Collective string `json:"collective"`
	NRanks     int    `json:"nranks"`
	Rows       int    `json:"rows"`
}

// SkippedFile is a file studyrun.Import did not store, and why.
type SkippedFile struct {
	File  string `json:"file"`
	Error string `json:"error"`
}
