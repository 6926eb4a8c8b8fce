package testgc

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTestsRunAtPercent(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set by hand, and wins")
	}
	if got := debug.SetGCPercent(Percent); got != Percent {
		t.Fatalf("GOGC %d, want %d", got, Percent)
	}
}
