package runner

import (
	"context"
	"errors"
	"testing"
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
