package main

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, the contract in DESIGN.md.
const (
	exitOK          = 0
	exitCheckFailed = 1 // a gate or check failed (also: any other error)
	exitUsage       = 2
	exitFabric      = 3 // the benchmark or fabric failed
	exitInterrupted = 130
)

// codedError carries an exit code with its cause.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// usageErrorf reports bad input: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &codedError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// usageError marks err as bad input: exit code 2.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: exitUsage, err: err}
}

// fabricError marks err as a failure of the benchmark or fabric: exit code 3.
func fabricError(err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: exitFabric, err: err}
}

// errCheckFailed is returned by gate (and other checks) after printing
// their result: exit code 1, no further message.
var errCheckFailed = &codedError{code: exitCheckFailed, err: errors.New("check failed")}

// errInterrupted is returned when the user stopped the command.
var errInterrupted = &codedError{code: exitInterrupted, err: errors.New("interrupted")}

// exitCode maps an error from run to the process exit code: the one place
// where that happens.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitCheckFailed
}

// isSilent reports errors whose message was already shown as the
// command's output.
func isSilent(err error) bool { return err == errCheckFailed }
