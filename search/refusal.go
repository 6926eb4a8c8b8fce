package search

// After a refusal: a guard, a part, a switched-on protocol or a failure
// refused the confirmed candidate. The study does not end there while the
// budget allows: it confirms the best remaining candidate the refusal
// does not rule out, a global list's per-function form first.

import (
	"math"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// refusable reports whether res ended in a refusal of its candidate (the
// confirmation found it faster, or it failed), after which another
// candidate may still be safe; a confirmation that found no gain is the
// study's answer.
func refusable(res *Result) bool {
	switch res.Ending {
	case vocab.EndingGuard, vocab.EndingOpRegression, vocab.EndingSwitchesOnDisabled, vocab.EndingCandidateFailed:
		return res.Winner != nil
	}
	return false
}

// ruledOut reports whether a refusal rules t out as a candidate: t was
// refused (or is the config a refused per-function form rewrote), or NCCL
// may run it like one that was (their planner families meet) where that
// one was refused. A refused trial's sites (refusedAt, refusalSites) say
// where: a trial NCCL provably runs otherwise at every one of them
// (planner.plansAt: both plans known there, and unequal) is not ruled
// out by it, since the refusal measured nothing it runs. On fabric 12 of
// the unseen probe's seed 1 a one-channel cap with NCCL_PROTO=Simple for
// all_gather, refused for an 8K all_gather it runs RING/SIMPLE/1, ruled
// out the cap alone (RING/LL/1 there, the best safe setting) by family.
// A refusal without sites (a candidate that failed or switched on a
// protocol NCCL disabled) rules out the whole family. Narrowing costs
// only launches: a trial it leaves is confirmed and guarded as any
// candidate before it ships.
func (s *loop) ruledOut(t *Trial) bool {
	if len(s.refusedAt) == 0 {
		return false
	}
	f := s.plan.family(t.Config)
	for r := range s.refusedAt {
		if r == t {
			return true
		}
		if familiesMeet(f, s.plan.family(r.Config)) && !s.runsOtherwiseAt(t, r) {
			return true
		}
	}
	return false
}

// runsOtherwiseAt reports whether NCCL provably runs t otherwise than
// refused trial r at every site where r was refused (refusedAt); false
// when r has none. A global list the refused per-function form rewrote
// is compared by what was measured there: the form's plan.
func (s *loop) runsOtherwiseAt(t, r *Trial) bool {
	at, ok := s.refusedAt[r]
	if !ok || len(at.sites) == 0 {
		return false
	}
	for _, st := range at.sites {
		if !s.plan.runApartAt(t.Config, at.measured.Config, st.Op, st.Bytes) {
			return false
		}
	}
	return true
}

// refusedSites are the sites where a refused trial was refused, and the
// trial measured there: itself, or for the global list a per-function
// form rewrote, that form.
type refusedSites struct {
	sites    []Site
	measured *Trial
}

// noteRefused rules t out (ruledOut), refused at sites where measured
// is the trial that ran (t, or the per-function form that rewrote t's
// lists). A refusal without sites, or one of a trial refused before
// without sites or as another trial, rules out t's whole family.
func (s *loop) noteRefused(t *Trial, sites []Site, measured *Trial) {
	if s.refusedAt == nil {
		s.refusedAt = map[*Trial]refusedSites{}
	}
	at, seen := s.refusedAt[t]
	if len(sites) == 0 || seen && (len(at.sites) == 0 || at.measured != measured) {
		s.refusedAt[t] = refusedSites{}
		return
	}
	s.refusedAt[t] = refusedSites{sites: append(at.sites, sites...), measured: measured}
}

// nextAfterRefusal records res's refusal (Result.Refused) and readies the
// next confirmation when one can still decide: res is emptied for it and
// true returned. The next candidate is the refused global list's
// per-function form for the ops that gained (perFunctionForm) when there
// is one, else the best remaining candidate that the refusals do not rule
// out (ranking.candidate with ruledOut), those exploration measured
// slower where a refusal was made last (refusalSites). false, res untouched but for
// the record, when res is no refusal, no candidate remains, or the budget
// or --time cannot hold a confirmation that decides.
func (s *loop) nextAfterRefusal(res *Result) (bool, error) {
	if !refusable(res) {
		return false, nil
	}
	w := res.Winner
	if len(res.Refused) == 0 || res.Refused[len(res.Refused)-1].Trial != w {
		res.Refused = append(res.Refused, Refusal{Trial: w, Ending: res.Ending, Reason: res.Reason, Decision: res.Decision, ScopedFrom: res.ScopedFrom,
			SlowerAt: refusalSites(res)})
	}
	forced, err := s.perFunctionForm(res)
	if err != nil {
		return false, err
	}
	s.noteRefusal(res.Refused[len(res.Refused)-1])
	s.rank.forget()
	base := res.Baseline
	if forced == nil && s.promising(base) == nil {
		return false, nil
	}
	// A fresh confirmation: both arms from their first launch, interleaved
	// (the baseline's launches beside the refused candidate stay in the
	// store); the guarded ops' baseline launches are kept, the new
	// candidate's are owed (guardOwed).
	need := model.MinLaunchesForDecision(s.opts.Stats)
	// The next candidate's explain launch is owed again when the refused
	// one's plan was read early (readEarly, given back below).
	explain := s.explainLeft()
	if s.readEarly {
		explain += s.cost()
	}
	if s.opts.Budget-s.seq-explain-s.guardOwed() < 2*need*s.cost() {
		return false, nil
	}
	// Nor when --time cannot hold the launches that can decide (and the
	// guard launches it owes): a confirmation cut before them ends "no
	// data" or "too few launches", and that would replace the refusal's
	// reason. Each of its rounds is one arm's, checked for a pair
	// (outOfConfirmTime(2*cost)): 2*firstLook rounds need time for one
	// more. Under --time the first look holds back only the explain
	// launch (confirm), so what it owes beside is held here.
	if s.outOfConfirmTime((2*s.firstLook()+1)*s.cost() + s.inTime(explain) + s.guardOwed()) {
		return false, nil
	}
	s.forced = forced
	if s.readEarly {
		// The refused candidate's plan was read before its calls were
		// judged (readCandidate): the next candidate's explain launch is
		// owed again, and held back, as it was before that read.
		s.candidateRead, s.readEarly = false, false
	}
	base.restartConfirm()
	s.guardsDone = false
	// Stored before the next confirmation's first launch: a study
	// interrupted during it resumes from here (restore).
	r := &res.Refused[len(res.Refused)-1]
	r.Restart = &Restart{Seq: s.seq, Stopped: res.Stopped, ExactDone: s.exactDone}
	if forced != nil {
		r.Restart.Next = forced.Config.Clone()
	}
	if err := s.rec.SaveRefusal(*r); err != nil {
		return false, err
	}
	*res = Result{Baseline: base, Stopped: res.Stopped, Refused: res.Refused}
	return true, nil
}

// refusalSites are the (op, size) sites where res refused its
// candidate: a guard size it was significantly slower at, each size of a
// part of the workload that refused it (a part or call is judged over
// the sizes exploration measures it at), the worst size of a guarded op.
// A candidate that exploration measured slower at one of them ranks
// after the others (ranking.refusedSlower).
func refusalSites(res *Result) []Site {
	var out []Site
	if res.Ending == vocab.EndingGuard {
		for _, g := range res.Guards {
			if g.Comparison.Slower {
				out = append(out, Site{g.Op, g.Bytes})
			}
		}
	}
	for _, p := range res.Parts {
		if p.Refused {
			for _, b := range p.Part.Band.Sizes() {
				out = append(out, Site{p.Part.Op.OrAllReduce(), b})
			}
		}
	}
	for _, g := range res.OpGuards {
		if g.Refused && g.Result.Worst > 0 {
			out = append(out, Site{g.Op, g.Result.Worst})
		}
	}
	return out
}

// promising is the best candidate the refusals leave (ranking.candidate)
// when exploration measured it faster than the baseline, nil otherwise: a
// confirmation after a refusal is spent only where exploration saw a gain
// (one it did not see is what the refused candidate's confirmation was
// for), and on the null fabric it seldom follows at all.
func (s *loop) promising(base *Trial) *Trial {
	c := s.rank.candidate(base)
	if c == nil || base == nil || len(base.Explore) == 0 || !(c.logScore(s.sizes) < base.logScore(s.sizes)) {
		return nil
	}
	return c
}

// guardOwed is the guard launches a confirmation after a refusal still
// owes: the new candidate's per guarded op, and the baseline's up to
// GuardLaunches.
func (s *loop) guardOwed() int {
	base, n := s.baseline(), s.opts.GuardLaunches
	owed := 0
	for _, op := range s.opts.GuardOps {
		owed += n + max(0, n-len(base.Guards[op]))
	}
	return owed
}

// perFunctionForm is the trial to confirm next after res refused a
// candidate that sets NCCL_ALGO or NCCL_PROTO process-wide (before it was
// scoped to the workload's ops, Options.ScopeLists): its lists in NCCL's
// per-function form (NCCL 2.24+) for the ops that gained, when what
// refused it is an op the lists reach (not alltoall or sendrecv, which no
// list changes) that is not among them, and when the form runs each such
// op as the baseline does (runsAsBaseline). nil when there is none.
func (s *loop) perFunctionForm(res *Result) (*Trial, error) {
	orig := res.Winner.Config
	if res.ScopedFrom != nil {
		orig = res.ScopedFrom.Config
	}
	if !globalList(orig) {
		return nil, nil
	}
	var refusedBy []nccl.Op
	for _, p := range res.Parts {
		if p.Refused {
			refusedBy = append(refusedBy, p.Part.Op.OrAllReduce())
		}
	}
	for _, g := range res.OpGuards {
		if g.Refused {
			refusedBy = append(refusedBy, g.Op)
		}
	}
	if res.Ending == vocab.EndingCandidateFailed && res.Winner.failedOp != "" {
		refusedBy = append(refusedBy, res.Winner.failedOp)
	}
	if len(refusedBy) == 0 {
		return nil, nil
	}
	for _, op := range refusedBy {
		if _, reached := op.PerFunction(); !reached {
			return nil, nil
		}
	}
	var gained []nccl.Op
	for _, op := range s.opts.Parts().Ops() {
		if _, ok := op.PerFunction(); !ok || slices.Contains(refusedBy, op) || !s.gained(res, op) {
			continue
		}
		gained = append(gained, op)
	}
	if len(gained) == 0 {
		return nil, nil
	}
	cfg, knobs := nccl.ScopeConfig(orig, gained, s.fabricVersion())
	if len(knobs) == 0 || cfg.Canonical().Key() == res.Winner.Config.Canonical().Key() {
		return nil, nil
	}
	// The form goes before the ranking only when it runs every op that
	// refused as the baseline does: a knob it keeps beside its lists (a
	// channel cap) may be what slowed that op, and the form then earns its
	// place by exploration like any candidate. On a fabric of the unseen
	// probe the form of a refused cap and list kept the cap and was
	// refused again for the same broadcast.
	for _, op := range refusedBy {
		if !s.runsAsBaseline(op, cfg, res.Baseline.Config) {
			return nil, nil
		}
	}
	t, err := s.trialOf(cfg)
	if err != nil || !t.State.Usable() || s.ruledOut(t) {
		return nil, err
	}
	return t, nil
}

// runsAsBaseline reports whether cfg is known to run op as the
// baseline's config base does: NCCL's plan rules prove it
// (planner.sameCore), or, where op's plan was not read, cfg differs from
// base only in NCCL_ALGO and NCCL_PROTO lists that leave op out (as
// ScopeConfig writes them for the ops that gained).
func (s *loop) runsAsBaseline(op nccl.Op, cfg, base nccl.Config) bool {
	if s.plan.readOp(op) != nil {
		return s.plan.sameCore(op, cfg, base)
	}
	rest := func(c nccl.Config) string {
		c = c.Canonical()
		for _, k := range nccl.ScopedKnobs {
			delete(c, k)
		}
		return c.Key()
	}
	return rest(cfg) == rest(base)
}

// gained reports whether op gained under res's candidate: a part of op
// measured faster in the confirmation, or, in a study of one part (whose
// Decision is the part's), the study's op when the Decision did.
func (s *loop) gained(res *Result, op nccl.Op) bool {
	if len(res.Parts) == 0 {
		return res.Decision != nil && res.Decision.Speedup > 1 && op == s.opts.Parts()[0].Op.OrAllReduce()
	}
	for _, p := range res.Parts {
		if p.Part.Op.OrAllReduce() == op && p.Comparison.Speedup > 1 {
			return true
		}
	}
	return false
}

// globalList reports whether cfg sets NCCL_ALGO or NCCL_PROTO
// process-wide (not in NCCL's per-function form): the configs whose
// per-function form may be safe where they are not.
func globalList(cfg nccl.Config) bool {
	for _, k := range nccl.ScopedKnobs {
		if v, ok := cfg[k]; ok && !nccl.IsScoped(v) {
			return true
		}
	}
	return false
}

// notePerFunction queues, for exploration, the per-function form of an
// explored config t that sets NCCL_ALGO or NCCL_PROTO process-wide when
// its round (byOp, the ops measured before any failure) failed an op of
// the workload or measured it slower than the baseline by more than the
// minimum effect: its lists for the ops it measured that did not lose,
// when every op that lost is one a list reaches. On a fabric where NCCL runs Tree for
// all-reduce only, a global NCCL_ALGO=Tree fails the all-gathers; its
// form NCCL_ALGO=allreduce:Tree is the safe gain, and it is explored next
// (nextPerFunction), before the sampler's other variants of the global
// value, which fail too. The same rule after a refusal at confirmation
// is perFunctionForm's.
func (s *loop) notePerFunction(t *Trial, byOp map[nccl.Op]model.Launch) {
	if s.work == nil || !globalList(t.Config) {
		return
	}
	base := s.baseline()
	var lost, kept []nccl.Op
	for _, op := range s.work.ops {
		ml, measured := byOp[op]
		switch {
		case !t.State.Usable() && t.failedOp == op:
			lost = append(lost, op)
		case measured && base != t && s.opSlower(base, op, ml):
			lost = append(lost, op)
		case measured:
			kept = append(kept, op)
		}
		// An op the round never reached (it stopped at a failure) is
		// unknown, not kept: on the real loopback a global Tree that
		// slowed the all-reduce and failed the all-gather was scoped to
		// the broadcast it never measured ("broadcast:Tree", which NCCL
		// refuses), at three launches a try.
	}
	if len(lost) == 0 {
		return
	}
	var gained []nccl.Op
	for _, op := range lost {
		if _, reached := op.PerFunction(); !reached {
			return
		}
	}
	for _, op := range kept {
		if _, ok := op.PerFunction(); ok {
			gained = append(gained, op)
		}
	}
	if len(gained) == 0 {
		return
	}
	cfg, knobs := nccl.ScopeConfig(t.Config, gained, s.fabricVersion())
	if len(knobs) == 0 || cfg.Canonical().Key() == t.Config.Canonical().Key() {
		return
	}
	s.perFunction = append(s.perFunction, cfg.Canonical())
}

// opSlower reports whether ml, one launch of op, is slower than the
// baseline's exploration launches of op by more than the minimum effect
// over the op's keys (its calls' sizes).
func (s *loop) opSlower(base *Trial, op nccl.Op, ml model.Launch) bool {
	if base == nil || len(base.Explore) == 0 {
		return false
	}
	sizes := s.opts.OpSizes(op)
	c, err := model.LaunchScore(ml, sizes)
	if err != nil {
		return false
	}
	var logs []float64
	for _, l := range base.exploreOf(op) {
		if b, err := model.LaunchScore(l, sizes); err == nil && b > 0 {
			logs = append(logs, math.Log(b))
		}
	}
	if len(logs) == 0 {
		return false
	}
	b := 0.0
	for _, x := range logs {
		b += x
	}
	return math.Log(c)-b/float64(len(logs)) > math.Log1p(s.opts.Stats.MinEffect)
}

// nextPerFunction is the next queued per-function form (notePerFunction)
// that no trial holds yet and NCCL's defaults allow, as a new exploration
// trial; nil when none.
func (s *loop) nextPerFunction() (*Trial, error) {
	for len(s.perFunction) > 0 {
		cfg := s.perFunction[0]
		s.perFunction = s.perFunction[1:]
		if s.tried(cfg) || s.plan.refuse(cfg) {
			continue
		}
		return s.addTrial(cfg, vocab.RoleExplore)
	}
	return nil, nil
}

// noteRefusal rules out r's trial, and the global list it was scoped
// from, at r's sites, and ranks after the others what exploration
// measured slower there (nextAfterRefusal, and restore on a resume).
func (s *loop) noteRefusal(r Refusal) {
	s.noteRefused(r.Trial, r.SlowerAt, r.Trial)
	if r.ScopedFrom != nil {
		s.noteRefused(r.ScopedFrom, r.SlowerAt, r.Trial)
	}
	s.rank.refused = append(s.rank.refused, r.SlowerAt...)
}
