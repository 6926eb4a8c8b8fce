package search

// The config confirmed in place of the candidate: the simplest one NCCL
// provably runs like it.

import (
	"context"
	"fmt"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// simplification is what simplest found for a candidate: the config to
// confirm in its place (nil: the candidate itself) with the knobs it
// leaves out and why, and the knobs the candidate's own resolution drops
// (what is said when the candidate itself is confirmed).
type simplification struct {
	config  nccl.Config
	dropped []nccl.Drop
	own     []nccl.Drop
}

// simplest finds the config to confirm in place of the candidate w among
// the study's trials: the one with the fewest knobs that NCCL provably
// runs like w (knobs proved to change nothing dropped; a cap preferred to
// a list), with the knobs it leaves out and why. It launches nothing and
// adds no trial: the loop does both (readTwin, trialOf).
func simplest(p *planner, trials []*Trial, w *Trial) simplification {
	if !p.read() {
		return simplification{}
	}
	r := p.resolve(w.Config)
	// Knobs proved to change nothing go (when r is uncertain, only those
	// that change nothing whatever the rest of the config).
	best := r.Reduced
	for _, t := range trials {
		if t.State.Usable() && p.keyOf(t.Config) == r.Key {
			if m := p.resolve(t.Config).Reduced; simpler(m, best) {
				best = m
			}
		}
	}
	if len(best) == 0 || best.Key() == w.Config.Canonical().Key() {
		return simplification{own: r.Dropped}
	}
	return simplification{config: best, dropped: droppedFor(w.Config, best, r), own: r.Dropped}
}

// droppedFor lists the knobs of cfg that best leaves out, each with why:
// the rule of cfg's resolution r that dropped it, else a cap spelt the
// other way, else the plan's proof that NCCL runs the same without it.
func droppedFor(cfg, best nccl.Config, r nccl.Resolution) []nccl.Drop {
	var dropped []nccl.Drop
	for _, k := range cfg.Names() {
		if _, kept := best[k]; kept {
			continue
		}
		d := nccl.Drop{Knob: k, Value: cfg[k], Reason: "NCCL runs the same plan without it", Rule: ruleSamePlanLogged}
		if partner := nccl.CapPartner(k); partner != "" && best[partner] == cfg[k] {
			d.Reason = fmt.Sprintf("%s=%s says the same: both cap the channels NCCL uses (NCCL 2.17+)", partner, best[partner])
			d.Rule = ruleCapAlias
		}
		if rd, ok := nccl.FindDrop(r.Dropped, k); ok {
			d = rd
		}
		dropped = append(dropped, d)
	}
	return dropped
}

// simplestTrial returns the trial to confirm in place of the candidate w
// (see simplest), with the knobs it leaves out. When only w's simpler
// twin's debug log can prove it, one debug launch of the twin is made
// first, if the budget holds one.
func (s *loop) simplestTrial(ctx context.Context, w *Trial) (*Trial, []nccl.Drop, error) {
	if err := s.readRoutes(ctx, w); err != nil {
		return w, nil, err
	}
	if err := s.readTwin(ctx, w); err != nil {
		return w, nil, err
	}
	pick := simplest(&s.plan, s.trials, w)
	t, dropped := w, pick.own
	if pick.config != nil {
		c, err := s.trialOf(pick.config)
		if err != nil {
			return w, nil, err
		}
		if c.State.Usable() {
			t, dropped = c, pick.dropped
		}
	}
	// An NCCL_CROSS_NIC value NCCL's plan could not prove a no-op is
	// kept only when the measured time shows it.
	u, drop, err := s.withoutCrossNIC(ctx, t)
	if err != nil || drop == nil {
		return t, dropped, err
	}
	return u, append(dropped, *drop), nil
}

// readTwin makes one debug launch of the candidate's twin when the
// candidate's plan is uncertain only by its list knobs, the twin's plan is
// unknown and the budget holds the launch beside the smallest
// confirmation and the candidate's own explain launch.
//
// When the twin's log proves the candidate alike, it records what NCCL
// chooses with the config confirmed (the twin, or a config it proves
// alike), so it takes the place of that config's explain launch — unless,
// in a study of several ops, what is confirmed is the candidate's lists
// scoped to the workload's ops (scopeOf): a trial of its own, whose explain
// launch (one per op, which the tuner CSV reads) is still owed. When it
// shows the lists change the plan (NCCL_PROTO=Simple beside a cap where
// the cap alone runs LL128 at some sizes), the candidate's own explain
// launch is still owed: the budget held it back.
func (s *loop) readTwin(ctx context.Context, w *Trial) error {
	if !s.plan.read() || !s.holdsBesideConfirm() {
		return nil
	}
	tw, unknown := s.plan.twinUnknown(w.Config)
	if !unknown {
		return nil
	}
	t, err := s.trialOf(tw)
	if err != nil {
		return err
	}
	s.plan.checks++
	if err := s.launch(ctx, t, vocab.PhasePlan, false); err != nil {
		return err
	}
	alike := s.plan.keyOf(w.Config) == s.plan.keyOf(tw)
	if alike && s.plan.several() {
		_, scopes := s.scopeOf(w.Config)
		alike = len(scopes) == 0
	}
	s.candidateRead = s.candidateRead || alike
	return nil
}

// simpler orders equivalent configs for a recommendation: fewer knobs
// first, then fewer algorithm or protocol lists (a cap says what it does
// in one number; a list is one more thing to keep true on new hardware),
// then by key for a stable answer.
func simpler(a, b nccl.Config) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	la, lb := lists(a), lists(b)
	if la != lb {
		return la < lb
	}
	return a.Key() < b.Key()
}

func lists(c nccl.Config) int {
	n := 0
	for _, k := range []string{"NCCL_PROTO", "NCCL_ALGO"} {
		if _, ok := c[k]; ok {
			n++
		}
	}
	return n
}
