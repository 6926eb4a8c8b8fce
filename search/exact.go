package search

// A timed workload's calls at their own sizes. Each call is measured at
// its nearest power of two, but NCCL may plan the called size otherwise,
// and two plans' times may stand in another ratio there (on the unseen
// probe a candidate 4.5 % faster at an 8M broadcast was 13.1 % slower at
// the 9701523 bytes the process called). Before a candidate is shipped,
// NCCL's plan is read at every such size for both arms (one debug launch
// per ladder of sizes sharing an odd part: nccl-tests -b lo -e hi -f 2).
// A call both arms run alike there is equal by rule; a call just under
// its power of two where each arm keeps its plan stands by its part's
// bound, widened (standsNear); every other one is measured at its own
// size and judged by the calls' rule, or the candidate is refused.

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// exactCall is one size a timed workload's process calls off the power of
// two its part is measured at.
type exactCall struct {
	part int // an index of Options.Parts
	op   nccl.Op
	// bytes is the size the process calls; at the one it is measured at.
	bytes, at int64
	// calls are the calls per step at bytes alone.
	calls float64
}

// exactLadder is the sizes one debug launch reads: nccl-tests -b lo -e hi
// -f 2 of op.
type exactLadder struct {
	op     nccl.Op
	lo, hi int64
}

// holds reports whether ladder l reads call c's size.
func (l exactLadder) holds(c exactCall) bool {
	return l.op == c.op && oddPart(l.lo) == oddPart(c.bytes)
}

// oddPart is b without its factors of two.
func oddPart(b int64) int64 { return b >> bits.TrailingZeros64(uint64(b)) }

// exactCalls are the calls of a timed workload off their power of two.
func (o Options) exactCalls() []exactCall {
	w := o.Parts()
	if !w.Timed() {
		return nil
	}
	var out []exactCall
	for i, p := range w {
		if _, planned := p.Op.PerFunction(); !planned {
			continue
		}
		for k, b := range p.Logged {
			// Below the smallest size nccl-tests runs on these ranks a
			// launch at the call's own size times nothing: such a call
			// stays judged at its power of two.
			if b != p.Band.Min && b >= p.Op.OrAllReduce().MinBytes(o.Ranks) {
				calls := p.Calls // a part stored before LoggedCalls was
				if len(p.LoggedCalls) == len(p.Logged) {
					calls = p.LoggedCalls[k]
				}
				out = append(out, exactCall{part: i, op: p.Op.OrAllReduce(), bytes: b, at: p.Band.Min, calls: calls})
			}
		}
	}
	return out
}

// exactLadders are the ladders that read calls' sizes.
func exactLadders(calls []exactCall) []exactLadder {
	var out []exactLadder
	for _, c := range calls {
		i := slices.IndexFunc(out, func(l exactLadder) bool { return l.holds(c) })
		if i < 0 {
			out = append(out, exactLadder{op: c.op, lo: c.bytes, hi: c.bytes})
			continue
		}
		out[i].lo, out[i].hi = min(out[i].lo, c.bytes), max(out[i].hi, c.bytes)
	}
	return out
}

// CallLadder is one launch that measures a timed workload's calls at
// their own sizes; verify --tuner-plugin measures with it too.
type CallLadder struct {
	Op     nccl.Op
	Lo, Hi int64
	// Calls are the sizes the process calls that it measures.
	Calls []int64
}

// CallLadders are the launches that measure o's calls at their own sizes.
func (o Options) CallLadders() []CallLadder {
	calls := o.exactCalls()
	var out []CallLadder
	for _, l := range exactLadders(calls) {
		c := CallLadder{Op: l.op, Lo: l.lo, Hi: l.hi}
		for _, x := range ladderCalls(calls, l) {
			c.Calls = append(c.Calls, x.bytes)
		}
		out = append(out, c)
	}
	return out
}

// Request is the launch of cfg over l, with NCCL's debug log when debug.
func (l CallLadder) Request(cfg nccl.Config, seq, trial int, debug bool) Request {
	return Request{Config: cfg, Seq: seq, Phase: vocab.PhaseExact, Trial: trial, Debug: debug, Op: l.Op, MinBytes: l.Lo, MaxBytes: l.Hi}
}

