package search

// Guards across collectives: a recommended candidate that makes an op
// outside the workload, or one of its parts, significantly slower is
// refused.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// DefaultGuardLaunches is the launches per arm of each guarded op
// (docs/PERFORMANCE.md, "Guards across collectives").
const DefaultGuardLaunches = 8

// OpGuard is what the guard measured of one collective.
type OpGuard struct {
	Op nccl.Op
	// Result is the candidate against the baseline over Sizes (zero when
	// Failed says why the op could not be measured).
	Result model.GuardResult
	Sizes  []int64
	// Failed names the arm whose launch of the op failed, and why.
	Failed string
	// Refused: this op refused the recommendation (vocab.EndingOpRegression).
	Refused bool
}

// DefaultGuardOps are the collectives guarded when the user names none:
// every op outside the workload, none for a timed workload.
func DefaultGuardOps(w nccl.Workload) []nccl.Op {
	if w.Timed() {
		return nil
	}
	return w.OtherOps()
}

// guardReserve is the launches the guards need: both arms, every op.
func (o Options) guardReserve() int { return 2 * o.GuardLaunches * len(o.GuardOps) }

// guardPlanOps are the guarded ops whose defaults' plan a study reads.
func (o Options) guardPlanOps() []nccl.Op {
	if o.pastPlan {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(o.GuardOps), unreached)
}

// guardLeft is the launches still held back for the guards.
func (s *loop) guardLeft() int {
	if s.guardsDone {
		return 0
	}
	if len(s.refusedAt) > 0 {
		// After a refusal the next candidate's guard launches are owed afresh.
		return s.guardOwed()
	}
	return s.guardReserveUnmade()
}

// guardReserveUnmade is the guard reserve less the guard launches made.
func (s *loop) guardReserveUnmade() int {
	made := 0
	for _, t := range s.trials {
		for _, ls := range t.Guards {
			made += len(ls)
		}
		made += t.guardFailed
	}
	return max(0, s.opts.guardReserve()-made)
}

// GuardOpSizes are the sizes a guarded op is measured and judged at.
func (o Options) GuardOpSizes() []int64 {
	var out []int64
	for _, p := range o.Parts() {
		out = append(out, p.Band.Sizes()...)
	}
	return planSizes(out, o.Guard)
}

// OpSizes are the sizes a launch of op is scored over.
func (o Options) OpSizes(op nccl.Op) []int64 {
	if sizes := o.Parts().Sizes(op); len(sizes) > 0 {
		return sizes
	}
	return o.GuardOpSizes()
}

// guard measures the guarded ops for a recommended candidate, B C B C per
// op, and refuses it when one, or one of the parts, is significantly slower.
func (s *loop) guard(ctx context.Context, res *Result) error {
	defer func() { s.guardsDone = true }()
	if s.work != nil && res.Winner != nil && res.Decision != nil {
		res.Parts = s.work.partResults(res.Baseline, res.Winner, s.opts.Stats)
	}
	if err := s.readCandidate(ctx, res); err != nil {
		return err
	}
	if err := s.topUpCalls(ctx, res); err != nil {
		return err
	}
	if res.Winner != nil && res.Decision != nil {
		// The top-ups added confirmation launches: judge the guard sizes again.
		s.judgeGuardSizes(res)
	}
	failed := map[nccl.Op]string{}
	if base, w := res.Baseline, res.Winner; res.Recommend && w != nil {
		n := s.opts.GuardLaunches
		for _, op := range s.opts.GuardOps {
			for failed[op] == "" && (len(base.Guards[op]) < n || len(w.Guards[op]) < n) {
				if s.seq+1 > s.opts.Budget-s.explainLeft() || s.outOfConfirmTime(1+s.inTime(s.explainLeft())) {
					break
				}
				t := nextArm(base, w, len(base.Guards[op]), len(w.Guards[op]))
				round := map[nccl.Op]model.Launch{}
				if err := s.launchOp(ctx, t, vocab.PhaseGuard, true, op, round); err != nil {
					return err
				}
				ml, ok := round[op]
				if !ok {
					t.guardFailed++
					failed[op] = armName(t, base) + " failed"
					continue
				}
				if t.Guards == nil {
					t.Guards = map[nccl.Op][]model.Launch{}
				}
				t.Guards[op] = append(t.Guards[op], ml)
			}
			if failed[op] == "" && (len(base.Guards[op]) < 2 || len(w.Guards[op]) < 2) {
				// A guard that cannot judge must not let the candidate through.
				failed[op] = "the budget or --time left too few launches to measure it"
			}
		}
	}
	s.judgeGuards(res, failed)
	s.refuseSlowPart(res)
	return s.checkExact(ctx, res)
}

