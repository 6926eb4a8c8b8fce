package search

// A workload of several parts (op, band, weight): how one measurement of
// a config is made of one launch per op, and how those launches are
// scored together.

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
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
	if len(o.Workload) > 1 && o.Band == (nccl.Band{}) {
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
// round: one launch per op of the workload) as one model.Launch: each
// op's sizes under their own key (opKey) and the round's score, the
// weighted geometric combination of the parts' band scores, under
// scoreKey. Ranking, planning and the confirmation's test then read the
// round's score as a one-size band; the parts' and guards' comparisons
// read the op's keys. A one-part workload is not encoded at all: its
// launches are today's launches, scored over the band's sizes.
const (
	// opShift puts the op's index above every size nccl-tests can send.
	opShift = 48
	// scoreKey holds a round's score; no op key reaches it.
	scoreKey int64 = 1 << 62
)

// opKey is the key of op's size in a round.
func opKey(op nccl.Op, size int64) int64 {
	return int64(slices.Index(nccl.Ops, op.OrAllReduce())+1)<<opShift | size
}

// keyOp decodes a key: the op and the size; op is "" for a plain size.
func keyOp(key int64) (nccl.Op, int64) {
	i := int(key >> opShift)
	if i <= 0 || i > len(nccl.Ops) {
		return "", key
	}
	return nccl.Ops[i-1], key & (1<<opShift - 1)
}

// opKeys are op's keys for sizes.
func opKeys(op nccl.Op, sizes []int64) []int64 {
	out := make([]int64, len(sizes))
	for i, s := range sizes {
		out[i] = opKey(op, s)
	}
	return out
}

// workload is how a study of several parts scores a round.
type workload struct {
	parts   nccl.Workload
	weights []float64
	ops     []nccl.Op
	// partKeys are each part's keys, in the parts' order.
	partKeys [][]int64
}

// newWorkload is nil for one part: the study is today's, unchanged.
func newWorkload(parts nccl.Workload) *workload {
	if len(parts) < 2 {
		return nil
	}
	w := &workload{parts: parts, weights: parts.Weights(), ops: parts.Ops()}
	for _, p := range parts {
		w.partKeys = append(w.partKeys, opKeys(p.Op, p.Band.Sizes()))
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
func (w *workload) roundScore(round model.Launch) (float64, error) {
	timed := w.parts.Timed()
	sum := 0.0
	for i, p := range w.parts {
		sc, err := bandScore(round, w.partKeys[i])
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

// timedPartKeys are the keys of a timed workload of several parts' calls,
// one (op, size) each, which exploration also keeps an eye on as it does
// on guard sizes (ranking.guard): a config that looks slower at a size
// the process calls ranks after the others. None otherwise.
func (w *workload) timedPartKeys() []int64 {
	if w == nil || !w.parts.Timed() {
		return nil
	}
	var out []int64
	for _, k := range w.partKeys {
		out = append(out, k...)
	}
	return out
}

// merge makes one round of the launches of each op (a launch's sizes
// under the op's keys) and its score, which the round also holds under
// scoreKey.
func (w *workload) merge(byOp map[nccl.Op]model.Launch) (model.Launch, float64, error) {
	round := model.Launch{Times: map[int64][]float64{}}
	for _, op := range w.ops {
		l, ok := byOp[op]
		if !ok {
			return round, 0, fmt.Errorf("the round has no %s launch", op)
		}
		for size, xs := range l.Times {
			round.Times[opKey(op, size)] = xs
		}
	}
	sc, err := w.roundScore(round)
	if err != nil {
		return round, 0, err
	}
	round.Times[scoreKey] = []float64{sc}
	return round, sc, nil
}

// Split is the launches of one op out of rounds (the op's sizes under
// their own keys again), for per-part tables and comparisons. Launches of
// a one-part study are returned as they are.
func Split(rounds []model.Launch, op nccl.Op) []model.Launch {
	out := make([]model.Launch, 0, len(rounds))
	for _, r := range rounds {
		l := model.Launch{Times: map[int64][]float64{}}
		encoded := false
		for k, xs := range r.Times {
			o, size := keyOp(k)
			if o == "" {
				continue
			}
			encoded = true
			if o == op.OrAllReduce() {
				l.Times[size] = xs
			}
		}
		if !encoded {
			l = r
		}
		out = append(out, l)
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
	// the recommendation (EndingOpRegression); NotShownSafe: a timed
	// call refused because it was not shown safe (refuseUnshownCall), not
	// because it was shown slower.
	Refused, NotShownSafe bool
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
			Comparison: model.Compare(Split(base.Confirm, p.Op), Split(cand.Confirm, p.Op), p.Band.Sizes(), stats)}
	}
	return out
}

// guardKeys are the guard sizes of every op of the workload.
func (w *workload) guardKeys(guard []int64) []int64 {
	var out []int64
	for _, op := range w.ops {
		out = append(out, opKeys(op, guard)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FormatKey writes a size or an op's size ("alltoall 8M").
func FormatKey(key int64) string {
	op, size := keyOp(key)
	if op == "" {
		return nccl.FormatSize(size)
	}
	return string(op) + " " + nccl.FormatSize(size)
}

// ScoredKeys are the keys a study scores a measurement over: the band's
// sizes, or for a workload of several parts the key that holds a round's
// score (a trial's Score over them is its objective).
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
}

// Regroup rebuilds t's measurements from its stored launches as the study
// made them: a one-part study's scored launches one by one; a workload's
// as rounds of one launch per op (a round cut short by a failure or an
// interruption is dropped); guard launches under their op.
func (o Options) Regroup(t *Trial, ls []StoredLaunch) {
	w := newWorkload(o.Parts())
	var pending map[nccl.Op]model.Launch
	phase := ""
	for _, l := range ls {
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
		case !l.Scored:
			if l.Failed {
				pending = nil // the round it belonged to is incomplete
			}
			continue
		}
		if w == nil {
			t.add(l.Phase, l.Launch, l.ScoreUS)
			continue
		}
		if pending == nil || phase != l.Phase {
			pending, phase = map[nccl.Op]model.Launch{}, l.Phase
		}
		pending[l.Op.OrAllReduce()] = l.Launch
		if len(pending) < len(w.ops) {
			continue
		}
		if round, sc, err := w.merge(pending); err == nil {
			t.add(phase, round, sc)
		}
		pending = nil
	}
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