// exactReserve is what calls off the powers of two add to the default
// budget (TestCallsKeepTheirLooks).
func (o Options) exactReserve() int {
	return len(exactLadders(o.exactCalls())) * 2 * (1 + 2*o.GuardLaunches)
}

// exactFirst is the least of the calls' own-size check that a decision
// needs.
func (o Options) exactFirst() int {
	calls := o.exactCalls()
	n := 0
	for _, l := range exactLadders(calls) {
		n += 2
		if slices.ContainsFunc(ladderCalls(calls, l), func(c exactCall) bool { return !c.near() || c.widen() > 1+CallMargin/2 }) {
			n += 2 * o.GuardLaunches
		}
	}
	return n
}

// exactHeld is what the budget holds back for the calls' own sizes.
func (o Options) exactHeld() int {
	r := o.exactReserve()
	return max(0, min(r, o.Budget-(o.DefaultBudget()-r)))
}

// exactLeft is the launches still held back for the calls' own sizes.
func (s *loop) exactLeft() int {
	if s.exactDone {
		return 0
	}
	if len(s.refusedAt) > 0 {
		return s.exactOwed()
	}
	return s.opts.exactHeld()
}

// exactOwed is what a check of the calls' own sizes after a refusal owes
// before it can decide; holding the whole reserve again kept every
// confirmation after a refusal from starting.
func (s *loop) exactOwed() int {
	base := s.baseline()
	per := 1 + s.opts.GuardLaunches
	owed := 0
	for _, l := range exactLadders(s.opts.exactCalls()) {
		made := len(s.exactRuns[s.exactRunsKey(base, l)])
		if _, ok := s.exactRead[s.exactKey(base, l)]; ok {
			made++
		}
		owed += per + max(0, per-made)
	}
	return min(owed, s.opts.exactHeld())
}

// explainBeside is the other debug launches the budget holds back.
func (s *loop) explainBeside() int { return s.explainLeft() - s.exactLeft() }

// exactKey names one arm's read, or measurements, of one ladder.
func (s *loop) exactKey(t *Trial, l exactLadder) string {
	return fmt.Sprintf("%s|%s|%d-%d", t.Config.Canonical().Key(), l.op, l.lo, l.hi)
}

// exactRunsKey names one arm's measurements of one ladder (exactRuns).
func (s *loop) exactRunsKey(t *Trial, l exactLadder) string { return "m|" + s.exactKey(t, l) }

// checkExact judges res's candidate at the sizes its process calls off
// the powers of two (the file's comment).
func (s *loop) checkExact(ctx context.Context, res *Result) error {
	if !res.Recommend || res.Winner == nil || s.exactSkipped {
		return nil
	}
	base, w := res.Baseline, res.Winner
	// A call whose op the candidate's knobs leave alone at the powers of
	// two needs the defaults' plan at its own size to stand so too
	// (sameCoreAt); the others need both arms read.
	var need, noOp []exactCall
	for _, c := range s.opts.exactCalls() {
		if s.plan.sameCore(c.op, w.Config, base.Config) {
			noOp = append(noOp, c)
			continue
		}
		need = append(need, c)
	}
	noOpLads := exactLadders(noOp)
	if err := s.readExactLadders(ctx, []*Trial{base}, noOpLads); err != nil {
		return err
	}
	for _, c := range noOp {
		x, ok := planNear(s.exactRead[s.exactKey(base, ladderOf(noOpLads, c))], c.bytes)
		if ok && s.plan.sameCoreAt(c.op, w.Config, base.Config, c.bytes, x) {
			continue
		}
		need = append(need, c)
	}
	// A call near its power of two may stand by the part's measurement
	// there, which asks the candidate's plan: its explain launch, owed
	// anyway, is made now.
	if slices.ContainsFunc(need, func(c exactCall) bool { return s.mayStandNear(res, c) }) {
		if err := s.readWinnerPlan(ctx, res); err != nil {
			return err
		}
	}
	lads := exactLadders(need)
	if err := s.readExactLadders(ctx, []*Trial{base, w}, lads); err != nil {
		return err
	}
	var measure []exactCall
	for _, c := range need {
		bx, okB := planNear(s.exactRead[s.exactKey(base, ladderOf(lads, c))], c.bytes)
		cx, okC := planNear(s.exactRead[s.exactKey(w, ladderOf(lads, c))], c.bytes)
		// One plan under both, where every knob acts through what the
		// TUNING line shows: equal by rule (NCCL_CROSS_NIC, threads or
		// buffers change the time under the same plan).
		if okB && okC && bx == cx && s.tuningShows(c.op, base.Config) && s.tuningShows(c.op, w.Config) {
			continue
		}
		if okB && okC && s.standsNear(res, c, bx, cx) {
			continue
		}
		measure = append(measure, c)
	}
	if len(measure) == 0 {
		s.exactDone = true
		return nil
	}
	return s.measureExact(ctx, res, measure)
}

