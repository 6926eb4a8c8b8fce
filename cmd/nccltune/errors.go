package main

import (
	"context"
	"errors"

	"github.com/nccltune/nccltune/internal/vocab"
)

// Exit codes, the contract in DESIGN.md.
const (
	exitOK          = 0
	exitCheckFailed = 1 // a gate or check failed (also: any other error)
	exitUsage       = 2
	exitFabric      = 3 // the benchmark or fabric failed
	exitInterrupted = 130
)

// exitCodesHelp is the exit codes as --help and the README state them
// (a test holds the README to it).
const exitCodesHelp = `Exit codes: 0 success; 1 a gate or check failed, or another error: the
database busy (another nccltune writing for more than 5 s), read-only or
full, a file that cannot be read or written, a study another nccltune is
running; 2 a usage error, refused before anything is stored; 3 the
benchmark or fabric failed; 130 interrupted.`

// errCheckFailed is returned by a check after printing its result: exit
// code 1, no further message.
var errCheckFailed = errors.New("check failed")

// exitCode maps an error from run to the process exit code: the one place
// where that happens.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, vocab.ErrUsage):
		return exitUsage
	case errors.Is(err, vocab.ErrFabric):
		return exitFabric
	case errors.Is(err, vocab.ErrInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitCheckFailed
}
