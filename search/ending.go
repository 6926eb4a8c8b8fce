package search

// How a study ends with launches to spare.

import (
	"context"
	"fmt"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// settle records what the study left unspent and, when more launches
// could not have changed the answer, says so.
func (s *loop) settle(res *Result) {
	res.Unspent = max(0, s.opts.Budget-s.seq)
	res.UnspentForGuards = min(res.Unspent, s.guardReserveUnmade())
	if s.timeCut {
		// A stage after exploration was cut for time.
		res.Stopped = "time"
	}
	if res.Stopped != "space" || res.Unspent == 0 {
		return
	}
	if refusable(res) && s.promising(res.Baseline) != nil {
		// A refusal with a candidate left unconfirmed: not settled.
		return
	}
	switch {
	case res.Ending == vocab.EndingCannotDecide:
		res.Settled = fmt.Sprintf("every distinct NCCL plan of the space was explored and the budget left cannot decide a confirmation: %d of %d launches left unspent",
			res.Unspent, s.opts.Budget)
	case res.Design != nil && res.Looks > 0:
		res.Settled = fmt.Sprintf("every distinct NCCL plan of the space was explored and the confirmation decided at look %d of %d (%d + %d launches): more launches could not change the answer; %d of %d launches left unspent",
			res.Looks, len(res.Design.Looks), len(res.Baseline.Confirm), len(res.Winner.Confirm), res.Unspent, s.opts.Budget)
	case res.Ending == vocab.EndingSameAsBaseline || res.Ending == vocab.EndingNoCandidate:
		res.Settled = fmt.Sprintf("every distinct NCCL plan of the space was explored and none is a candidate: %d of %d launches left unspent", res.Unspent, s.opts.Budget)
	}
}

// settleLeaders spends what exploration has left once every distinct
// plan was explored on telling the leading candidates apart: two configs
// 4 % apart at 3 launches each are otherwise confirmed by a coin toss.
func (s *loop) settleLeaders(ctx context.Context) error {
	limit := 2 * s.opts.MaxLaunchesPerTrial
	for s.exploreLeft() >= s.cost() && !s.outOfTime() {
		top := s.candidates(s.opts.TopConfigs)
		if len(top) < 2 {
			return nil
		}
		t := s.planNext(top, limit)
		if t == nil {
			return nil
		}
		if err := s.launch(ctx, t, vocab.PhaseRefine, true); err != nil {
			return err
		}
	}
	return nil
}

// candidates are the n best trials other than the baseline and the
// defaults, one per family.
func (s *loop) candidates(n int) []*Trial {
	var out []*Trial
	var families []map[string]bool
	for _, t := range s.rank.leaders(len(s.trials)) {
		if t.Role == vocab.RoleBaseline || s.plan.runsDefaults(t) {
			continue
		}
		f := s.plan.family(t.Config)
		if slices.ContainsFunc(families, func(g map[string]bool) bool { return familiesMeet(f, g) }) {
			continue
		}
		families = append(families, f)
		if out = append(out, t); len(out) == n {
			break
		}
	}
	return out
}

// familiesMeet reports whether two families share a key.
func familiesMeet(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// family is the keys of the configs cfg may run like.
func (p *planner) family(cfg nccl.Config) map[string]bool {
	core := p.core(cfg)
	out := map[string]bool{core.Key(): true}
	for _, drop := range [][]string{{"NCCL_PROTO"}, {"NCCL_ALGO"}, {"NCCL_PROTO", "NCCL_ALGO"}} {
		c := core.Clone()
		for _, k := range drop {
			delete(c, k)
		}
		if len(c) > 0 && len(c) < len(core) {
			out[p.core(c).Key()] = true
		}
	}
	return out
}
