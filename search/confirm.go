package search

// Confirmation: sizing it, and deciding the candidate against the baseline.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// Confirmation sizing: at least confirmShare of the budget, more when the
// spread and the estimated gain call for it.
const (
	confirmPower = 0.9
	// defaultSpread is the launch-to-launch spread (SD of log launch
	// scores) assumed until exploration has measured it.
	defaultSpread = 0.08
	// minSpreadDF is the degrees of freedom the pooled spread needs before
	// it replaces defaultSpread.
	minSpreadDF = 3
	// minSpread is the least pooled spread exploration uses: a few
	// identical launches are no proof that the next one will be.
	minSpread = 0.005
	// guardZ is how many standard errors a guard-size slowdown beyond the
	// minimum effect must exceed before exploration stops preferring the
	// config (guardFails).
	guardZ = 1.0
)

// confirmMax is the most launches per arm the confirmation plans if it
// started now, for confirmPower at a cautious estimate of the gain (the
// winner's curse inflates exploration's), within [ConfirmLaunches,
// confirmShare of the budget].
func (s *loop) confirmMax() int {
	first := s.opts.ConfirmLaunches
	limit := max(first, int(math.Round(confirmShare*float64(s.opts.Budget)/float64(2*s.cost()))))
	if limit == first {
		return first
	}
	base := s.baseline()
	c := s.rank.candidate(base)
	if c == nil || base == nil {
		return limit
	}
	nb, _ := base.scoreStats(s.sizes)
	nc, _ := c.scoreStats(s.sizes)
	if nb == 0 || nc == 0 {
		return limit
	}
	sigma := s.rank.spread()
	logGain := base.logScore(s.sizes) - c.logScore(s.sizes) - model.PlanBeta*sigma*math.Sqrt(1/float64(nb)+1/float64(nc))
	plan := model.PlanLaunches(sigma, math.Expm1(logGain), s.alpha(), confirmPower)
	return min(max(plan, first), limit)
}

// confirmShare is the share of the budget the confirmation may grow to.
const confirmShare = 0.2

// confirm measures the candidate against the baseline, interleaved so that
// drift hits both, and decides from those launches alone, a
// group-sequential test (model.ConfirmDesign).
func (s *loop) confirm(ctx context.Context, res *Result) error {
	base := res.Baseline
	w, dropped, err := s.confirmCandidate(ctx, res)
	if err != nil || w == nil {
		return err
	}
	if w != base && s.opts.ScopeLists {
		if w, err = s.scoped(w, res); err != nil {
			return err
		}
	}
	res.Winner, res.Dropped = w, dropped
	if w == base {
		// Confirming the baseline against itself would read as a measurement.
		refuse(res, vocab.EndingSameAsBaseline, "the best config found runs the same NCCL plan as the baseline once its no-op knobs are dropped; keep the baseline")
		return nil
	}
	d, fresh := s.confirmDesign(res, base, w)
	if !d.CanDecide() {
		// No outcome of the launches left could recommend.
		refuse(res, vocab.EndingCannotDecide, "the budget left allows %d confirmation launches per arm, too few for the exact test to reach its level; keep NCCL's defaults, or raise --budget", d.MaxLaunches())
		return nil
	}
	res.Design = &d
	if fresh {
		if err := s.rec.SaveDesign(Planned{Candidate: w.Config.Clone(), Seq: s.seq, First: d.Looks[0], Last: d.MaxLaunches()}); err != nil {
			return err
		}
	}
	out, err := Confirm(ctx, Confirmation{Baseline: base, Candidate: w, Design: d, Sizes: s.sizes, Stats: s.opts.Stats,
		Launch: func(ctx context.Context, t *Trial) error { return s.launch(ctx, t, vocab.PhaseConfirm, true) },
		Exhausted: func() bool {
			// Under --time the first look holds back only the candidate's
			// explain launch: without the look nothing can ship.
			held := s.inTime(s.heldBack())
			if min(len(base.Confirm), len(w.Confirm)) < d.Looks[0] {
				held = s.candidateExplainLeft()
			}
			return s.seq+s.cost() > s.opts.Budget-s.heldBack() || s.outOfConfirmTime(2*s.cost()+held)
		}})
	res.Looks = out.Looks
	switch {
	case err != nil:
		return err
	case out.Failed == base:
		return fmt.Errorf("%w during confirmation: %s", ErrBaselineFailed, base.Reason)
	case out.Failed == w:
		refuse(res, vocab.EndingCandidateFailed, "the candidate %s failed during confirmation (%s); keep NCCL's defaults",
			w.Config, w.Reason)
		return nil
	}
	s.judge(res, d, out.Look)
	return nil
}

