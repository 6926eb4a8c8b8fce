package stored

import (
	"maps"
	"slices"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ExplainChoices finds what NCCL chose per size in a study's debug
// launches: defaults from the baseline trial, recommended from the
// recommended trial (defaults when the study keeps them). Either is nil
// when not recorded.
func ExplainChoices(s *store.Study, trials []*store.Trial, launches []*store.Launch) (defaults, recommended []benchfmt.Choice) {
	var baseID uint64
	if i := slices.IndexFunc(trials, func(t *store.Trial) bool { return t.Number == 0 }); i >= 0 {
		baseID = trials[i].ID
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
		// The config it was scoped from runs the workload's functions
		// exactly as it does (not the others).
		recommended = onlyFunctionsOf(trialChoices(launches, r.ScopedFromTrialID), s.Parts().Ops())
	}
	return defaults, recommended
}

func onlyFunctionsOf(choices []benchfmt.Choice, ops []nccl.Op) []benchfmt.Choice {
	var kept []benchfmt.Choice
	for _, c := range choices {
		if o, ok := nccl.OpFromFunction(c.Collective); ok && slices.Contains(ops, o) {
			kept = append(kept, c)
		}
	}
	return kept
}

// trialChoices are the choices the trial's launches recorded: per op the
// latest, debug launches first, each op's own function first, so where
// two logs name one function that op's launch speaks for it.
func trialChoices(launches []*store.Launch, trialID uint64) []benchfmt.Choice {
	best := map[nccl.Op]*store.Launch{}
	for _, l := range launches {
		if l.TrialID != trialID || l.Facts == nil || len(l.Facts.Choices) == 0 {
			continue
		}
		op := l.Op.OrAllReduce()
		// Debug launches (explain, and plan launches, which read NCCL's plan
		// over the same range) say what NCCL chose at every size.
		explain, b := isDebugPhase(l.Phase), best[op]
		if b == nil || explain && !isDebugPhase(b.Phase) || explain == isDebugPhase(b.Phase) && l.Seq > b.Seq {
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

// CalledChoices are what NCCL chose with s's recommendation at the sizes
// its process calls off the powers of two, as the search's own-size check
// read them (search/exact.go, benchfmt.LadderPlan): one choice per call
// whose plan a log shows, its Bytes the size called. nil when the study
// keeps its baseline, has no such calls, or read none.
func CalledChoices(s *store.Study, launches []*store.Launch) []benchfmt.Choice {
	r := s.Recommendation
	w := s.Parts()
	if r == nil || r.TrialID == 0 || ConclusionOf(s).Keeps() || !w.Timed() {
		return nil
	}
	plans := map[nccl.Op]nccl.Plan{}
	for _, l := range launches {
		if l.TrialID != r.TrialID || l.Phase != vocab.PhaseExact || l.Facts == nil || len(l.Facts.Choices) == 0 {
			continue
		}
		op := w.LaunchOp(l.Op) // as search/exact.go's exactPlan reads it
		if plans[op] == nil {
			plans[op] = nccl.Plan{}
		}
		maps.Copy(plans[op], benchfmt.LadderPlan(l.Outcome, l.Facts, op, l.MinBytes, l.MaxBytes))
	}
	var out []benchfmt.Choice
	for _, p := range w {
		op := p.Op.OrAllReduce()
		for _, b := range p.Logged {
			if b == p.Band.Min {
				continue // at its power of two: the explain launch's size
			}
			ch, ok := plans[op].AtCall(b, op.MinBytes(s.Platform.Ranks))
			if !ok {
				continue
			}
			out = append(out, benchfmt.Choice{Collective: op.Function(), Bytes: b, Algo: ch.Algo, Proto: ch.Proto, Channels: ch.Channels})
		}
	}
	return out
}