// near reports whether c's size is under its power of two and within
// CallMargin of it: a size just above one pays a whole slot more
// (TestNearIsBelowOnly).
func (c exactCall) near() bool {
	return c.bytes < c.at && float64(c.at) < (1+CallMargin)*float64(c.bytes)
}

// widen is the sizes' ratio.
func (c exactCall) widen() float64 { return float64(c.at) / float64(c.bytes) }

// nearBound is call c's part's bound at c.at widened by c.widen; ok false
// when c is not near or the part has no usable bound.
func (s *loop) nearBound(res *Result, c exactCall) (float64, bool) {
	if !c.near() || c.part >= len(s.opts.Parts()) {
		return 0, false
	}
	op := s.opts.Parts()[c.part].Op
	in := s.callInput(op.String(), res.Baseline.ConfirmOf(op), res.Winner.ConfirmOf(op), c.at)
	g := model.CompareGuards([]model.GuardInput{in}, s.opts.Stats)[0]
	if g.Slower || len(g.Sizes) != 1 || math.IsNaN(g.Sizes[0].Upper) {
		return 0, false
	}
	return g.Sizes[0].Upper * c.widen(), true
}

// mayStandNear reports whether call c can stand by its part's bound.
func (s *loop) mayStandNear(res *Result, c exactCall) bool {
	b, ok := s.nearBound(res, c)
	return ok && b < 1+CallMargin
}

// standsNear reports whether call c is shown safe by its part's
// measurement at c.at: each arm runs one plan at both sizes, so the arms'
// ratio at c's size is at most their ratio at c.at times c.widen.
func (s *loop) standsNear(res *Result, c exactCall, bx, cx nccl.Choice) bool {
	o := s.plan.opOf(c.op)
	if o == nil || !s.mayStandNear(res, c) {
		return false
	}
	for _, arm := range []struct {
		cfg nccl.Config
		at  nccl.Choice
	}{{res.Baseline.Config, bx}, {res.Winner.Config, cx}} {
		r := o.resolve(arm.cfg)
		if x, ok := r.Plan[c.at]; !r.Certain || !ok || x != arm.at || !s.tuningShows(c.op, arm.cfg) {
			return false
		}
	}
	return true
}