// Safe, for a call the process makes: every (op, size) the candidate may
// change must be shown not slower by CallMargin, its one-sided upper
// bound below 1+CallMargin, at up to callLooks looks at alpha/callLooks
// each. Refusing only what is significantly slower let a 7.4 % slower
// call through in 2 of 100 studies.
const (
	// CallMargin is the slowdown a call must be shown to stay under to be
	// shipped: 5 %, the line past which a slower op is unsafe in the
	// project's quality tables.
	CallMargin = 0.05
	// callLooks is how many times the calls' bounds are looked at: after
	// GuardLaunches, 2× and 3× GuardLaunches launches per arm.
	callLooks = 3
)

// topUpCalls gives a timed workload's calls up to callLooks ×
// GuardLaunches launches per arm while a call is undecided; the decision
// stands, the rounds only judge the calls.
func (s *loop) topUpCalls(ctx context.Context, res *Result) error {
	if s.work == nil || !s.opts.Parts().Timed() || !res.Recommend || res.Winner == nil {
		return nil
	}
	base, w := res.Baseline, res.Winner
	for look := 1; look <= callLooks; look++ {
		n := look * s.opts.GuardLaunches
		for len(base.Confirm) < n || len(w.Confirm) < n {
			// Out of budget or --time, an undecided call refuses the candidate.
			if s.seq+s.cost() > s.opts.Budget-s.heldBack() || s.outOfConfirmTime(2*s.cost()+s.inTime(s.heldBack())) {
				res.Parts = s.work.partResults(base, w, s.opts.Stats)
				return nil
			}
			t := nextArm(base, w, len(base.Confirm), len(w.Confirm))
			if err := s.launch(ctx, t, vocab.PhaseConfirm, true); err != nil {
				return err
			}
			switch {
			case t == base && !t.State.Usable():
				return fmt.Errorf("%w during confirmation: %s", ErrBaselineFailed, base.Reason)
			case !t.State.Usable():
				refuse(res, vocab.EndingCandidateFailed, "the candidate %s failed during confirmation (%s); keep NCCL's defaults",
					w.Config, w.Reason)
				return nil
			}
		}
		res.Parts = s.work.partResults(base, w, s.opts.Stats)
		if slower, unshown := s.callVerdicts(res); !unshown || slower {
			return nil
		}
	}
	return nil
}

// readCandidate makes the recommended candidate's explain launch before
// its calls are judged, when one is not yet shown safe: a call NCCL runs
// alike under both arms is then equal by rule instead of measured.
func (s *loop) readCandidate(ctx context.Context, res *Result) error {
	if !res.Recommend || res.Winner == nil || s.work == nil || !s.opts.Parts().Timed() {
		return nil
	}
	if _, unshown := s.callVerdicts(res); !unshown {
		return nil
	}
	return s.readWinnerPlan(ctx, res)
}

// readWinnerPlan makes the recommended candidate's explain launch now.
func (s *loop) readWinnerPlan(ctx context.Context, res *Result) error {
	w := res.Winner
	if !s.plan.read() || s.plan.logged[w] || len(s.plan.uncertainOps(w.Config)) == 0 {
		return nil
	}
	// The room is what every reserve but this launch holds back; --time is
	// asked without recording a cut.
	held := s.heldBack() - s.candidateExplainLeft()
	if s.seq+s.cost() > s.opts.Budget-held || s.pastTime(s.cost()+s.inTime(held)) {
		return nil
	}
	if err := s.launch(ctx, w, vocab.PhaseExplain, false); err != nil {
		return err
	}
	s.candidateRead, s.readEarly = true, true
	return nil
}

// callInputs are the guard inputs of a timed workload's calls that the
// candidate may change, each with the index of its res.Parts.
func (s *loop) callInputs(res *Result) ([]model.GuardInput, []int) {
	if !s.opts.Parts().Timed() {
		return nil, nil
	}
	base, w := res.Baseline, res.Winner
	var in []model.GuardInput
	var idx []int
	for i, p := range res.Parts {
		at := p.Part.Band.Sizes()
		if s.plan.samePlanAt(base.Config, w.Config, p.Part.Op, at) || !calledAt(p.Part) {
			continue
		}
		in = append(in, s.callInput(p.Part.String(), base.ConfirmOf(p.Part.Op), w.ConfirmOf(p.Part.Op), at...))
		idx = append(idx, i)
	}
	return in, idx
}

