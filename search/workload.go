package search

// A workload of several parts (op, band, weight): how one measurement of
// a config is made of one launch per op, and how those launches are
// scored together.

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// Parts is the study's workload: Options.Workload, or the one part of
// the band (all-reduce unless Op says otherwise) with weight 1.
func (o Options) Parts() nccl.Workload {
	if len(o.Workload) > 0 {
		return o.Workload
	}
	return nccl.Workload{{Op: o.Op.OrAllReduce(), Band: o.Band, Weight: 1}}
}

// withHull is o with Band the workload's hull when a workload of several
// parts leaves it unset (Run and Reconfirm).
func (o Options) withHull() Options {
	if o.Workload.ScoredByRounds() && o.Band == (nccl.Band{}) {
		o.Band = Hull(o.Workload)
	}
	return o
}

// Hull is the smallest band holding every part's band: what a study of
// several parts stores and shows as its band.
func Hull(w nccl.Workload) nccl.Band {
	var b nccl.Band
	for i, p := range w {
		if i == 0 || p.Band.Min < b.Min {
			b.Min = p.Band.Min
		}
		if p.Band.Max > b.Max {
			b.Max = p.Band.Max
		}
	}
	return b
}

// A workload of several parts keeps each measurement of a config (a
// round: one launch per op of the workload) as the launch of each op, its
// sizes keyed by bytes as every launch's (Trial.exploreOps, confirmOps),
// and the round's score, the combination of the parts' band scores
// (roundScore), as a launch of one key, scoreKey (scoreLaunch). Ranking,
// planning and the confirmation's test read that launch as a band of one
// size; the parts' and guards' comparisons read the op's own launches
// (Trial.ConfirmOf). A one-part workload has no rounds: its launches are
// today's launches, scored over the band's sizes.

// scoreKey is the one key of a round's score launch, the band of one
// size the statistics rank and test a workload by (Options.ScoredKeys).
// It is no message size: no launch of an op is kept with it.
const scoreKey int64 = 1 << 62

// scoreLaunch is a round's score as the launch the statistics read.
func scoreLaunch(score float64) model.Launch {
	return model.Launch{Times: map[int64][]float64{scoreKey: {score}}}
}

// opSize is one size of one op: a guard size, or a timed workload's call,
// as exploration watches it. op is "" for a one-part study, whose launches
// are of its one op.
type opSize struct {
	op    nccl.Op
	bytes int64
}

// String is the size, after its op where there is one ("alltoall 8M").
func (k opSize) String() string {
	if k.op == "" {
		return nccl.FormatSize(k.bytes)
	}
	return string(k.op) + " " + nccl.FormatSize(k.bytes)
}

// workload is how a study of several parts scores a round.
type workload struct {
	parts   nccl.Workload
	weights []float64
	ops     []nccl.Op
	// partSizes are each part's sizes, in the parts' order.
	partSizes [][]int64
}

// newWorkload is nil for one part: the study is today's, unchanged.
func newWorkload(parts nccl.Workload) *workload {
	if !parts.ScoredByRounds() {
		return nil
	}
	w := &workload{parts: parts, weights: parts.Weights(), ops: parts.Ops()}
	for _, p := range parts {
		w.partSizes = append(w.partSizes, p.Band.Sizes())
	}
	return w
}

// roundScore is a round's objective, or an error naming the part whose
// sizes the round lacks. A timed workload's (calls, nccl.ParseCall) is the
// time a step spends in its calls, Σ callsᵢ × timeᵢ in µs (timeᵢ the
// median at the part's one size): linear, so a part weighs what it costs
// the process, and a call made 80 times at 2M counts for its time, not
// for its share of the calls. A hand workload's (--part) is
// exp Σ wᵢ log scoreᵢ over the parts' band scores (each the geometric
// mean of the part's per-size medians), its weights normalised.
func (w *workload) roundScore(round map[nccl.Op]model.Launch) (float64, error) {
	for _, op := range w.ops {
		if _, ok := round[op]; !ok {
			return 0, fmt.Errorf("the round has no %s launch", op)
		}
	}
	timed := w.parts.Timed()
	sum := 0.0
	for i, p := range w.parts {
		sc, err := model.LaunchScore(round[p.Op.OrAllReduce()], w.partSizes[i])
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		if timed {
			sum += p.Calls * sc
			continue
		}
		sum += w.weights[i] * math.Log(sc)
	}
	if timed {
		return sum, nil
	}
	return math.Exp(sum), nil
}

