package vocab

import (
	"errors"
	"fmt"
)

// The reasons a command stops that the exit code tells apart (DESIGN.md:
// usage 2, fabric 3, interrupted 130; anything else is 1).
var (
	// ErrUsage marks an error in what the user gave. Exit code 2.
	ErrUsage = errors.New("usage")

	// ErrFabric marks a failure of the benchmark or fabric. Exit code 3.
	ErrFabric = errors.New("the benchmark or fabric failed")

	// ErrInterrupted: the user stopped the command. Exit code 130.
	ErrInterrupted = errors.New("interrupted")
)

// Mark returns an error that reads as err and that errors.Is matches to
// both err's chain and kind. Mark(kind, nil) is nil.
func Mark(kind, err error) error {
	if err == nil {
		return nil
	}
	return &markedError{kind: kind, err: err}
}

// UsageErrorf is fmt.Errorf marked ErrUsage.
func UsageErrorf(format string, args ...any) error {
	return Mark(ErrUsage, fmt.Errorf(format, args...))
}

// UsageError marks err ErrUsage, its words unchanged.
func UsageError(err error) error { return Mark(ErrUsage, err) }

type markedError struct{ kind, err error }

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() []error { return []error{e.err, e.kind} }

// Warning is a caveat of the statistics about a summary or comparison,
// carried as data so the caller decides how to show it.
type Warning struct {
	// Code is a stable identifier, one of model's Warn* constants.
	Code string `json:"code"`
	// Message is one plain sentence for people.
	Message string `json:"message"`
	// Launches are the 0-based indices of the launches concerned, if any.
	Launches []int `json:"launches,omitempty"`
	// Bytes are the message sizes concerned, if any.
	Bytes []int64 `json:"bytes,omitempty"`
}

// ErrorJSON is the one shape of an error in every JSON document nccltune
// prints; the command fills it, libraries only carry it.
type ErrorJSON struct {
	Code    int    `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