// calledAt reports whether the process calls p at the size it is measured
// at; otherwise checkExact judges it.
func calledAt(p nccl.Part) bool {
	return len(p.Logged) == 0 || slices.Contains(p.Logged, p.Band.Min)
}

// callVerdicts says whether a call is significantly slower, and whether
// one is not shown safe.
func (s *loop) callVerdicts(res *Result) (slower, unshown bool) {
	in, _ := s.callInputs(res)
	for _, r := range model.CompareGuards(in, s.opts.Stats) {
		_, unsafe := unsafeCall(r)
		slower = slower || r.Slower
		unshown = unshown || unsafe || r.Slower
	}
	return slower, unshown
}

// unsafeCall is the worst size of r not shown safe.
func unsafeCall(r model.GuardResult) (model.SizeGuard, bool) {
	var worst model.SizeGuard
	ok := false
	for _, sg := range r.Sizes {
		if sg.Upper < 1+CallMargin {
			continue
		}
		if !ok || math.IsNaN(sg.Upper) || sg.Upper > worst.Upper {
			worst, ok = sg, true
		}
	}
	return worst, ok
}

// who says what a guard input of judgeGuards is, by index.
type who struct {
	part bool
	i    int
}

// judgeGuards tests, as one family (Holm), the guarded ops and a timed
// workload's calls, and refuses the recommendation for the worst one
// significantly slower, or for a guarded op it fails.
func (s *loop) judgeGuards(res *Result, failed map[nccl.Op]string) {
	if !res.Recommend || res.Winner == nil {
		return
	}
	base, w := res.Baseline, res.Winner
	sizes := s.opts.GuardOpSizes()
	var in []model.GuardInput
	var whos []who
	for _, op := range s.opts.GuardOps {
		if failed[op] != "" {
			res.OpGuards = append(res.OpGuards, OpGuard{Op: op, Sizes: sizes, Failed: failed[op]})
			continue
		}
		in = append(in, model.GuardInput{Name: string(op), Baseline: base.Guards[op], Candidate: w.Guards[op], Sizes: sizes})
		whos = append(whos, who{false, len(res.OpGuards)})
		res.OpGuards = append(res.OpGuards, OpGuard{Op: op, Sizes: sizes})
	}
	calls, callIdx := s.callInputs(res)
	in = append(in, calls...)
	for _, i := range callIdx {
		whos = append(whos, who{true, i})
	}
	worst, worstSpeedup := -1, 0.0
	results := model.CompareGuards(in, s.opts.Stats)
	for k, r := range results {
		if !whos[k].part {
			res.OpGuards[whos[k].i].Result = r
		}
		if r.Slower && (worst < 0 || r.WorstSpeedup < worstSpeedup) {
			worst, worstSpeedup = k, r.WorstSpeedup
		}
	}
	for i, g := range res.OpGuards {
		if strings.HasPrefix(g.Failed, "the candidate failed") || strings.HasPrefix(g.Failed, "the budget") {
			res.OpGuards[i].Refused = true
			why := ": " + g.Failed
			if g.Failed == "the candidate failed" {
				why = " fails with it"
			}
			refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but %s%s; keep NCCL's defaults", w.Config, g.Op, why)
			return
		}
	}
	if worst < 0 {
		s.refuseUnshownCall(res, results, whos)
		return
	}
	r := results[worst]
	if wh := whos[worst]; wh.part {
		res.Parts[wh.i].Refused = true
		refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but significantly slower for its call %s at %s (%+.1f%% time, p=%.2g at Holm's level %.2g%s); keep NCCL's defaults",
			w.Config, res.Parts[wh.i].Part, nccl.FormatSize(r.Worst), 100*(1/r.WorstSpeedup-1), r.P, r.Level, s.rareCallAdvice(res.Parts[wh.i].Part.Calls))
		return
	}
	g := &res.OpGuards[whos[worst].i]
	g.Refused = true
	refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but significantly slower for %s at %s (%+.1f%% time, p=%.2g at Holm's level %.2g; %+.1f%% over %s); keep NCCL's defaults, or leave %s out of --guard-ops if this process never calls it",
		w.Config, g.Op, nccl.FormatSize(r.Worst), 100*(1/r.WorstSpeedup-1), r.P, r.Level, 100*(1/r.Speedup-1), sizesText(g.Sizes), g.Op)
}

