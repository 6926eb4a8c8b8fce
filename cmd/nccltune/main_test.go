package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/sim"
)

// TestMain lets the test binary act as the simulated benchmark: commands
// run with --sim launch os.Executable() (this binary) as the simulator,
// those run in this process testdata/simchild (useSmallSimulator). See
// faults_test.go for its third role.
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
	simDir := useSmallSimulator()
	code := m.Run()
	removeSharedStudies()
	if simDir != "" {
		os.RemoveAll(simDir)
	}
	os.Exit(code)
}

// useSmallSimulator builds testdata/simchild (the simulator alone) and
// points launchflags.SimExecutable at it for the commands the tests run in
// this process: the tests make thousands of simulated launches, and this
// binary, with every package nccltune links and the tests' own, takes
// about 7 ms of CPU to start where simchild takes about 2. Commands run as
// a process of their own (startCLI, the recipes' nccltune) still start
// this binary as their simulator, as nccltune starts itself. Where the
// build fails the tests run as before, only slower. It returns the
// directory to remove.
func useSmallSimulator() string {
	dir, err := os.MkdirTemp("", "nccltune-simchild-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "simchild: the simulated launches start this test binary:", err)
		return ""
	}
	exe := filepath.Join(dir, "simchild")
	out, err := exec.Command("go", "build", "-o", exe, "./testdata/simchild").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "simchild: the simulated launches start this test binary: go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		return ""
	}
	launchflags.SimExecutable = func() (string, error) { return exe, nil }
	return dir
}
