package stored

import (
	"sort"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// SearchLaunch is a stored launch as the search reads it back (resume's
// Regroup, RoundScores): one of the trial's measurements when it ran to a
// result and was scored, with the score stored with it.
func SearchLaunch(l *store.Launch) search.StoredLaunch {
	sl := search.StoredLaunch{Op: l.Op, Phase: l.Phase, Scored: l.Outcome == benchfmt.OK && l.Scored, Failed: l.Outcome != benchfmt.OK}
	if sl.Scored {
		sl.Launch, sl.ScoreUS = model.LaunchOf(l.Sizes), l.ScoreUS
	}
	return sl
}

// RoundScores are the objective of each of trial's rounds, exploration's
// and confirmation's, as the search scored them
// (search.Options.RoundScores) for a study of several parts,
// where one launch measures one op and only a round of every op's launch
// is scored by the objective (a timed workload's time per step, Σ calls ×
// time); ok is false for a one-part study, whose launches' stored scores
// are its objective's.
func RoundScores(s *store.Study, trialID uint64, launches []*store.Launch) (explore, confirm []float64, ok bool) {
	var of []*store.Launch
	for _, l := range launches {
		if l.TrialID == trialID {
			of = append(of, l)
		}
	}
	sort.SliceStable(of, func(i, j int) bool { return of[i].Seq < of[j].Seq })
	ls := make([]search.StoredLaunch, len(of))
	for i, l := range of {
		ls[i] = SearchLaunch(l)
	}
	return search.Options{Workload: s.Parts()}.RoundScores(ls)
}
