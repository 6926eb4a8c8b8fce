package search

// After a refusal the study confirms the best remaining candidate the
// refusal does not rule out, a global list's per-function form first.

import (
	"math"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// refusable reports whether res ended in a refusal of its candidate.
func refusable(res *Result) bool {
	switch res.Ending {
	case vocab.EndingGuard, vocab.EndingOpRegression, vocab.EndingSwitchesOnDisabled, vocab.EndingCandidateFailed:
		return res.Winner != nil
	}
	return false
}

// ruledOut reports whether a refusal rules t out: t was refused, or its
// family meets a refused one's and NCCL does not provably run it otherwise
// at every site of that refusal.
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
// refused trial r at every site where r was refused.
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
// trial measured there.
type refusedSites struct {
	sites    []Site
	measured *Trial
}

// noteRefused rules t out, refused at sites; without sites, its whole
// family.
func (s *loop) noteRefused(t *Trial, sites []Site, measured *Trial) {
	at, seen := s.refusedAt[t]
	if len(sites) == 0 || seen && (len(at.sites) == 0 || at.measured != measured) {
		s.refusedAt[t] = refusedSites{}
		return
	}
	s.refusedAt[t] = refusedSites{sites: append(at.sites, sites...), measured: measured}
}

// nextAfterRefusal records res's refusal and readies the next
// confirmation when one can still decide, emptying res; false when none.
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
	// A fresh confirmation: both arms from their first launch, interleaved;
	// the guarded ops' baseline launches are kept.
	need := model.MinLaunchesForDecision(s.opts.Stats)
	// The next candidate's explain launch is owed again when the refused
	// one's plan was read early.
	explain := s.explainLeft()
	if s.readEarly {
		explain += s.cost()
	}
	if s.opts.Budget-s.seq-explain-s.guardOwed() < 2*need*s.cost() {
		return false, nil
	}
	// Nor when --time cannot hold the launches that can decide: a
	// confirmation cut before them would replace the refusal's reason.
	if s.outOfConfirmTime((2*s.firstLook()+1)*s.cost() + s.inTime(explain) + s.guardOwed()) {
		return false, nil
	}
	s.forced = forced
	if s.readEarly {
		// Read early (readCandidate): the next candidate's explain launch is owed again.
		s.candidateRead, s.readEarly = false, false
	}
	base.restartConfirm()
	s.guardsDone = false
	// Stored before the next confirmation's first launch (restore).
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

// refusalSites are the (op, size) sites where res refused its candidate.
func refusalSites(res *Result) []Site {
	var out []Site
	if res.Ending == vocab.EndingGuard {
		for _, g := range res.Guards {
			if g.Comparison.Slower {
				out = append(out, Site{Op: g.Op, Bytes: g.Bytes})
			}
		}
	}
	for _, p := range res.Parts {
		if p.Refused {
			for _, b := range p.Part.Band.Sizes() {
				out = append(out, Site{Op: p.Part.Op.OrAllReduce(), Bytes: b})
			}
		}
	}
	for _, g := range res.OpGuards {
		if g.Refused && g.Result.Worst > 0 {
			out = append(out, Site{Op: g.Op, Bytes: g.Result.Worst})
		}
	}
	return out
}

// promising is the best candidate the refusals leave when exploration
// measured it faster than the baseline.
func (s *loop) promising(base *Trial) *Trial {
	c := s.rank.candidate(base)
	if c == nil || base == nil || len(base.Explore) == 0 || !(c.logScore(s.sizes) < base.logScore(s.sizes)) {
		return nil
	}
	return c
}

// guardOwed is the guard launches a confirmation after a refusal still
// owes.
func (s *loop) guardOwed() int {
	base, n := s.baseline(), s.opts.GuardLaunches
	owed := 0
	for _, op := range s.opts.GuardOps {
		owed += n + max(0, n-len(base.Guards[op]))
	}
	return owed
}

// perFunctionForm is the trial to confirm next after res refused a global
// list: its per-function form for the ops that gained, when it runs every
// refusing op as the baseline does.
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
	gained := slices.DeleteFunc(s.opts.Parts().Ops(), func(op nccl.Op) bool { return slices.Contains(refusedBy, op) || !s.gained(res, op) })
	cfg, ok := s.perFunctionOf(orig, res.Winner.Config, refusedBy, gained)
	if !ok {
		return nil, nil
	}
	// A knob the form keeps beside its lists (a channel cap) may be what
	// slowed a refusing op: then it earns its place by exploration.
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

// perFunctionOf is `from` with its NCCL_ALGO/NCCL_PROTO lists scoped to
// the ops of `keep` a list can reach. ok is false when `lost` is empty or
// holds an op no list reaches, when no op of `keep` is left, or when
// scoping changes nothing or gives `than`.
func (s *loop) perFunctionOf(from, than nccl.Config, lost, keep []nccl.Op) (nccl.Config, bool) {
	if len(lost) == 0 || slices.ContainsFunc(lost, unreached) {
		return nil, false
	}
	keep = slices.DeleteFunc(slices.Clone(keep), unreached)
	if len(keep) == 0 {
		return nil, false
	}
	cfg, knobs := nccl.ScopeConfig(from, keep, s.fabricVersion())
	return cfg, len(knobs) > 0 && cfg.Canonical().Key() != than.Canonical().Key()
}

// unreached reports whether no NCCL_ALGO or NCCL_PROTO list reaches op.
func unreached(op nccl.Op) bool {
	_, ok := op.PerFunction()
	return !ok
}

// runsAsBaseline reports whether cfg is known to run op as base does.
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

// gained reports whether op gained under res's candidate.
func (s *loop) gained(res *Result, op nccl.Op) bool {
	if len(res.Parts) == 0 {
		return res.Decision != nil && res.Decision.Speedup > 1 && op == s.opts.Parts()[0].Op.OrAllReduce()
	}
	return slices.ContainsFunc(res.Parts, func(p PartResult) bool { return p.Part.Op.OrAllReduce() == op && p.Comparison.Speedup > 1 })
}

// globalList reports whether cfg sets NCCL_ALGO or NCCL_PROTO
// process-wide.
func globalList(cfg nccl.Config) bool {
	for _, k := range nccl.ScopedKnobs {
		if v, ok := cfg[k]; ok && !nccl.IsScoped(v) {
			return true
		}
	}
	return false
}

// notePerFunction queues the per-function form of an explored global list
// t whose round failed an op or measured it slower than the baseline.
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
		// An op the round never reached is unknown, not kept.
	}
	if cfg, ok := s.perFunctionOf(t.Config, t.Config, lost, kept); ok {
		s.perFunction = append(s.perFunction, cfg.Canonical())
	}
}

// opSlower reports whether ml, one launch of op, is slower than the
// baseline's by more than the minimum effect.
func (s *loop) opSlower(base *Trial, op nccl.Op, ml model.Launch) bool {
	if base == nil || len(base.Explore) == 0 {
		return false
	}
	sizes := s.opts.OpSizes(op)
	c, err := model.LaunchScore(ml, sizes)
	if err != nil {
		return false
	}
	b, n := 0.0, 0
	for _, l := range base.exploreOf(op) {
		if x, err := model.LaunchScore(l, sizes); err == nil && x > 0 {
			b += math.Log(x)
			n++
		}
	}
	return n > 0 && math.Log(c)-b/float64(n) > math.Log1p(s.opts.Stats.MinEffect)
}

// nextPerFunction is the next queued per-function form to explore.
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

// noteRefusal rules out r's trial and the global list it was scoped from.
func (s *loop) noteRefusal(r Refusal) {
	s.noteRefused(r.Trial, r.SlowerAt, r.Trial)
	if r.ScopedFrom != nil {
		s.noteRefused(r.ScopedFrom, r.SlowerAt, r.Trial)
	}
	s.rank.refused = append(s.rank.refused, r.SlowerAt...)
}
