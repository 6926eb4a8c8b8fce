package search

// A workload of several parts: one measurement is one launch per op.

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

// withHull is o with Band the workload's hull when it is unset.
func (o Options) withHull() Options {
	if o.Workload.ScoredByRounds() && o.Band == (nccl.Band{}) {
		o.Band = Hull(o.Workload)
	}
	return o
}

// Hull is the smallest band holding every part's band.
func Hull(w nccl.Workload) nccl.Band {
	var b nccl.Band
	for i, p := range w {
		if i == 0 || p.Band.Min < b.Min {
			b.Min = p.Band.Min
		}
		b.Max = max(b.Max, p.Band.Max)
	}
	return b
}

// A workload of several parts keeps each round's score (roundScore) as a
// launch of one key, scoreKey, which ranking and the confirmation read as a
// band of one size; the parts' comparisons read each op's own launches.

// scoreKey is the one key of a round's score launch; no message size.
const scoreKey int64 = 1 << 62

// scoreLaunch is a round's score as the launch the statistics read.
func scoreLaunch(score float64) model.Launch {
	return model.Launch{Times: map[int64][]float64{scoreKey: {score}}}
}

// opSize is one size of one op: a guard size, or a timed workload's call.
// op is "" for a one-part study.
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

// newWorkload is nil for one part.
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

// roundScore is a round's objective: for a timed workload the time a step
// spends in its calls, Σ callsᵢ × timeᵢ in µs, linear so that a part
// weighs what it costs the process (a call made 80 times at 2M counts for
// its time, not its share of calls); for a hand workload exp Σ wᵢ log
// scoreᵢ over the parts' band scores, weights normalised. err names the
// part whose sizes the round lacks.
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

// timedCalls are a timed workload's calls, watched as guard sizes are.
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
	// sizes.
	Comparison model.Comparison
	// Refused: this part refused the recommendation; NotShownSafe: a timed
	// call not shown safe (refuseUnshownCall), not shown slower.
	Refused, NotShownSafe bool
	// RefusedAt is the size the process calls, off the part's power of two,
	// where the candidate was refused (checkExact); 0 when the part's own
	// comparison refused it.
	RefusedAt int64
}

// partResults compares the confirmation launches part by part.
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

// guardSizes are the guard sizes of every op of the workload, in
// nccl.Ops' order, then by size.
func (w *workload) guardSizes(guard []int64) []opSize {
	var out []opSize
	for _, op := range w.ops {
		for _, g := range guard {
			out = append(out, opSize{op.OrAllReduce(), g})
		}
	}
	slices.SortFunc(out, func(a, b opSize) int {
		return cmp.Or(cmp.Compare(slices.Index(nccl.Ops, a.op), slices.Index(nccl.Ops, b.op)), cmp.Compare(a.bytes, b.bytes))
	})
	return out
}

// ScoredKeys are the keys a study scores a measurement over.
func (o Options) ScoredKeys() []int64 {
	if newWorkload(o.Parts()) == nil {
		return o.Band.Sizes()
	}
	return []int64{scoreKey}
}

// StoredLaunch is one launch of a trial as a resumed study reads it back.
type StoredLaunch struct {
	Op    nccl.Op
	Phase string
	// Scored: the launch ran and was one of the trial's measurements (or a
	// guarded op's launch that ran).
	Scored bool
	// Failed: the launch did not run to a result.
	Failed bool
	Launch model.Launch
	// ScoreUS is the band score stored with the launch; 0 when it was not
	// stored, and the launch is scored again.
	ScoreUS float64
	// Batch is the batch launch that measured it, nil for its own.
	Batch *benchfmt.BatchMember
	// MinBytes and MaxBytes are the sizes it swept, and Debug says it was
	// a read of NCCL's plan.
	MinBytes, MaxBytes int64
	Debug              bool
}

// Regroup rebuilds t's measurements from its stored launches as the study
// made them (a round cut short is dropped).
func (o Options) Regroup(t *Trial, ls []StoredLaunch) { o.regroup(t, ls, nil) }

// regroup is Regroup; done, when not nil, hears of each round kept.
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
	// completed the round.
	Last int
}

// Rounds are a trial's complete rounds in order; ok is false for a
// one-part study.
func (o Options) Rounds(ls []StoredLaunch) (rounds []Round, ok bool) {
	if newWorkload(o.Parts()) == nil {
		return nil, false
	}
	o.regroup(&Trial{}, ls, func(r Round) { rounds = append(rounds, r) })
	return rounds, true
}

// RoundScores are the objective of each complete round of a trial, as
// Regroup rebuilds them; ok is false for a one-part study.
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

// add keeps one measurement of t (scoreUS 0: scored when needed).
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
