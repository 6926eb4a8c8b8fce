package studyrun

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
)

// Launcher runs a study's launches with runner.Run: Base with the
// request's config, sizes and debug flag, and, under the simulator, a
// seed of its own per launch.
type Launcher struct {
	Base runner.Spec
	Seed int64
}

// Launch runs one launch of the study.
func (l *Launcher) Launch(ctx context.Context, req search.Request) (*benchfmt.Launch, error) {
	spec := l.Base
	spec.Config = req.Config
	if req.Op != "" {
		spec.Op = req.Op
	}
	spec.MinBytes, spec.MaxBytes = req.MinBytes, req.MaxBytes
	spec.Debug = req.Debug
	if spec.Sim != nil {
		sim := *spec.Sim
		sim.Seed = LaunchSeed(l.Seed, req.Seq)
		sim.Launch = req.Seq
		spec.Sim = &sim
	}
	return runner.Run(ctx, spec)
}

// LaunchSeed gives every launch of a study its own reproducible noise.
func LaunchSeed(seed int64, seq int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, seq)
	return int64(h.Sum64() >> 1)
}
