package store

import "github.com/nccltune/nccltune/internal/vocab"

// CILevel is the confidence a stored interval was taken at, as the study
// decided it: 0.95 for a fixed-size comparison, 1 − the look's level for
// an interval a sequential confirmation reported at an early look (0.9926
// at a look of level 0.0074), 1 − alpha for the guarded ops' intervals.
// 0 is a record stored before the level was: the interval may have been
// taken at a look's level, so no level is claimed for it (Label).
type CILevel float64

// Label is how every printer names an interval taken at l: "95% CI",
// "99.26% CI"; "CI at an unrecorded level" for a record stored before
// its level was. The one wording: search, show, report, the exports and
// compare say it through here.
func (l CILevel) Label() string {
	if !(l > 0 && l < 1) {
		return "CI at an unrecorded level"
	}
	return vocab.Percent(float64(l)) + "% CI"
}

// RowsCILevel, PartsCILevel and OpGuardsCILevel are the level of a
// table's intervals, said once in its header: the level its rows share;
// 0 (unrecorded) when a row was stored without one, or they differ (a
// study compares its sizes, its parts and its guarded ops each at one
// level, so they do not).
func RowsCILevel(rows []SizeComparison) CILevel {
	return commonLevel(rows, func(r SizeComparison) CILevel { return r.CILevel })
}

// PartsCILevel is RowsCILevel of a workload's parts.
func PartsCILevel(parts []PartComparison) CILevel {
	return commonLevel(parts, func(p PartComparison) CILevel { return p.CILevel })
}

// OpGuardsCILevel is RowsCILevel of the guarded ops.
func OpGuardsCILevel(guards []OpGuard) CILevel {
	return commonLevel(guards, func(g OpGuard) CILevel { return g.CILevel })
}

func commonLevel[T any](xs []T, level func(T) CILevel) CILevel {
	if len(xs) == 0 {
		return 0
	}
	l := level(xs[0])
	for _, x := range xs[1:] {
		if level(x) != l {
			return 0
		}
	}
	return l
}

// oldLevels gives the intervals of a recommendation stored before their
// levels were (CILevel 0) the level they provably had: every per-size
// row (band, guard sizes, each part's) and every part's comparison at
// vocab.DefaultConfidence, the confidence every study compared them at
// (no flag or setting ever changed it), and the guarded ops' t interval
// at 1 − the study's stored alpha (model.CompareGuards). The
// recommendation's own interval and its refusals' stay unrecorded: a
// sequential look's is at a level no record shows. Study.UnmarshalJSON
// calls it: the one place a stored study is read.
func (r *Recommendation) oldLevels(search *SearchSettings) {
	if r == nil {
		return
	}
	rows := func(rs []SizeComparison) {
		for i := range rs {
			if rs[i].CILevel == 0 {
				rs[i].CILevel = vocab.DefaultConfidence
			}
		}
	}
	rows(r.PerSize)
	rows(r.Guards)
	for i := range r.Parts {
		if r.Parts[i].CILevel == 0 {
			r.Parts[i].CILevel = vocab.DefaultConfidence
		}
		rows(r.Parts[i].PerSize)
	}
	if search == nil || !(search.Alpha > 0 && search.Alpha < 1) {
		return
	}
	for i := range r.OpGuards {
		if r.OpGuards[i].CILevel == 0 {
			r.OpGuards[i].CILevel = CILevel(1 - search.Alpha)
		}
	}
}
