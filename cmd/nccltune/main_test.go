package main

import (
	"os"
	"testing"

	"github.com/nccltune/nccltune/sim"
)

// TestMain lets the test binary act as the simulated benchmark: commands
// run with --sim launch os.Executable() (this binary) as the simulator.
func TestMain(m *testing.M) {
	sim.RunIfChild()
	os.Exit(m.Run())
}
