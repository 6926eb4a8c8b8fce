package search

// Settling NCCL_CROSS_NIC on a fabric with several NICs per host: one
// debug launch of the value alone shows its routes.

import (
	"context"
	"fmt"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// routesUnknown returns cfg's NCCL_CROSS_NIC value whose routes are
// unknown, and the config that reads them.
func (p *planner) routesUnknown(cfg nccl.Config) (nccl.Config, bool) {
	v, ok := cfg.Canonical()["NCCL_CROSS_NIC"]
	d := p.defaults()
	if !ok || d == nil || d.NoNetwork || d.NICs < 2 || len(d.NetRoutes) == 0 {
		return nil, false
	}
	probe := nccl.Config{"NCCL_CROSS_NIC": v}
	if p.certainByRules(probe) || p.routesRead[v] {
		return nil, false
	}
	return probe, true
}

// checkRoutes returns a trial to give a debug launch while exploring, or nil.
func (s *loop) checkRoutes(cfg nccl.Config) (*Trial, error) {
	if s.exploreLeft() < 4*s.cost() {
		return nil, nil
	}
	probe, unknown := s.plan.routesUnknown(cfg)
	if !unknown {
		return nil, nil
	}
	return s.readRoutesOf(probe)
}

// readRoutes reads the candidate's NCCL_CROSS_NIC routes when unknown.
func (s *loop) readRoutes(ctx context.Context, w *Trial) error {
	probe, unknown := s.plan.routesUnknown(w.Config)
	if !unknown || !s.holdsBesideConfirm() {
		return nil
	}
	t, err := s.readRoutesOf(probe)
	if err != nil || t == nil {
		return err
	}
	return s.launch(ctx, t, vocab.PhasePlan, false)
}

// readRoutesOf is the trial whose debug launch reads probe's routes.
func (s *loop) readRoutesOf(probe nccl.Config) (*Trial, error) {
	t, err := s.trialOf(probe)
	if err != nil {
		return nil, err
	}
	s.plan.routesRead[probe["NCCL_CROSS_NIC"]] = true
	s.plan.checks++
	return t, nil
}

// measuredSlower reports whether u could not plausibly beat w by the
// planner's rule (model.Plausible). False while either has no launch.
func (s *loop) measuredSlower(w, u *Trial) bool {
	return len(w.Explore) > 0 && len(u.Explore) > 0 &&
		!model.Plausible([]model.Arm{{Launches: w.Explore}, {Launches: u.Explore}}, s.sizes, 1)
}

// ruleCrossNICUntimed is the dropped-knob rule when NCCL_CROSS_NIC was
// not proved a no-op and the config without it measures as fast.
const ruleCrossNICUntimed = "NCCL_CROSS_NIC that the measured time does not show"

// withoutCrossNIC returns the trial to confirm in place of w when w sets
// NCCL_CROSS_NIC not proved a no-op: the same config without it, unless
// that is measurably slower, with the drop's record.
func (s *loop) withoutCrossNIC(ctx context.Context, w *Trial) (*Trial, *nccl.Drop, error) {
	v, ok := w.Config["NCCL_CROSS_NIC"]
	if !ok {
		return w, nil, nil
	}
	rest := without(w.Config, "NCCL_CROSS_NIC")
	if len(rest) == 0 {
		return w, nil, nil
	}
	u, ok := s.byKey[s.plan.keyOf(rest)]
	if !ok {
		var err error
		if u, err = s.trialOf(rest); err != nil {
			return w, nil, err
		}
	}
	if u == w || u.Role == vocab.RoleBaseline || s.plan.runsDefaults(u) {
		// Whether w beats the baseline or the defaults is the confirmation's question.
		return w, nil, nil
	}
	for u.State.Usable() && len(u.Explore) < min(len(w.Explore), s.opts.MaxLaunchesPerTrial) &&
		s.holdsBesideConfirm() {
		phase := vocab.PhaseRefine
		if len(u.Explore) == 0 {
			phase = vocab.PhaseExplore
		}
		if err := s.launch(ctx, u, phase, true); err != nil {
			return w, nil, err
		}
	}
	if !u.State.Usable() || len(u.Explore) == 0 || s.rank.guardFails(u) && !s.rank.guardFails(w) {
		return w, nil, nil
	}
	if s.measuredSlower(w, u) {
		return w, nil, nil // measurably slower without it: kept
	}
	return u, &nccl.Drop{Knob: "NCCL_CROSS_NIC", Value: v, Rule: ruleCrossNICUntimed,
		Reason: fmt.Sprintf("the time does not show it: %s measured %.1f µs without it (%d launches), %.1f µs with it (%d), within the launch-to-launch spread",
			u.Config, math.Exp(u.logScore(s.sizes)), len(u.Explore), math.Exp(w.logScore(s.sizes)), len(w.Explore))}, nil
}
