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
	"time"

	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/sim"
)

func main() {
	// The simulated fabric runs as a child process of this same executable.
	sim.RunIfChild()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go stopGuard(ctx, stop)
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	if err != nil && err != errCheckFailed { // its output said it already
		reportError(os.Stderr, err)
	}
	outfile.RemoveTemps() // os.Exit runs no deferred calls
	os.Exit(exitCode(err))
}

// reportError prints err on stderr, escaped: errors echo values from
// outside, and an escape sequence or line break in one is shown, not acted on.
// (--json's error document keeps the message: encoding/json escapes it.)
func reportError(w io.Writer, err error) {
	fmt.Fprintf(w, "nccltune: %s\n", safetext.Escape(err.Error()))
}

// stopGrace is how long a command may take to stop after Ctrl-C or
// SIGTERM: enough to save a study's state and give a launch its 3 s grace.
var stopGrace = 5 * time.Second

// stopGuard makes sure a signal ends the process: a command stuck where
// no context reaches exits 130 after stopGrace, or at a second signal.
func stopGuard(ctx context.Context, stop context.CancelFunc) {
	<-ctx.Done()
	// Listen for the next signal before stop() gives the handler up, or a
	// Ctrl-C in between would kill the process, leaving temporary files.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	stop()
	select {
	case <-again:
	case <-time.After(stopGrace):
		fmt.Fprintln(os.Stderr, "nccltune: interrupted, and did not finish stopping in time; exiting")
	}
	outfile.RemoveTemps()
	os.Exit(exitInterrupted)
}
