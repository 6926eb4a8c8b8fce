package benchfmt

import "time"

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
	// Simulated is true when the simulated fabric produced this launch.
	Simulated bool `json:"simulated"`
}

// ReasonInterrupted is the reason of a launch stopped by cancellation: it
// says nothing about its config (a resumed study makes it again).
const ReasonInterrupted = "interrupted before the launch finished"
