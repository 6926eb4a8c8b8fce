package vocab

import (
	"errors"
	"fmt"
)

// The three reasons a command stops that the exit code tells apart (the
// contract in DESIGN.md: usage 2, fabric 3, interrupted 130; anything
// else is 1). Libraries return them, wrapped with fmt.Errorf("...: %w")
// or marked with Mark so the message stays the cause's own; the command
// maps them to exit codes in one place.
var (
	// ErrUsage marks an error in what the user typed or gave: a flag, a
	// file, a study name. Exit code 2.
	ErrUsage = errors.New("usage")

	// ErrFabric marks a failure of the benchmark or fabric: nccl-tests or
	// mpirun missing, a launch that failed, a baseline that never ran.
	// Exit code 3.
	ErrFabric = errors.New("the benchmark or fabric failed")

	// ErrInterrupted reports that the user stopped the command (Ctrl-C or
	// SIGTERM) and what was measured is saved. Exit code 130.
	ErrInterrupted = errors.New("interrupted")
)

// Mark returns an error that reads exactly as err and that errors.Is
// matches both to err's own chain and to kind (ErrUsage, ErrFabric,
// ErrInterrupted). Mark(kind, nil) is nil.
func Mark(kind, err error) error {
	if err == nil {
		return nil
	}
	return &markedError{kind: kind, err: err}
}

// UsageErrorf is an error in what the user gave, worded by format:
// ErrUsage marks it (exit code 2) and it reads as the words alone.
func UsageErrorf(format string, args ...any) error {
	return Mark(ErrUsage, fmt.Errorf(format, args...))
}

// UsageError marks err as an error in what the user gave (exit code 2),
// its words unchanged.
func UsageError(err error) error { return Mark(ErrUsage, err) }

type markedError struct{ kind, err error }

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() []error { return []error{e.err, e.kind} }

// Warning is a caveat of the statistics (model's) about a summary or
// comparison, carried as data so the caller decides how to show it, as
// the --json documents write it. Its codes are model's Warn* constants.
type Warning struct {
	// Code is a stable identifier, one of model's Warn* constants.
	Code string `json:"code"`
	// Message is one plain sentence for people.
	Message string `json:"message"`
	// Launches are the 0-based indices, in the slice the caller passed, of
	// the launches concerned (outliers, rejected launches), if any.
	Launches []int `json:"launches,omitempty"`
	// Bytes are the message sizes concerned, if any.
	Bytes []int64 `json:"bytes,omitempty"`
}

// ErrorJSON is the one shape of an error in every JSON document nccltune
// prints: the exit code it gives, the code's name (usage, failed, fabric,
// interrupted) and the message. The command fills it (it maps errors to
// exit codes); libraries only carry it.
type ErrorJSON struct {
	Code    int    `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
