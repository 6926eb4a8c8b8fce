package sim

import (
	"io"
	"os"
)

// ChildArg is the first argument that makes the nccltune executable (or a
// test binary) act as the simulated benchmark instead of itself.
const ChildArg = "__nccltune_sim"

// RunIfChild runs the simulated benchmark and exits when the process was
// started as one (os.Args[1] == ChildArg). main and TestMain call it first.
func RunIfChild() {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(Main(os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
}

// Main runs the simulated all_reduce_perf with args (nccl-tests flags plus
// the simulator's own --profile, --noise, --seed, --launch) and the given
// environment, and returns the process exit code.
func Main(args []string, environ []string, stdout, stderr io.Writer) int {
	io.WriteString(stderr, "nccltune sim: not built yet\n")
	return 3
}
