package report

import (
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ResultLaunches is what a study concluded, as launches: the trial it
// recommends (else its baseline, else its only trial) and that trial's
// confirmation launches, or every usable launch of it when it has none.
func (s *Study) ResultLaunches() (*store.Trial, []*store.Launch) {
	var t *store.Trial
	if r := s.Study.Recommendation; r != nil && r.TrialID != 0 {
		t = s.trialByID(r.TrialID)
	}
	if t == nil {
		t = s.Baseline()
	}
	if t == nil && len(s.Trials) > 0 {
		t = s.Trials[0]
	}
	if t == nil {
		return nil, nil
	}
	if ls := s.TrialLaunches(t, vocab.PhaseConfirm); len(ls) > 0 {
		return t, ls
	}
	return t, s.TrialLaunches(t, "")
}
