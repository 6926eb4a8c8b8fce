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
	if err != nil && !isSilent(err) {
		reportError(os.Stderr, err)
	}
	// os.Exit runs no deferred calls, and some temporary files live as
	// long as the process (runner's launch directory): remove them here.
	outfile.RemoveTemps()
	os.Exit(exitCode(err))
}

// reportError prints err on stderr: the one place every error reaches the
// terminal. Errors echo paths and values from outside (a file name, a
// --base-env value, a line of a log), so the message goes through
// safetext.Escape: an escape sequence or a line break in it is shown, not
// acted on, and an error is always one line. (--json's error document
// keeps the message as it is: encoding/json escapes it.)
func reportError(w io.Writer, err error) {
	fmt.Fprintf(w, "nccltune: %s\n", safetext.Escape(err.Error()))
}

// stopGrace is how long a command may take to stop after Ctrl-C or
// SIGTERM: enough to save where a study stands and to give a launch's
// process group its SIGTERM grace, never more.
var stopGrace = 5 * time.Second // runner gives a launch 3 s after SIGTERM

// stopGuard makes sure a signal ends the process. Every command stops
// through its context; should one be stuck where no context reaches (a
// write to a FIFO nobody reads, a file system that hangs), it exits 130
// after stopGrace, and a second Ctrl-C or SIGTERM ends it at once.
func stopGuard(ctx context.Context, stop context.CancelFunc) {
	<-ctx.Done()
	// Listen for the next signal before stop() gives the first one's
	// handler up: in between, a Ctrl-C would kill the process outright,
	// leaving its temporary files behind.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	stop()
	select {
	case <-again:
	case <-time.After(stopGrace):
		fmt.Fprintln(os.Stderr, "nccltune: interrupted, and did not finish stopping in time; exiting")
	}
	// os.Exit runs no deferred calls: remove the temporary files (a
	// verify's tuner CSV, the process's launch directory) here.
	outfile.RemoveTemps()
	os.Exit(exitInterrupted)
}
