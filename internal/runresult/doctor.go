package runresult

import (
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/vocab"
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
