package search

// Guards across collectives: once the workload's confirmation recommends
// a candidate, the collectives outside the workload are measured for it,
// interleaved with the baseline, and a candidate that makes one of them
// (or one of the workload's own parts) significantly slower is refused.

import (
	"context"
	"fmt"
	"sort"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// DefaultGuardLaunches is the launches per arm of each guarded op. On the
// simulated 4-rank loopback, whose one-channel all-reduce winner makes
// broadcast 7.9 % slower from 1M up (docs/PERFORMANCE.md, "Guards across
// collectives"), 4 per arm refused it in 68 of 100 seeds, 8 in 99 and
// 12 in 100: 8 is the fewest that keeps a truly > 5 % slower op out of
// 95 of 100 recommendations (95 of 100 in the re-runs after issue 30's
// changes to the one-part study: at the bar).
const DefaultGuardLaunches = 8

// EndingOpRegression: faster for the workload, but significantly slower,
// by more than the minimum effect, for a guarded op or one of the
// workload's parts (or it fails a guarded op).
const EndingOpRegression = "op-regression"

// OpGuard is what the guard measured of one collective outside the
// workload.
type OpGuard struct {
	Op nccl.Op
	// Result is the candidate against the baseline over Sizes (zero when
	// the op could not be measured: Failed says why).
	Result model.GuardResult
	Sizes  []int64
	// Failed names the arm whose launch of the op failed, and why.
	Failed string
	// Refused: this op refused the recommendation (EndingOpRegression).
	Refused bool
}

// DefaultGuardOps are the collectives guarded when the user names none:
// every op of nccl.Ops outside the workload. NCCL's channel and CTA caps
// reach every collective; a list reaches those NCCL's tuner plans (and
// send/recv through their channels).
func DefaultGuardOps(w nccl.Workload) []nccl.Op { return w.OtherOps() }

// guardReserve is the launches the guards need: both arms, every op.
func (o Options) guardReserve() int { return 2 * o.GuardLaunches * len(o.GuardOps) }

// guardLeft is the launches still held back for the guards: none once
// they were run or the confirmation kept the baseline.
func (s *loop) guardLeft() int {
	if s.guardsDone {
		return 0
	}
	return s.guardReserveUnmade()
}

// guardReserveUnmade is the guard reserve less the guard launches made,
// whether or not the guards are still owed: at the end of a study it is
// what the reserve kept from the confirmation and never spent.
func (s *loop) guardReserveUnmade() int {
	if len(s.opts.GuardOps) == 0 {
		return 0
	}
	made := 0
	for _, t := range s.trials {
		for _, ls := range t.Guards {
			made += len(ls)
		}
		made += t.guardFailed
	}
	return max(0, s.opts.guardReserve()-made)
}

// GuardOpSizes are the sizes a guarded op is measured and judged at: the
// workload's sizes and the guard sizes.
func (o Options) GuardOpSizes() []int64 {
	set := map[int64]bool{}
	for _, p := range o.Parts() {
		for _, b := range p.Band.Sizes() {
			set[b] = true
		}
	}
	for _, g := range o.Guard {
		set[g] = true
	}
	out := make([]int64, 0, len(set))
	for b := range set {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// OpSizes are the sizes a launch of op is scored over: its parts' sizes,
// or for a guarded op GuardOpSizes.
func (o Options) OpSizes(op nccl.Op) []int64 {
	if sizes := o.Parts().Sizes(op); len(sizes) > 0 {
		return sizes
	}
	return o.GuardOpSizes()
}

// guard measures the guarded ops for a recommended candidate, B C B C per
// op, and refuses the recommendation when one is significantly slower by
// more than the minimum effect; it also refuses a candidate that makes one
// of the workload's own parts so. Nothing is measured when the
// confirmation kept the baseline.
func (s *loop) guard(ctx context.Context, res *Result) error {
	defer func() { s.guardsDone = true }()
	if s.work != nil && res.Winner != nil && res.Decision != nil {
		res.Parts = s.work.partResults(res.Baseline, res.Winner, s.opts.Stats)
	}
	if !res.Recommend || res.Winner == nil || len(s.opts.GuardOps) == 0 {
		s.refuseSlowPart(res)
		return nil
	}
	base, w := res.Baseline, res.Winner
	n := s.opts.GuardLaunches
	failed := map[nccl.Op]string{}
	for _, op := range s.opts.GuardOps {
		for failed[op] == "" && (len(base.Guards[op]) < n || len(w.Guards[op]) < n) {
			if s.seq+1 > s.opts.Budget-s.explainLeft() {
				break
			}
			t := w
			if len(base.Guards[op]) <= len(w.Guards[op]) {
				t = base
			}
			round := map[nccl.Op]model.Launch{}
			if err := s.launchOp(ctx, t, vocab.PhaseGuard, true, op, round); err != nil {
				return err
			}
			ml, ok := round[op]
			if !ok {
				t.guardFailed++
				who := "the candidate"
				if t == base {
					who = "the baseline"
				}
				failed[op] = who + " failed"
				continue
			}
			if t.Guards == nil {
				t.Guards = map[nccl.Op][]model.Launch{}
			}
			t.Guards[op] = append(t.Guards[op], ml)
		}
	}
	s.judgeGuards(res, failed)
	s.refuseSlowPart(res)
	return nil
}

// judgeGuards tests the guarded ops together (model.CompareGuards: Holm
// across them) and refuses the recommendation for the worst one that is
// significantly slower by more than the minimum effect, naming the op
// and the size where it fares worst. A candidate that fails a guarded op
// is refused too; a baseline that does leaves that op unjudged.
func (s *loop) judgeGuards(res *Result, failed map[nccl.Op]string) {
	base, w := res.Baseline, res.Winner
	sizes := s.opts.GuardOpSizes()
	var in []model.GuardInput
	var ops []nccl.Op
	for _, op := range s.opts.GuardOps {
		if failed[op] != "" {
			res.OpGuards = append(res.OpGuards, OpGuard{Op: op, Sizes: sizes, Failed: failed[op]})
			continue
		}
		in = append(in, model.GuardInput{Name: string(op), Baseline: base.Guards[op], Candidate: w.Guards[op], Sizes: sizes})
		ops = append(ops, op)
	}
	worst := -1
	for i, r := range model.CompareGuards(in, s.opts.Stats) {
		res.OpGuards = append(res.OpGuards, OpGuard{Op: ops[i], Result: r, Sizes: sizes})
		if r.Slower && (worst < 0 || r.WorstSpeedup < res.OpGuards[worst].Result.WorstSpeedup) {
			worst = len(res.OpGuards) - 1
		}
	}
	for i, g := range res.OpGuards {
		if g.Failed == "the candidate failed" && res.Recommend {
			res.OpGuards[i].Refused = true
			res.Recommend, res.Ending = false, EndingOpRegression
			res.Reason = fmt.Sprintf("%s is faster for the workload but %s fails with it; keep NCCL's defaults", w.Config, g.Op)
			return
		}
	}
	if worst >= 0 && res.Recommend {
		worst := &res.OpGuards[worst]
		worst.Refused = true
		r := worst.Result
		res.Recommend, res.Ending = false, EndingOpRegression
		res.Reason = fmt.Sprintf("%s is faster for the workload but significantly slower for %s at %s (%+.1f%% time, p=%.2g at Holm's level %.2g; %+.1f%% over %s); keep NCCL's defaults, or leave %s out of --guard-ops if this process never calls it",
			w.Config, worst.Op, nccl.FormatSize(r.Worst), 100*(1/r.WorstSpeedup-1), r.P, r.Level, 100*(1/r.Speedup-1), sizesText(worst.Sizes), worst.Op)
	}
}

// refuseSlowPart refuses a recommendation that makes one of the
// workload's parts significantly slower by more than the minimum effect
// (model.Compare's Slower over the part's sizes), though the workload as
// a whole gains: the parts are guarded as the other ops are.
func (s *loop) refuseSlowPart(res *Result) {
	for i, p := range res.Parts {
		if !res.Recommend || !p.Comparison.Slower {
			continue
		}
		res.Parts[i].Refused = true
		worst, ws := int64(0), 0.0
		for _, b := range p.Part.Band.Sizes() {
			c := model.Compare(Split(res.Baseline.Confirm, p.Part.Op), Split(res.Winner.Confirm, p.Part.Op), []int64{b}, s.opts.Stats)
			if worst == 0 || c.Speedup < ws {
				worst, ws = b, c.Speedup
			}
		}
		res.Recommend, res.Ending = false, EndingOpRegression
		res.Reason = fmt.Sprintf("%s is faster for the workload but significantly slower for its part %s (%+.1f%% time, p=%.3g; worst at %s: %+.1f%%); keep NCCL's defaults or change the part's weight",
			res.Winner.Config, p.Part, 100*(1/p.Comparison.Speedup-1), p.Comparison.P, nccl.FormatSize(worst), 100*(1/ws-1))
		return
	}
}

func sizesText(sizes []int64) string {
	if len(sizes) == 0 {
		return "no sizes"
	}
	return nccl.FormatSize(sizes[0]) + "-" + nccl.FormatSize(sizes[len(sizes)-1])
}
