package store

import "github.com/nccltune/nccltune/internal/vocab"

// CILevel is the confidence a stored interval was taken at: 0.95 for a
// fixed-size comparison, 1 − the look's level at a sequential look, 1 −
// alpha for the guarded ops. 0 is unrecorded (an old record).
type CILevel float64

// Label is how every printer names an interval taken at l: "95% CI",
// "99.26% CI", "CI at an unrecorded level".
func (l CILevel) Label() string {
	if !(l > 0 && l < 1) {
		return "CI at an unrecorded level"
	}
	return vocab.Percent(float64(l)) + "% CI"
}

// RowsCILevel is the level a table's rows share, said once in its header;
// 0 when they differ or one is unrecorded.
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
// levels were the level they provably had: per-size rows and parts at
// vocab.DefaultConfidence (never configurable), guarded ops at 1 − the
// stored alpha. A sequential look's level is unknown, so the
// recommendation's own interval and its refusals' stay unrecorded.
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
