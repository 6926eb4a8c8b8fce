package search

// Reconfirmation: a fresh confirmation outside any study loop.

import (
	"context"
	"fmt"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// Reconfirmation is what Reconfirm measures: Candidate against Baseline,
// Launches measurements per arm, for the study that Options describe.
type Reconfirmation struct {
	// Options are the study's: its workload, guard sizes, guarded ops and
	// statistics.
	Options Options
	// Baseline and Candidate are the arms, saved by the caller.
	Baseline, Candidate *Trial
	// Launches is the measurements per arm.
	Launches int
	// Seq is the first launch's Request.Seq.
	Seq      int
	Launcher Launcher
	Recorder Recorder
	// OnEvent, if not nil, hears of every launch.
	OnEvent func(Event)
}

// ReconfirmLaunches is the most launches r makes: one warm-up, Launches
// measurements per arm, and the guarded ops' launches.
func (r Reconfirmation) ReconfirmLaunches() int {
	return 1 + 2*r.Launches*r.Options.cost() + r.Options.guardReserve()
}

// Reconfirm measures r.Candidate against r.Baseline as a study's
// confirmation does at a design of one look, and decides as the study
// does. A launch that fails is vocab.ErrFabric naming the config.
func Reconfirm(ctx context.Context, r Reconfirmation) (*Result, error) {
	opts := r.Options.withHull()
	// The study decided what may be recommended; this measures that.
	opts.AllowDisabled = true
	opts.Budget = r.Seq + r.ReconfirmLaunches()
	s := newLoop(opts)
	s.launcher, s.rec, s.onEvent = r.Launcher, r.Recorder, r.OnEvent
	// It reads no plan, and judges no call at its own size: that needs
	// NCCL's plan and a budget of its own.
	s.seq, s.planRead, s.candidateRead, s.guardPlansDone = r.Seq, true, true, true
	s.exactDone, s.exactSkipped = true, true
	base, cand := r.Baseline, r.Candidate
	s.trials = []*Trial{base, cand}
	res := &Result{Trials: s.trials, Baseline: base, Winner: cand}
	failed := func(t *Trial, phase string) error {
		return vocab.Mark(vocab.ErrFabric, fmt.Errorf("%s launch of %s %s: %s", phase, t.Config, t.State, t.Reason))
	}
	if err := s.launchOp(ctx, base, vocab.PhaseWarmup, false, opts.Parts()[0].Op, s.warmupRound()); err != nil {
		return res, err
	}
	if !base.State.Usable() {
		return res, failed(base, vocab.PhaseWarmup)
	}
	d := model.PlanConfirm(r.Launches, r.Launches, s.alpha())
	res.Design = &d
	out, err := Confirm(ctx, Confirmation{Baseline: base, Candidate: cand, Design: d, Sizes: s.sizes, Stats: opts.Stats,
		Launch: func(ctx context.Context, t *Trial) error { return s.launch(ctx, t, vocab.PhaseConfirm, true) }})
	res.Looks, res.Launches = out.Looks, s.seq
	switch {
	case err != nil:
		return res, err
	case out.Failed != nil:
		return res, failed(out.Failed, vocab.PhaseConfirm)
	}
	s.judge(res, d, out.Look)
	err = s.guard(ctx, res)
	res.Launches = s.seq
	return res, err
}
