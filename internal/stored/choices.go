package stored

import (
	"slices"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ExplainChoices finds what NCCL chose per size in a study's explain
// launches: defaults from the baseline trial (number 0), recommended from
// the recommended trial. A launch of phase explain is preferred; any
// other launch of the trial that recorded choices (an NCCL_DEBUG log) is
// used when there is none; the latest wins. When the study keeps NCCL's
// defaults, recommended is defaults. Either is nil when not recorded.
func ExplainChoices(s *store.Study, trials []*store.Trial, launches []*store.Launch) (defaults, recommended []benchfmt.Choice) {
	var baseID uint64
	for _, t := range trials {
		if t.Number == 0 {
			baseID = t.ID
			break
		}
	}
	if baseID != 0 {
		defaults = trialChoices(launches, baseID)
	}
	r := s.Recommendation
	if r == nil {
		return defaults, nil
	}
	if !r.Significant || len(nccl.Config(r.Env).Clone()) == 0 || r.TrialID == 0 || r.TrialID == baseID {
		return defaults, defaults
	}
	recommended = trialChoices(launches, r.TrialID)
	if len(recommended) == 0 && r.ScopedFromTrialID != 0 {
		// A scoped recommendation whose budget left no explain launch: the
		// config it was scoped from runs the workload's functions exactly
		// as it does (a per-function list is the plain list for its
		// functions), so that config's log tells NCCL's choices for them.
		// Its other functions' lines do not: there the scoped config runs
		// NCCL's defaults.
		recommended = onlyFunctionsOf(trialChoices(launches, r.ScopedFromTrialID), s.Parts().Ops())
	}
	return defaults, recommended
}

// onlyFunctionsOf keeps the choices of the ops' own functions.
func onlyFunctionsOf(choices []benchfmt.Choice, ops []nccl.Op) []benchfmt.Choice {
	var kept []benchfmt.Choice
	for _, c := range choices {
		if o, ok := nccl.OpFromFunction(c.Collective); ok && slices.Contains(ops, o) {
			kept = append(kept, c)
		}
	}
	return kept
}

// trialChoices are the choices the trial's debug launches recorded: per
// op the best launch's (a workload's plan and explain launches run once
// per op), each op's own function first, so where two logs name one
// function the launch of that function's op speaks for it.
func trialChoices(launches []*store.Launch, trialID uint64) []benchfmt.Choice {
	best := map[nccl.Op]*store.Launch{}
	for _, l := range launches {
		if l.TrialID != trialID || l.Facts == nil || len(l.Facts.Choices) == 0 {
			continue
		}
		op := l.Op.OrAllReduce()
		// Debug launches (explain, and plan launches, which read NCCL's plan
		// over the same range) say what NCCL chose at every size.
		explain := isDebugPhase(l.Phase)
		b := best[op]
		switch {
		case b == nil:
			best[op] = l
		case explain && !isDebugPhase(b.Phase):
			best[op] = l
		case explain == isDebugPhase(b.Phase) && l.Seq > b.Seq:
			best[op] = l
		}
	}
	var own, other []benchfmt.Choice
	for _, op := range nccl.Ops {
		l := best[op]
		if l == nil {
			continue
		}
		for _, c := range l.Facts.Choices {
			if o, ok := nccl.OpFromFunction(c.Collective); ok && o == op {
				own = append(own, c)
			} else {
				other = append(other, c)
			}
		}
	}
	if len(own)+len(other) == 0 {
		return nil
	}
	return append(own, other...)
}

func isDebugPhase(p string) bool { return p == vocab.PhaseExplain || p == vocab.PhasePlan }