// timedCalls are a timed workload of several parts' calls, one (op, size)
// each, which exploration also keeps an eye on as it does on guard sizes
// (ranking.guard): a config that looks slower at a size the process calls
// ranks after the others. None otherwise.
func (w *workload) timedCalls() []opSize {
	if w == nil || !w.parts.Timed() {
		return nil
	}
	var out []opSize
	for i, p := range w.parts {
		for _, b := range w.partSizes[i] {
			out = append(out, opSize{p.Op.OrAllReduce(), b})
		}
	}
	return out
}

// PartResult is what the confirmation measured of one part.
type PartResult struct {
	Part nccl.Part
	// Weight is the part's normalised weight in the objective.
	Weight float64
	// Comparison is the candidate against the baseline over the part's
	// sizes, from the confirmation's launches of its op.
	Comparison model.Comparison
	// Refused: this part, slower by more than the minimum effect, refused
	// the recommendation (vocab.EndingOpRegression); NotShownSafe: a timed
	// call refused because it was not shown safe (refuseUnshownCall), not
	// because it was shown slower, or without Refused, another call not
	// shown safe beside the one that refused.
	Refused, NotShownSafe bool
	// RefusedAt is the size the process calls, off the power of two the
	// part is measured at, where the candidate was judged and refused
	// (checkExact); 0 when the part's own comparison refused it. The
	// part's interval is not that call's: on the real loopback a part
	// ×1.17 [1.08, 1.81] faster at 2M read "its upper bound is over the
	// margin" beside the refusal of its call at 2048000 bytes.
	RefusedAt int64
}

// partResults compares the confirmation launches part by part; nil for a
// one-part study (its Decision is the part's).
func (w *workload) partResults(base, cand *Trial, stats model.Options) []PartResult {
	if w == nil {
		return nil
	}
	out := make([]PartResult, len(w.parts))
	for i, p := range w.parts {
		out[i] = PartResult{Part: p, Weight: w.weights[i],
			Comparison: model.Compare(base.ConfirmOf(p.Op), cand.ConfirmOf(p.Op), p.Band.Sizes(), stats)}
	}
	return out
}

// guardSizes are the guard sizes of every op of the workload, ops in
// nccl.Ops' order, each op's sizes in increasing order.
func (w *workload) guardSizes(guard []int64) []opSize {
	var out []opSize
	for _, op := range w.ops {
		for _, g := range guard {
			out = append(out, opSize{op.OrAllReduce(), g})
		}
	}
	slices.SortFunc(out, func(a, b opSize) int {
		if c := cmp.Compare(slices.Index(nccl.Ops, a.op), slices.Index(nccl.Ops, b.op)); c != 0 {
			return c
		}
		return cmp.Compare(a.bytes, b.bytes)
	})
	return out
}

// ScoredKeys are the keys a study scores a measurement over: the band's
// sizes, or for a workload of several parts the one key of its rounds'
// score launches (a trial's Score over them is its objective).
func (o Options) ScoredKeys() []int64 {
	if newWorkload(o.Parts()) == nil {
		return o.Band.Sizes()
	}
	return []int64{scoreKey}
}

// StoredLaunch is one launch of a trial as a resumed study reads it back
// from the store, in the order it was made.
type StoredLaunch struct {
	Op    nccl.Op
	Phase string
	// Scored: the launch ran and was one of the trial's measurements (or,
	// for PhaseGuard, a guarded op's launch that ran).
	Scored bool
	// Failed: the launch did not run to a result (a failed guard launch
	// spends the guards' reserve).
	Failed bool
	Launch model.Launch
	// ScoreUS is the band score stored with the launch (the one Measure
	// made); 0 when it was not stored, and the launch is scored again.
	ScoreUS float64
	// Batch is the batch launch that measured it, nil for a launch of
	// its own (Trial.blockRanked reads it back).
	Batch *benchfmt.BatchMember
	// MinBytes and MaxBytes are the sizes it swept, and Debug says it was
	// a read of NCCL's plan: a launch at the calls' own sizes (PhaseExact)
	// is a measurement of its ladder when it ran and was not a read, and
	// Launch then holds it.
	MinBytes, MaxBytes int64
	Debug              bool
}

