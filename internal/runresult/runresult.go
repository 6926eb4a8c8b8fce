// Package runresult holds the records a study's run hands to its printer
// (internal/ui), most of them --json documents. internal/studyrun builds
// them; they live apart from it so that the printers depend on no
// statistics routine (TestPrintersDependOnNoStatistics in internal/ui).
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
	Source  string   `json:"source"` // "launch" or "log"
	LogFile string   `json:"log_file,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	// Failed: the launch (or the run in the log) failed or hung.
	Failed bool `json:"failed"`
	// Compare is NCCL's choices per size with the defaults and with --env;
	// CompareChoices the same as logged, for the text's table.
	CompareEnv     map[string]string    `json:"compare_env,omitempty"`
	Compare        []benchfmt.ChoiceRow `json:"compare,omitempty"`
	CompareChoices [2][]benchfmt.Choice `json:"-"`
	FailedBecause  string               `json:"-"` // "" when nothing failed
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
	// TextNotes are the notes gate's text prints: not too few launches for
	// an interval, which its table shows by leaving the interval out.
	TextNotes []string `json:"-"`
	// FabricFailed: a launch failed; Failure says which and why, Error is
	// that in the one error shape (set by the command), Warnings are
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
// it recommended the config.
type Claim struct {
	Speedup     float64    `json:"speedup"`
	SpeedupCI   [2]float64 `json:"speedup_ci"`
	Recommended bool       `json:"recommended"`
}

// VerifyResult is the verdict of a verify (or interleaved compare) run,
// its --json document.
type VerifyResult struct {
	Study       string            `json:"study"`
	Verifies    string            `json:"verifies,omitempty"`
	BaselineEnv map[string]string `json:"baseline_env"` // {} for NCCL's defaults
	Simulated   bool              `json:"simulated"`
	Env         map[string]string `json:"env"`
	Launches    int               `json:"launches_per_arm"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	CILevel     store.CILevel     `json:"ci_level,omitempty"` // the stored recommendation's
	PValue      float64           `json:"p_value"`
	Significant bool              `json:"significant"`
	Reason      string            `json:"reason"`
	Claimed     *Claim            `json:"claimed"`
	Consistent  bool              `json:"consistent"`
	TunerPlugin *TunerVerify      `json:"tuner_plugin,omitempty"`
	// Ending is the rule that decided; Verdict the conclusion in
	// stored.Conclusion's words.
	Ending  string `json:"ending"`
	Verdict string `json:"verdict"`
	// Parts and Guards are a workload's parts and the guarded ops
	// measured, each with its verdict in stored.OpVerdicts' words.
	Parts           []VerifyPart  `json:"parts"`
	Guards          []VerifyGuard `json:"guards"`
	GuardOpsSkipped []string      `json:"guard_ops_skipped"` // [] when none
	// Refused names the part or guarded op that refused the config, ""
	// when none did.
	Refused string `json:"refused"`
	// Failed: the fresh measurement contradicts the claim, or verify
	// refused a config the study recommended (or --env's): exit 1.
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
	// Check is the plugin as the (first op's) debug launch logged it; nil
	// without NCCL's lines.
	Check      *benchfmt.TunerPlugin `json:"check"`
	Warnings   []fabric.Warning      `json:"warnings"`
	Reproduces bool                  `json:"reproduces"`       // the CSV's speedup agrees with the claim
	PerOp      []OpCheck             `json:"per_op,omitempty"` // nil for one op
	// PluginAlone (nil where not measured), EqualByRule (not judged) and
	// AtOwnSize (judged with the delivered sizes) are studyrun.AB's
	// PluginAlone's effect, EqualByRule and Calls' sizes.
	PluginAlone *PluginAloneEffect `json:"plugin_alone,omitempty"`
	EqualByRule []DeliveredSizes   `json:"equal_by_rule"`
	AtOwnSize   []DeliveredSizes   `json:"at_own_size"`
}

// PluginAloneEffect is what the plugin with an empty CSV showed at every
// size the CSV is judged at.
type PluginAloneEffect struct {
	Launches int               `json:"launches"` // the arm's, of each op
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

// Effect is one arm against another at one size, with its verdict in
// stored.ChangeWords.
type Effect struct {
	Speedup     float64 `json:"speedup"`
	PValue      float64 `json:"p_value"`
	Significant bool    `json:"significant"`
	Verdict     string  `json:"verdict"`
}

// OpCheck is the candidate's debug check launch of one op: what the
// tuner plugin did with its calls, and the warnings, each naming the op.
type OpCheck struct {
	Op       nccl.Op               `json:"op"`
	Plugin   *benchfmt.TunerPlugin `json:"check"` // nil without NCCL's lines
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