// refuseUnshownCall refuses a candidate for the call made most often
// among those its guard result does not show safe.
func (s *loop) refuseUnshownCall(res *Result, results []model.GuardResult, whos []who) {
	type unshown struct {
		k  int
		sg model.SizeGuard
	}
	var calls []unshown
	for k, r := range results {
		if !whos[k].part {
			continue
		}
		if sg, ok := unsafeCall(r); ok {
			calls = append(calls, unshown{k, sg})
		}
	}
	if len(calls) == 0 {
		return
	}
	partOf := func(c unshown) *PartResult { return &res.Parts[whos[c.k].i] }
	worst := slices.MaxFunc(calls, func(a, b unshown) int {
		return cmp.Or(cmp.Compare(partOf(a).Part.Calls, partOf(b).Part.Calls), cmp.Compare(b.k, a.k))
	})
	counts := []float64{partOf(worst).Part.Calls}
	var others []string
	for _, c := range calls {
		if p := partOf(c); c.k != worst.k {
			// Not shown safe either, but no site of the refusal.
			p.NotShownSafe = true
			others = append(others, p.Part.String())
			counts = append(counts, p.Part.Calls)
		}
	}
	// Every one rare, or no advice: taking one out frees nothing while
	// another holds the candidate back.
	advice := s.rareCallAdvice(counts...)
	also := ""
	if len(others) > 0 {
		also = "; nor are " + strings.Join(others, ", ")
	}
	p, r, sg := partOf(worst), results[worst.k], worst.sg
	p.Refused, p.NotShownSafe = true, true
	refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but not shown safe for its call %s at %s (%+.1f%% time, upper bound %+.1f%% after %d launches per arm; safe needs it under %+.0f%%%s%s); keep NCCL's defaults, or %s to measure it longer",
		res.Winner.Config, p.Part, nccl.FormatSize(sg.Bytes), 100*(1/sg.Speedup-1), 100*(sg.Upper-1), min(r.BaselineN, r.CandidateN), 100*CallMargin, also, advice, s.raiseLimit())
}

// raiseLimit is the advice for a call left unshown when the launches ran
// out.
func (s *loop) raiseLimit() string {
	if s.timeCut {
		return "raise --time"
	}
	return "raise --budget"
}

// rareCallAdvice is what a refusal for calls not shown safe adds when each
// is under 1 % of the workload's calls: the study never drops one itself.
// It goes inside the refusal's parenthesis, before "; keep …", which
// stored.RefusalLines drops.
func (s *loop) rareCallAdvice(calls ...float64) string {
	var total, sum float64
	for _, q := range s.opts.Parts() {
		total += q.Calls
	}
	for _, c := range calls {
		if c <= 0 || 100*c >= total {
			return ""
		}
		sum += c
	}
	// %g writes a million calls as 1e+06: counts are written in full.
	count := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	if len(calls) > 1 {
		return fmt.Sprintf("; they are %s of the log's %s calls: if the process makes them only once, at start-up, take them out of the workload's `calls:` list (their `chose:` entries keep them in the tuner CSV) and search again", count(sum), count(total))
	}
	return fmt.Sprintf("; it is %s of the log's %s calls: if the process makes it only once, at start-up, take it out of the workload's `calls:` list (its `chose:` entry keeps it in the tuner CSV) and search again", count(sum), count(total))
}

// refuseSlowPart refuses a recommendation that makes one of a hand
// workload's parts significantly slower.
func (s *loop) refuseSlowPart(res *Result) {
	if s.opts.Parts().Timed() {
		return
	}
	for i, p := range res.Parts {
		if !res.Recommend || !p.Comparison.Slower {
			continue
		}
		res.Parts[i].Refused = true
		worst, ws := int64(0), 0.0
		for _, b := range p.Part.Band.Sizes() {
			c := model.Compare(res.Baseline.ConfirmOf(p.Part.Op), res.Winner.ConfirmOf(p.Part.Op), []int64{b}, s.opts.Stats)
			if worst == 0 || c.Speedup < ws {
				worst, ws = b, c.Speedup
			}
		}
		refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but significantly slower for its part %s (%+.1f%% time, p=%.3g; worst at %s: %+.1f%%); keep NCCL's defaults or change the part's weight",
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
