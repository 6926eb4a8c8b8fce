package studyrun

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
)

// Launcher runs a study's launches with runner.Run: Base with the
// request's config, sizes and debug flag, and a simulator seed per launch.
type Launcher struct {
	Base runner.Spec
	Seed int64
}

// Launch runs one launch of the study.
func (l *Launcher) Launch(ctx context.Context, req search.Request) (*benchfmt.Launch, error) {
	spec := l.Base
	spec.Config = req.Config
	spec.Op = cmp.Or(req.Op, spec.Op)
	spec.MinBytes, spec.MaxBytes = req.MinBytes, req.MaxBytes
	spec.Debug = req.Debug
	if req.Debug {
		// A debug launch is read for NCCL's choices, never timed: one
		// call per size logs every choice, and the check (-c) is needless.
		spec.Iters, spec.Warmup, spec.PerIter, spec.NoCheck = debugIters, debugWarmup, false, true
	}
	if spec.Sim != nil {
		s := *spec.Sim
		s.Seed = LaunchSeed(l.Seed, req.Seq)
		s.Launch = req.Seq
		spec.Sim = &s
	}
	got, err := runner.Run(ctx, spec)
	if got != nil && spec.Sim != nil {
		// The study weighs the launch by its modelled time (batchesPay),
		// fixed by the seed, not the simulator's run time.
		got.Modelled = sim.LaunchDuration(got.Result, spec.Warmup, spec.Iters)
	}
	return got, err
}

// BatchRunner runs one batch launch of an instrument with a batch mode,
// returning one launch record per (config, op). spec is the study's
// launch for the batch's first member, its simulator seed the batch's.
type BatchRunner interface {
	RunBatch(ctx context.Context, spec runner.Spec, b search.Batch) ([]*benchfmt.Launch, error)
}

type batchLauncher struct {
	*Launcher
	run BatchRunner
}

// LaunchBatch runs b as one launch of the study's instrument. A share the
// batch did not measure (Failed) is launched on its own in its place:
// that launch, not the batch, says what the config does.
func (l *batchLauncher) LaunchBatch(ctx context.Context, b search.Batch) ([]*benchfmt.Launch, error) {
	first := b.Members[0]
	spec := l.Base
	spec.MinBytes, spec.MaxBytes = first.MinBytes, first.MaxBytes
	if spec.Sim != nil {
		s := *spec.Sim
		s.Seed, s.Launch = LaunchSeed(l.Seed, first.Seq), first.Seq
		spec.Sim = &s
	}
	shares, err := l.run.RunBatch(ctx, spec, b)
	if err != nil || len(shares) != len(b.Members)*len(b.Ops) {
		return shares, err // the search names a runner that returns too few or too many
	}
	for k, s := range shares {
		if s.Outcome != benchfmt.Failed {
			continue
		}
		req, op := b.Members[k/len(b.Ops)], b.Ops[k%len(b.Ops)]
		req.Seq, req.Op, req.MinBytes, req.MaxBytes = req.Seq+k%len(b.Ops), op.Op, op.MinBytes, op.MaxBytes
		if shares[k], err = l.Launch(ctx, req); err != nil {
			return nil, err
		}
	}
	return shares, nil
}

// A study's debug launches' nccl-tests -n and -w.
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
