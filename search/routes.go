package search

// Settling NCCL_CROSS_NIC on a fabric with several NICs per host: one
// debug launch of the value alone shows whether it routes any channel
// through another NIC than NCCL's defaults (nccl.Native.LearnRoutes).

import (
	"context"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// routesUnknown returns the NCCL_CROSS_NIC value of cfg whose routes only
// its own debug log can tell (several NICs per host, not yet proved a
// no-op, not yet read), and the config that reads them: the value alone.
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

// checkRoutes returns a trial to give a debug launch while exploring, or
// nil: cfg sets an NCCL_CROSS_NIC value whose routes are unknown. Proved
// a no-op, the value merges every config that carries it with the same
// config without it (a third of the default space per value).
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

// readRoutes makes one debug launch of the candidate's NCCL_CROSS_NIC
// value alone when its routes are unknown and the budget holds the launch
// beside the smallest confirmation, so that a value that changes no route
// is left out of the recommendation.
func (s *loop) readRoutes(ctx context.Context, w *Trial) error {
	probe, unknown := s.plan.routesUnknown(w.Config)
	if !unknown || s.seq+s.cost() > s.opts.Budget-2*s.opts.ConfirmLaunches*s.cost()-s.guardLeft()-s.explainLeft() {
		return nil
	}
	t, err := s.readRoutesOf(probe)
	if err != nil || t == nil {
		return err
	}
	return s.launch(ctx, t, vocab.PhasePlan, false)
}

// readRoutesOf is the trial whose debug launch reads probe's routes,
// counted as a check; the value is read once per study.
func (s *loop) readRoutesOf(probe nccl.Config) (*Trial, error) {
	t, err := s.trialOf(probe)
	if err != nil {
		return nil, err
	}
	if s.plan.routesRead == nil {
		s.plan.routesRead = map[string]bool{}
	}
	s.plan.routesRead[probe["NCCL_CROSS_NIC"]] = true
	s.plan.checks++
	return t, nil
}