// readExactLadders reads NCCL's plan over each of lads for each of ts, once
// the defaults' is read, while the budget and --time hold one more launch.
func (s *loop) readExactLadders(ctx context.Context, ts []*Trial, lads []exactLadder) error {
	if !s.plan.read() {
		return nil
	}
	for _, t := range ts {
		for _, l := range lads {
			if _, ok := s.exactRead[s.exactKey(t, l)]; ok || s.seq+1 > s.opts.Budget-s.explainBeside() || s.outOfConfirmTime(1+s.explainBeside()) {
				continue
			}
			if err := s.readExact(ctx, t, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// tuningShows reports whether every knob of cfg that op's plan does not
// prove a no-op is one whose whole effect NCCL's TUNING line shows.
func (s *loop) tuningShows(op nccl.Op, cfg nccl.Config) bool {
	o := s.plan.opOf(op)
	if o == nil {
		return false
	}
	for k := range o.core(cfg) {
		if !nccl.ShownByTuning(k) {
			return false
		}
	}
	return true
}

// ladderOf is the ladder of lads that reads call c's size.
func ladderOf(lads []exactLadder, c exactCall) exactLadder {
	return lads[slices.IndexFunc(lads, func(l exactLadder) bool { return l.holds(c) })]
}

// planNear is p's choice at the size nccl-tests ran for b.
func planNear(p nccl.Plan, b int64) (nccl.Choice, bool) {
	x, ok := nccl.LadderSize(p.Sizes(), b)
	if !ok {
		return nccl.Choice{}, false
	}
	return p[x], true
}

// measureExact measures calls at their own sizes, the arms interleaved,
// and refuses res's candidate for a call not shown safe there.
func (s *loop) measureExact(ctx context.Context, res *Result, calls []exactCall) error {
	base, w := res.Baseline, res.Winner
	lads := exactLadders(calls)
	key := s.exactRunsKey
	var results []model.GuardResult
	var sizes []int64
	undecided := map[exactLadder]bool{}
	for _, l := range lads {
		undecided[l] = true
	}
	for look := 1; look <= callLooks; look++ {
		n := look * s.opts.GuardLaunches
		for _, l := range lads {
			// A later look measures only the ladders with a call undecided.
			for undecided[l] && (len(s.exactRuns[key(base, l)]) < n || len(s.exactRuns[key(w, l)]) < n) {
				if s.seq+1 > s.opts.Budget-s.explainBeside() || s.outOfConfirmTime(1+s.explainBeside()) {
					break
				}
				t := nextArm(base, w, len(s.exactRuns[key(base, l)]), len(s.exactRuns[key(w, l)]))
				lr, err := s.launchExact(ctx, t, l, false)
				if err != nil {
					return err
				}
				if lr.Outcome != benchfmt.OK || lr.Result == nil {
					s.refuseExact(res, ladderCalls(calls, l)[0], armName(t, base)+"'s launch at that size failed", false)
					return nil
				}
				s.exactRuns[key(t, l)] = append(s.exactRuns[key(t, l)], model.LaunchOf(benchfmt.SizesOf(lr.Result)))
			}
		}
		var in []model.GuardInput
		sizes = sizes[:0]
		for _, c := range calls {
			l := ladderOf(lads, c)
			b, bs := s.exactRuns[key(base, l)], s.exactRuns[key(w, l)]
			x, _ := nccl.LadderSize(launchSizes(b, bs), c.bytes)
			sizes = append(sizes, x)
			in = append(in, s.callInput(fmt.Sprintf("%s %d", c.op, c.bytes), b, bs, x))
		}
		results = model.CompareGuards(in, s.opts.Stats)
		clear(undecided)
		for k, r := range results {
			if r.Slower {
				s.refuseExact(res, calls[k], fmt.Sprintf("measured there it is significantly slower (%+.1f%% time, p=%.2g at Holm's level %.2g)", 100*(1/r.WorstSpeedup-1), r.P, r.Level), true)
				return nil
			}
			// A call without two launches per arm has no bound: never
			// shown safe.
			if _, ok := unsafeCall(r); ok || min(len(in[k].Baseline), len(in[k].Candidate)) < 2 {
				undecided[ladderOf(lads, calls[k])] = true
			}
		}
		if len(undecided) == 0 {
			s.exactDone = true
			return nil
		}
	}
	for k, r := range results {
		if n := min(r.BaselineN, r.CandidateN); n < 2 || sizes[k] == 0 {
			s.refuseExact(res, calls[k], fmt.Sprintf("the budget or --time left too few launches to measure it there (%d per arm); %s", n, s.raiseLimit()), false)
			return nil
		}
		if sg, ok := unsafeCall(r); ok {
			s.refuseExact(res, calls[k], fmt.Sprintf("measured there at %d bytes, %+.1f%% time, upper bound %+.1f%% after %d launches per arm; safe needs it under %+.0f%%; %s to measure it longer",
				sizes[k], 100*(1/sg.Speedup-1), 100*(sg.Upper-1), min(r.BaselineN, r.CandidateN), 100*CallMargin, s.raiseLimit()), false)
			return nil
		}
	}
	s.exactDone = true
	return nil
}

// ladderCalls are the calls ladder l measures.
func ladderCalls(calls []exactCall, l exactLadder) []exactCall {
	return slices.DeleteFunc(slices.Clone(calls), func(c exactCall) bool { return !l.holds(c) })
}

// launchSizes are the sizes every one of the launches measured.
func launchSizes(arms ...[]model.Launch) []int64 {
	var out []int64
	first := true
	for _, ls := range arms {
		for _, l := range ls {
			var here []int64
			for b := range l.Times {
				if first || slices.Contains(out, b) {
					here = append(here, b)
				}
			}
			out, first = here, false
		}
	}
	return out
}

// refuseExact refuses res's candidate for call c.
func (s *loop) refuseExact(res *Result, c exactCall, why string, slower bool) {
	if res.Parts != nil && c.part < len(res.Parts) {
		p := &res.Parts[c.part]
		p.Refused, p.NotShownSafe, p.RefusedAt = true, !slower, c.bytes
	}
	verdict := "not shown safe"
	if slower {
		verdict = "slower"
	}
	refuse(res, vocab.EndingOpRegression, "%s is faster for the workload but %s at its own size for its call %s of %d bytes, measured at %s: %s%s; keep NCCL's defaults",
		res.Winner.Config, verdict, c.op, c.bytes, nccl.FormatSize(c.at), why, s.rareCallAdvice(c.calls))
}

// readExact makes one debug launch of t over ladder l and keeps its plan.
func (s *loop) readExact(ctx context.Context, t *Trial, l exactLadder) error {
	lr, err := s.launchExact(ctx, t, l, true)
	if err != nil {
		return err
	}
	s.exactRead[s.exactKey(t, l)] = exactPlan(lr, l)
	return nil
}

// exactPlan is NCCL's plan at ladder l's sizes as launch lr's log shows it.
func exactPlan(lr *benchfmt.Launch, l exactLadder) nccl.Plan {
	var f *benchfmt.Facts
	if lr.Result != nil {
		f = lr.Result.Facts
	}
	return benchfmt.LadderPlan(lr.Outcome, f, l.op, l.lo, l.hi)
}

// exactRun is one measurement of a trial over a ladder, read back.
type exactRun struct {
	ladder exactLadder
	launch model.Launch
}

// restoreExact gives a resumed study the reads and measurements at the
// calls' own sizes its stored launches made.
func (s *loop) restoreExact(t *Trial) {
	for _, d := range t.Debug {
		if d.Phase != vocab.PhaseExact || d.Launch == nil || d.MaxBytes == 0 || d.Launch.Reason == benchfmt.ReasonInterrupted {
			continue
		}
		l := exactLadder{op: s.opts.Parts().LaunchOp(d.Launch.Op), lo: d.MinBytes, hi: d.MaxBytes}
		s.exactRead[s.exactKey(t, l)] = exactPlan(d.Launch, l)
	}
	for _, r := range t.exact {
		k := s.exactRunsKey(t, r.ladder)
		s.exactRuns[k] = append(s.exactRuns[k], r.launch)
	}
}

// launchExact runs and records one launch of t over ladder l.
func (s *loop) launchExact(ctx context.Context, t *Trial, l exactLadder, debug bool) (*benchfmt.Launch, error) {
	req := CallLadder{Op: s.requestOp(l.op), Lo: l.lo, Hi: l.hi}.Request(t.Config, s.seq, t.Number, debug)
	lr, err := s.runCounted(ctx, t, req)
	if err != nil {
		return nil, err
	}
	return lr, s.record(t, req, lr, false, false, 0, 0)
}

// callInput is a call's guard input, its bound at alpha/callLooks.
func (s *loop) callInput(name string, base, cand []model.Launch, sizes ...int64) model.GuardInput {
	return model.GuardInput{Name: name, Baseline: base, Candidate: cand, Sizes: sizes, BoundAlpha: s.alpha() / callLooks}
}

// armName names t: the baseline base, or the candidate.
func armName(t, base *Trial) string {
	if t == base {
		return "the baseline"
	}
	return "the candidate"
}