// confirmCandidate picks the config to confirm, simplified; nil, with
// res's ending set, when no config other than the defaults ran.
func (s *loop) confirmCandidate(ctx context.Context, res *Result) (*Trial, []nccl.Drop, error) {
	base := res.Baseline
	// The best candidate is always confirmed, even when exploring says it
	// is no better: only confirmation launches give an honest number.
	w := s.rank.candidate(base)
	if s.forced != nil {
		// A refused list's per-function form goes before the ranking's next.
		w, s.forced = s.forced, nil
	}
	if w == nil {
		refuse(res, vocab.EndingNoCandidate, "no config other than NCCL's defaults ran successfully; keep NCCL's defaults")
		return nil, nil, nil
	}
	// The simplest config NCCL provably runs like the candidate: the env a
	// user gets is exactly what was measured.
	var dropped []nccl.Drop
	for tries := 0; ; tries++ {
		first := w
		var err error
		if w, dropped, err = s.simplestTrial(ctx, w); err != nil {
			return nil, nil, err
		}
		if w != base && s.ruledOut(w) && first != w && tries < 2 {
			// Its simplest config was refused already: the candidate's whole
			// family is ruled out with it.
			s.noteRefused(first, nil, nil)
			s.rank.forget()
			if next := s.rank.candidate(base); next != nil {
				w = next
				continue
			}
		}
		if w != base || tries == 2 {
			break
		}
		// The candidate proved to be the baseline under another name: the
		// next best config, if any, instead.
		next := s.rank.candidate(base)
		if next == nil || next == first {
			break
		}
		w = next
	}
	return w, dropped, nil
}

// scoped is the trial to confirm in place of w when w's lists can be
// scoped to the workload's ops (NCCL 2.24+).
func (s *loop) scoped(w *Trial, res *Result) (*Trial, error) {
	cfg, knobs := s.scopeOf(w.Config)
	if len(knobs) == 0 {
		return w, nil
	}
	res.Scoped, res.ScopedFrom = knobs, w
	return s.trialOf(cfg)
}

// scopeOf is cfg with its lists scoped to the workload's ops, and the
// knobs rewritten.
func (s *loop) scopeOf(cfg nccl.Config) (nccl.Config, []string) {
	if !s.opts.ScopeLists {
		return cfg.Clone(), nil
	}
	return nccl.ScopeConfig(cfg, s.opts.Parts().Ops(), s.fabricVersion())
}

// fabricVersion is NCCL's version ("" until known).
func (s *loop) fabricVersion() string {
	if d := s.plan.defaults(); d != nil && d.Version != "" {
		return d.Version
	}
	return s.version
}

// confirmDesign sizes the confirmation of w against base; fresh is false
// when a resumed study takes the design stored when it began, which a
// design planned again could decide otherwise than.
func (s *loop) confirmDesign(res *Result, base, w *Trial) (d model.ConfirmDesign, fresh bool) {
	if p := s.planned; p != nil {
		s.planned = nil
		if p.Candidate.Key() == w.Config.Key() && s.designCurrent(p) {
			s.restoreEarlyRead(w)
			return model.PlanConfirm(p.First, p.Last, s.alpha()), false
		}
	}
	room := ((s.opts.Budget-s.seq-s.heldBack())/s.cost() + len(base.Confirm) + len(w.Confirm)) / 2
	maxN := max(min(s.confirmMax(), room), 1)
	if res.Stopped == "space" {
		// Every distinct config was explored: what is left buys power.
		maxN = max(min(room, maxConfirmLaunches), 1)
	}
	return model.PlanConfirm(min(s.opts.ConfirmLaunches, maxN), maxN, s.alpha()), true
}

// designCurrent reports whether the stored design p is the current
// confirmation's.
func (s *loop) designCurrent(p *Planned) bool {
	return len(s.restarted) == 0 || p.Seq >= s.restarted[len(s.restarted)-1].Restart.Seq
}

// judge turns the confirmation's last look into the study's decision.
func (s *loop) judge(res *Result, d model.ConfirmDesign, look model.Look) {
	w := res.Winner
	cmp := look.Comparison
	res.Decision, res.Recommend, res.Reason, res.Ending = &cmp, cmp.Recommend, cmp.Reason, cmp.Verdict
	if cmp.Recommend {
		res.Ending = vocab.EndingRecommended
	}
	if res.Looks > 1 || len(d.Looks) > 1 {
		res.Reason += fmt.Sprintf(" [sequential confirmation: look %d of %d, %s]", res.Looks, len(d.Looks), d)
	}
	if r := s.plan.resolve(w.Config); res.Recommend && !s.opts.AllowDisabled && len(r.Enables) > 0 {
		refuse(res, vocab.EndingSwitchesOnDisabled, "%s switches on what NCCL's defaults disabled (%s); keep NCCL's defaults, or allow it with --allow-disabled-protocols at the risk of wrong results",
			w.Config, strings.Join(r.Enables, "; "))
	}
	s.judgeGuardSizes(res)
}

