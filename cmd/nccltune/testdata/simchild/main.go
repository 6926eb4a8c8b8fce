// Command simchild is the simulated fabric alone: what nccltune runs when
// started as its own simulator (sim.RunIfChild), without the rest of
// nccltune. TestMain builds it once per test binary and points
// launchflags.SimExecutable at it, since a simulated launch of the whole
// test binary costs three times as much to start.
package main

import (
	"fmt"
	"os"

	"github.com/nccltune/nccltune/internal/sim"
)

func main() {
	sim.RunIfChild()
	fmt.Fprintf(os.Stderr, "simchild: start me as %s ARGS (nccltune's simulated fabric)\n", sim.ChildArg)
	os.Exit(2)
}
