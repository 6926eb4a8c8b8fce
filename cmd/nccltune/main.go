// Command nccltune finds the NCCL environment settings that make
// collectives fastest for the message sizes a workload really uses.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nccltune/nccltune/sim"
)

func main() {
	// The simulated fabric runs as a child process of this same executable.
	sim.RunIfChild()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	if err != nil && !isSilent(err) {
		reportError(os.Stderr, err)
	}
	os.Exit(exitCode(err))
}

func reportError(w io.Writer, err error) {
	fmt.Fprintf(w, "nccltune: %v\n", err)
}
