package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// TestRunCancelledBeforeStart: a launch asked for after Ctrl-C (the
// context already cancelled) starts no process and leaves no record.
func TestRunCancelledBeforeStart(t *testing.T) {
	spec := fakeSpec(t, "ok")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := Run(ctx, spec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if l != nil {
		t.Fatalf("a launch was started after the cancellation: %+v", l)
	}
}

// TestRunBenchmarkLeavesChildHoldingOutput: a benchmark that exits while a
// child of its keeps its stdout open ends its launch when it exits, not at
// the timeout, with its result; the child does not outlive the launch.
func TestRunBenchmarkLeavesChildHoldingOutput(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_BENCH_PIDFILE", pidFile)
	spec := fakeSpec(t, "orphan")
	spec.Timeout = 20 * time.Second
	start := time.Now()
	l, err := Run(context.Background(), spec)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if l.Outcome != benchfmt.OK || took > 5*time.Second {
		t.Fatalf("outcome %s (%s) after %s, want ok within seconds", l.Outcome, l.Reason, took.Round(time.Millisecond))
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake benchmark did not start its child: %v", err)
	}
	pid, _ := strconv.Atoi(string(data))
	assertGone(t, pid)
}
