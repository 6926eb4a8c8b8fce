package benchfmt

import (
	"cmp"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Outcome classifies how a launch ended.
type Outcome string

const (
	// OK: the benchmark exited 0 and printed a complete, correct table.
	OK Outcome = "ok"
	// Failed: non-zero exit, missing or unparsable output, an NCCL error.
	Failed Outcome = "failed"
	// TimedOut: the per-launch timeout fired; the process group was killed.
	TimedOut Outcome = "timeout"
	// Invalid: the table printed, but with #wrong > 0 or out-of-bounds values.
	Invalid Outcome = "invalid"
)

// Launch is the record of one launch: what ran, what it printed, how it ended.
type Launch struct {
	// Op is the collective launched; "" in records from before ops were
	// recorded, which were all all-reduce (Op.OrAllReduce()).
	Op nccl.Op `json:"op,omitempty"`
	// Argv is the exact command run; Env the variables nccltune added.
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// Start and Duration are wall-clock.
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	ExitCode int           `json:"exit_code"`
	Outcome  Outcome       `json:"outcome"`
	// Reason says why a launch is not OK, naming the cause.
	Reason string `json:"reason,omitempty"`
	// Stdout and Stderr are kept whole; JSON the -J file's bytes, if any.
	Stdout []byte `json:"-"`
	Stderr []byte `json:"-"`
	JSON   []byte `json:"-"`
	// Result is the parsed output (nil if nothing parsable was printed).
	Result *Result `json:"result,omitempty"`
	// BatchOutput is a batch launch's parsed output, nil for a launch of
	// one config; each config's share is stored as a launch marked by Batch.
	BatchOutput *Batch `json:"batch_output,omitempty"`
	Simulated   bool   `json:"simulated"`
	// Batch is set when the launch is one config's (and op's) share of a
	// batch launch.
	Batch *BatchMember `json:"batch,omitempty"`
	// Modelled is a simulated launch's modelled wall time (the simulated
	// fabric's cost model); 0 for a real launch, whose Duration is measured.
	Modelled time.Duration `json:"modelled,omitempty"`
}

// Cost is the wall time a study weighs the launch by: a simulated launch's
// modelled time where the simulated fabric gave one (so the decision is the
// same for a seed however fast the simulator ran), else Duration.
func (l *Launch) Cost() time.Duration {
	switch {
	case !l.Simulated:
	case l.Batch != nil && l.Batch.Modelled > 0:
		return l.Batch.Modelled
	case l.Batch == nil && l.Modelled > 0:
		return l.Modelled
	}
	return l.Duration
}

// BatchMember says which batch launch measured a launch record: several
// configs in one process, each on its own communicator, read against each
// other (the baseline always among them).
type BatchMember struct {
	// Seq numbers the study's batches from 0.
	Seq int `json:"seq"`
	// Position is the config's place in the batch's creation order,
	// Configs how many the batch measured.
	Position int `json:"position"`
	Configs  int `json:"configs"`
	// Modelled is this record's share of a simulated batch's modelled wall
	// time; 0 for a real batch.
	Modelled time.Duration `json:"modelled,omitempty"`
}

// ReasonInterrupted is the reason of a launch stopped by cancellation: it
// says nothing about its config (a resumed study makes it again).
const ReasonInterrupted = "interrupted before the launch finished"

// ParseLaunch reads what a launch printed: the JSON output (-J) when there
// is one, as it carries every iteration's time, and the text otherwise;
// facts, failures and the simulated label always come from the text.
func ParseLaunch(l *Launch) (*Result, error) {
	text := append(append([]byte{}, l.Stdout...), l.Stderr...)
	textRes, textErr := Parse(text)
	if len(l.JSON) > 0 {
		if jr, err := ParseJSON(l.JSON); err == nil && len(jr.Rows) > 0 {
			if textRes != nil {
				jr.Facts = textRes.Facts
				jr.Errors = append(jr.Errors, textRes.Errors...)
				jr.Simulated = jr.Simulated || textRes.Simulated
				jr.SimProfile = cmp.Or(jr.SimProfile, textRes.SimProfile)
			}
			return jr, nil
		}
	}
	return textRes, textErr
}
