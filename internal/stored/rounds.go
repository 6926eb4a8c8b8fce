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
	sl := search.StoredLaunch{Op: l.Op, Phase: l.Phase, Scored: l.Outcome == benchfmt.OK && l.Scored, Failed: l.Outcome != benchfmt.OK, Batch: l.Batch}
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
	return search.Options{Workload: s.Parts()}.RoundScores(searchLaunchesOf(trialLaunches(trialID, launches)))
}

// Round is one complete round of a trial, as Rounds reads it.
type Round struct {
	Phase string
	// ScoreUS is the round's objective.
	ScoreUS float64
	// Last is the launch that completed the round.
	Last *store.Launch
}

// Rounds are trial's complete rounds in the order they were made, each
// with its objective and the launch that completed it (a figure of the
// search in time draws the round there), grouped by the search's one rule
// (search.Options.Rounds, as RoundScores); ok is false for a one-part
// study.
func Rounds(s *store.Study, trialID uint64, launches []*store.Launch) ([]Round, bool) {
	of := trialLaunches(trialID, launches)
	rs, ok := search.Options{Workload: s.Parts()}.Rounds(searchLaunchesOf(of))
	out := make([]Round, len(rs))
	for i, r := range rs {
		out[i] = Round{Phase: r.Phase, ScoreUS: r.ScoreUS, Last: of[r.Last]}
	}
	return out, ok
}

// trialLaunches are trial's launches in the order they were made.
func trialLaunches(trialID uint64, launches []*store.Launch) []*store.Launch {
	var of []*store.Launch
	for _, l := range launches {
		if l.TrialID == trialID {
			of = append(of, l)
		}
	}
	sort.SliceStable(of, func(i, j int) bool { return of[i].Seq < of[j].Seq })
	return of
}

// searchLaunchesOf are launches as the search reads them back.
func searchLaunchesOf(of []*store.Launch) []search.StoredLaunch {
	ls := make([]search.StoredLaunch, len(of))
	for i, l := range of {
		ls[i] = SearchLaunch(l)
	}
	return ls
}
