package studyrun

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/nccltune/nccltune/internal/benchfmt"
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
	if req.Debug {
		// A debug launch is read for NCCL's choices, never timed nor
		// scored: one call per size gives every choice (NCCL logs each
		// call's), so it runs one iteration after one warm-up, without
		// per-iteration samples, instead of the study's (at 4 ranks,
		// 32K-256M: 16 s at -n 20 -w 5), and without nccl-tests' check
		// (-c 0), which only a scored launch needs.
		spec.Iters, spec.Warmup, spec.PerIter, spec.NoCheck = debugIters, debugWarmup, false, true
	}
	if spec.Sim != nil {
		sim := *spec.Sim
		sim.Seed = LaunchSeed(l.Seed, req.Seq)
		sim.Launch = req.Seq
		spec.Sim = &sim
	}
	return runner.Run(ctx, spec)
}

// debugIters and debugWarmup are a study's debug launches' nccl-tests -n
// and -w.
const (
	debugIters  = 1
	debugWarmup = 1
)

// LaunchSeed gives every launch of a study its own reproducible noise.
func LaunchSeed(seed int64, seq int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, seq)
	return int64(h.Sum64() >> 1)
}
