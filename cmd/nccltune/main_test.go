package main

import (
	"os"
	"testing"

	"github.com/nccltune/nccltune/internal/sim"
)

// TestMain lets the test binary act as the simulated benchmark: commands
// run with --sim launch os.Executable() (this binary) as the simulator.
// See faults_test.go for its third role.
func TestMain(m *testing.M) {
	sim.RunIfChild()
	// As a stand-in for docker, kubectl or an engine (standin_test.go).
	if role := os.Getenv(standinEnv); role != "" {
		standinMain(role)
	}
	// With NCCLTUNE_TEST_CLI=1 the binary is nccltune itself, for tests
	// that need a real process (kill -9, a second writer, resource limits).
	if os.Getenv(cliChildEnv) == "1" {
		cliChild()
	}
	becomeSubreaper()
	code := m.Run()
	removeSharedStudies()
	os.Exit(code)
}
