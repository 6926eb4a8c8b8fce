package main

import (
	"context"
	"os"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/runner"
)

// BenchmarkSimulatedLaunch is one launch on the simulated fabric the way
// every study makes them: runner.Run builds the argv, starts the simulator
// as a child process (this test binary, see TestMain), waits, reads the
// -J JSON and the text, parses and classifies. Target: well under 50 ms.
func BenchmarkSimulatedLaunch(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	spec := runner.Spec{MinBytes: 512 << 10, MaxBytes: 8 << 20, PerIter: true,
		Sim: &runner.SimSpec{Executable: exe, Profile: "spark4", Noise: 1, Seed: 1, Launch: 1}}
	for i := 0; i < b.N; i++ {
		spec.Sim.Seed = int64(i + 1)
		l, err := runner.Run(context.Background(), spec)
		if err != nil || l.Outcome != benchfmt.OK || len(l.Result.Rows) != 5 {
			b.Fatalf("launch %d: %v %+v", i, err, l)
		}
	}
}