// refuse ends res without a recommendation, for ending, saying why.
func refuse(res *Result, ending, format string, args ...any) {
	res.Recommend, res.Ending = false, ending
	res.Reason = fmt.Sprintf(format, args...)
}

// judgeGuardSizes compares the guard sizes on every confirmation launch
// made so far and refuses a recommendation significantly slower at one.
func (s *loop) judgeGuardSizes(res *Result) {
	w, base := res.Winner, res.Baseline
	res.Guards = nil
	for _, g := range s.guardSizes() {
		gc := model.Compare(base.ConfirmOf(g.op), w.ConfirmOf(g.op), []int64{g.bytes}, s.opts.Stats)
		res.Guards = append(res.Guards, GuardCheck{Op: g.op, Bytes: g.bytes, Comparison: gc})
		if res.Recommend && gc.Slower {
			// The change in time, signed as the size table prints it.
			refuse(res, vocab.EndingGuard, "%s is faster in the band but significantly slower at the guard size %s (%+.1f%% time); keep NCCL's defaults or narrow the guard",
				w.Config, g, 100*(1/gc.Speedup-1))
		}
	}
}

// Confirmation is one measurement of a candidate against a baseline,
// interleaved B C B C …, judged at the looks of a design.
type Confirmation struct {
	Baseline, Candidate *Trial
	Design              model.ConfirmDesign
	// Sizes are the band's sizes, Stats the statistics' options.
	Sizes []int64
	Stats model.Options
	// Launch makes and records one confirmation launch of t; its error
	// stops the confirmation.
	Launch func(ctx context.Context, t *Trial) error
	// Exhausted, if set, is asked before each launch: true when no more
	// may be made, and the look then taken is the last.
	Exhausted func() bool
}

// Confirmed is where a confirmation stopped.
type Confirmed struct {
	// Look is the decision of the last look taken.
	Look model.Look
	// Looks is the number of looks taken.
	Looks int
	// Failed is the arm whose launch failed, nil when none did.
	Failed *Trial
}

// Confirm runs the confirmation c until a look stops it. A failed launch
// ends it with Failed set and err nil; err is Launch's.
func Confirm(ctx context.Context, c Confirmation) (Confirmed, error) {
	var out Confirmed
	base, cand := c.Baseline, c.Candidate
	for k, n := range c.Design.Looks {
		final := false
		for len(base.Confirm) < n || len(cand.Confirm) < n {
			if c.Exhausted != nil && c.Exhausted() {
				final = true
				break
			}
			t := nextArm(base, cand, len(base.Confirm), len(cand.Confirm))
			if err := c.Launch(ctx, t); err != nil {
				return out, err
			}
			if !t.State.Usable() {
				out.Failed = t
				return out, nil
			}
		}
		// Look k is judged on each arm's first n launches: a resumed
		// confirmation replays its looks over its stored launches.
		out.Look = c.Design.Decide(k, firstN(base.Confirm, n), firstN(cand.Confirm, n), c.Sizes, c.Stats, final)
		out.Looks = k + 1
		if out.Look.Stop {
			break
		}
	}
	return out, nil
}

// nextArm is the arm of an interleaved pair to launch next.
func nextArm(base, cand *Trial, nb, nc int) *Trial {
	if nb <= nc {
		return base
	}
	return cand
}

// firstN is ls's first n launches (all of them when fewer).
func firstN(ls []model.Launch, n int) []model.Launch {
	return ls[:min(n, len(ls))]
}

// maxConfirmLaunches bounds a confirmation's launches per arm.
const maxConfirmLaunches = 50

// alpha is the study's significance level, its default filled in.
func (s *loop) alpha() float64 {
	if s.opts.Stats.Alpha > 0 {
		return s.opts.Stats.Alpha
	}
	return vocab.DefaultAlpha
}

// outOfConfirmTime is pastTime, and records that time ended the study
// (timeCut): every caller stops what it was doing when it reports true.
func (s *loop) outOfConfirmTime(launches int) bool {
	out := s.pastTime(launches)
	s.timeCut = s.timeCut || out
	return out
}

// pastTime reports whether --time leaves too little for `launches` more at
// the mean launch duration.
func (s *loop) pastTime(launches int) bool {
	return s.opts.Time > 0 && s.elapsed()+time.Duration(launches)*s.meanLaunchDuration() > s.opts.Time
}
