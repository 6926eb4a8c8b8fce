package studyrun

import (
	"testing"

	"github.com/nccltune/nccltune/runner"
)

// TestSetDebugLaunch: doctor's launch logs NCCL's debug lines over the
// sizes asked, short unless iterations were given, and on the simulated
// fabric draws the noise of a study's first launch.
func TestSetDebugLaunch(t *testing.T) {
	s := runner.Spec{Iters: 50, Warmup: 9, PerIter: true, Sim: &runner.SimSpec{Profile: "spark4", Seed: 7}}
	SetDebugLaunch(&s, 7, 32<<10, 1<<20, false, true)
	if !s.Debug || s.PerIter || s.MinBytes != 32<<10 || s.MaxBytes != 1<<20 {
		t.Errorf("spec %+v: want the debug log over 32K-1M without per-iteration timing", s)
	}
	if s.Iters != doctorIters || s.Warmup != 9 {
		t.Errorf("iters %d warmup %d: want %d (not given) and 9 (given)", s.Iters, s.Warmup, doctorIters)
	}
	if s.Sim.Seed != LaunchSeed(7, 0) {
		t.Errorf("simulator seed %d, want the first launch's %d", s.Sim.Seed, LaunchSeed(7, 0))
	}
	real := runner.Spec{Iters: 3}
	SetDebugLaunch(&real, 7, 4, 8, true, false)
	if real.Iters != 3 || real.Warmup != doctorWarmup || real.Sim != nil {
		t.Errorf("real hardware %+v: want --iters 3 kept, warm-up %d", real, doctorWarmup)
	}
}