// Regroup rebuilds t's measurements from its stored launches as the study
// made them: a one-part study's scored launches one by one; a workload's
// as rounds of one launch per op (a round cut short by a failure or an
// interruption is dropped); guard launches under their op.
func (o Options) Regroup(t *Trial, ls []StoredLaunch) { o.regroup(t, ls, nil) }

// regroup is Regroup, the one rule that groups a workload's launches into
// rounds; done, when not nil, hears of each round kept, with the index in
// ls of the launch that completed it (Rounds).
func (o Options) regroup(t *Trial, ls []StoredLaunch, done func(Round)) {
	w := newWorkload(o.Parts())
	var pending map[nccl.Op]model.Launch
	phase := ""
	for i, l := range ls {
		if l.Phase != vocab.PhaseWarmup && l.Phase != vocab.PhasePlan {
			t.pastPlan = true
		}
		switch {
		case l.Phase == vocab.PhaseGuard && l.Scored:
			if t.Guards == nil {
				t.Guards = map[nccl.Op][]model.Launch{}
			}
			t.Guards[l.Op.OrAllReduce()] = append(t.Guards[l.Op.OrAllReduce()], l.Launch)
			continue
		case l.Phase == vocab.PhaseGuard:
			if l.Failed {
				t.guardFailed++
			}
			continue
		case l.Phase == vocab.PhaseExact && !l.Debug && !l.Failed && l.MaxBytes > 0:
			// Judged by measureExact alone, never a round of the trial.
			lad := exactLadder{op: o.Parts().LaunchOp(l.Op), lo: l.MinBytes, hi: l.MaxBytes}
			t.exact = append(t.exact, exactRun{ladder: lad, launch: l.Launch})
			continue
		case !l.Scored:
			if l.Failed {
				pending = nil // the round it belonged to is incomplete
			}
			continue
		}
		if w == nil {
			t.add(l.Phase, l.Launch, l.ScoreUS)
			t.addBlock(l.Batch)
			continue
		}
		if pending == nil || phase != l.Phase {
			pending, phase = map[nccl.Op]model.Launch{}, l.Phase
		}
		pending[l.Op.OrAllReduce()] = l.Launch
		if len(pending) < len(w.ops) {
			continue
		}
		if sc, err := w.roundScore(pending); err == nil {
			t.addRound(phase, pending, sc)
			t.addBlock(l.Batch)
			if done != nil {
				done(Round{Phase: phase, ScoreUS: sc, Last: i})
			}
		}
		pending = nil
	}
}

// Round is one complete round of a trial of a study of several parts.
type Round struct {
	Phase string
	// ScoreUS is the round's objective (roundScore).
	ScoreUS float64
	// Last is the index, in the launches read, of the launch that
	// completed the round: where a figure of the search in time puts it.
	Last int
}

// Rounds are a trial's complete rounds in the order they were made, as
// Regroup keeps them (RoundScores' scores, with where each completed); ok
// is false for a one-part study, whose launches are scored one by one.
func (o Options) Rounds(ls []StoredLaunch) (rounds []Round, ok bool) {
	if newWorkload(o.Parts()) == nil {
		return nil, false
	}
	o.regroup(&Trial{}, ls, func(r Round) { rounds = append(rounds, r) })
	return rounds, true
}

// RoundScores are the objective of each complete round of a trial of a
// study of several parts, exploration's and confirmation's, each in the
// order they were made: the scores the search ranked and tested the trial
// by (roundScore), rebuilt from its stored launches as resume rebuilds
// them (Regroup). One op's launch alone scores that op's sizes, not the
// objective. ok is false for a one-part study, whose launches are scored
// one by one; a trial of several parts with no complete round has none.
func (o Options) RoundScores(ls []StoredLaunch) (explore, confirm []float64, ok bool) {
	rounds, ok := o.Rounds(ls)
	for _, r := range rounds {
		if r.Phase == vocab.PhaseConfirm { // as addRound splits them
			confirm = append(confirm, r.ScoreUS)
			continue
		}
		explore = append(explore, r.ScoreUS)
	}
	return explore, confirm, ok
}

// add keeps one measurement of t: a confirmation's, or exploration's
// with its score (0: not known, scored when needed).
func (t *Trial) add(phase string, l model.Launch, scoreUS float64) {
	switch {
	case phase == vocab.PhaseConfirm:
		t.Confirm = append(t.Confirm, l)
	case scoreUS > 0:
		t.addExplore(l, scoreUS)
	default:
		t.addExplore(l, math.NaN())
	}
}
