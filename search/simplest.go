package search

// The simplest config NCCL provably runs like the candidate.

import (
	"context"
	"fmt"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// simplification is what simplest found: the config to confirm (nil: the
// candidate itself), its drops, and the candidate's own.
type simplification struct {
	config  nccl.Config
	dropped []nccl.Drop
	own     []nccl.Drop
}

// simplest finds the trial config with the fewest knobs that NCCL
// provably runs like w; it launches nothing.
func simplest(p *planner, trials []*Trial, w *Trial) simplification {
	if !p.read() {
		return simplification{}
	}
	r := p.resolve(w.Config)
	// Knobs proved to change nothing go, then those NCCL runs the same
	// plan without beside the rest.
	best, drops := p.withoutNoOps(r.Reduced)
	for _, t := range trials {
		if t.State.Usable() && p.keyOf(t.Config) == r.Key {
			if m, md := p.withoutNoOps(p.resolve(t.Config).Reduced); simpler(m, best) {
				best, drops = m, md
			}
		}
	}
	if len(best) == 0 || best.Key() == w.Config.Canonical().Key() {
		return simplification{own: r.Dropped}
	}
	return simplification{config: best, dropped: droppedFor(w.Config, best, r, drops), own: r.Dropped}
}

// withoutNoOps is cfg without each knob NCCL provably runs the same plan
// without beside the rest, one at a time, lists first; the last stays.
func (p *planner) withoutNoOps(cfg nccl.Config) (nccl.Config, []nccl.Drop) {
	cfg = cfg.Canonical()
	var drops []nccl.Drop
	for {
		k, ok := p.noOpKnob(cfg)
		if !ok {
			return cfg, drops
		}
		d := nccl.Drop{Knob: k, Value: cfg[k], Rule: ruleSamePlanLogged,
			Reason: "NCCL runs the same plan without it beside " + without(cfg, k).String()}
		if rd, ok := nccl.FindDrop(p.resolve(cfg).Dropped, k); ok {
			d = rd
		}
		drops = append(drops, d)
		cfg = without(cfg, k)
	}
}

// noOpKnob is the first knob of cfg that withoutNoOps can drop.
func (p *planner) noOpKnob(cfg nccl.Config) (string, bool) {
	if len(cfg) < 2 {
		return "", false
	}
	key := p.keyOf(cfg)
	for _, k := range dropOrder(cfg) {
		if c := without(cfg, k); c.Validate() == nil && p.keyOf(c) == key {
			return k, true
		}
	}
	return "", false
}

// unreadWithout is cfg without one list knob, whose unread debug log
// would settle whether that list changes anything.
func (p *planner) unreadWithout(cfg nccl.Config, read map[string]bool) (nccl.Config, bool) {
	if len(cfg) < 2 {
		return nil, false
	}
	defaults := p.keyOf(nccl.Config{})
	for _, k := range dropOrder(cfg) {
		if !slices.Contains(listKnobs, k) {
			continue
		}
		c := without(cfg, k)
		if read[c.Key()] || p.knows(c) || p.keyOf(c) == defaults || c.Validate() != nil {
			continue
		}
		return c, true
	}
	return nil, false
}

// dropOrder is the lists, then the rest by name.
func dropOrder(cfg nccl.Config) []string {
	var order []string
	for _, k := range listKnobs {
		if _, ok := cfg[k]; ok {
			order = append(order, k)
		}
	}
	for _, k := range cfg.Names() {
		if !slices.Contains(listKnobs, k) {
			order = append(order, k)
		}
	}
	return order
}

// without is cfg without knob k.
func without(cfg nccl.Config, k string) nccl.Config {
	c := cfg.Clone()
	delete(c, k)
	return c
}

// droppedFor lists the knobs of cfg that best leaves out, each with why.
func droppedFor(cfg, best nccl.Config, r nccl.Resolution, drops []nccl.Drop) []nccl.Drop {
	var dropped []nccl.Drop
	for _, k := range cfg.Names() {
		if _, kept := best[k]; kept {
			continue
		}
		d := nccl.Drop{Knob: k, Value: cfg[k], Reason: "NCCL runs the same plan without it", Rule: ruleSamePlanLogged}
		if md, ok := nccl.FindDrop(drops, k); ok {
			d = md
		}
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

// simplestTrial returns the trial to confirm in place of w, with its
// drops, after the debug launches that can prove it.
func (s *loop) simplestTrial(ctx context.Context, w *Trial) (*Trial, []nccl.Drop, error) {
	for _, read := range []func(context.Context, *Trial) error{s.readRoutes, s.readTwin, s.readWithout} {
		if err := read(ctx, w); err != nil {
			return w, nil, err
		}
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
	// An NCCL_CROSS_NIC value not proved a no-op is kept only when the
	// measured time shows it.
	u, drop, err := s.withoutCrossNIC(ctx, t)
	if err != nil || drop == nil {
		return t, dropped, err
	}
	return u, append(dropped, *drop), nil
}

// readTwin makes one debug launch of the candidate's twin when its plan
// is uncertain only by its list knobs; a twin proving it alike stands for
// its explain launch.
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

// readWithout makes the debug launches that let simplest drop, knob by
// knob, a list that changes nothing beside the rest.
func (s *loop) readWithout(ctx context.Context, w *Trial) error {
	seen, launched := map[string]bool{}, map[string]bool{}
	for s.plan.read() && s.holdsBesideConfirm() {
		cfg := w.Config
		if pick := simplest(&s.plan, s.trials, w); pick.config != nil {
			cfg = pick.config
		}
		c, ok := s.plan.unreadWithout(cfg, seen)
		if !ok {
			break
		}
		seen[c.Key()] = true
		if u, ok := s.byKey[s.plan.keyOf(c)]; ok && u != w && s.measuredSlower(w, u) {
			// Measured slower, c runs another plan: the list stays.
			continue
		}
		t, err := s.trialOf(c)
		if err != nil {
			return err
		}
		s.plan.checks++
		if s.work == nil {
			if err := s.launch(ctx, t, vocab.PhasePlan, false); err != nil {
				return err
			}
			launched[c.Key()] = true
			continue
		}
		// A workload's read launches only the ops whose plan without the
		// list is not proved already.
		ops := s.plan.uncertainOps(c)
		for _, op := range ops {
			if err := s.launchOp(ctx, t, vocab.PhasePlan, false, op, s.warmupRound()); err != nil {
				return err
			}
		}
		launched[c.Key()] = len(ops) == len(s.work.ops)
	}
	if pick := simplest(&s.plan, s.trials, w); pick.config != nil && launched[pick.config.Key()] {
		s.candidateRead = true
	}
	return nil
}

// simpler orders equivalent configs: fewer knobs, then fewer lists, then
// by key.
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

// listKnobs are the knobs that list algorithms or protocols, by name.
var listKnobs = []string{"NCCL_PROTO", "NCCL_ALGO"}

func lists(c nccl.Config) int {
	n := 0
	for _, k := range listKnobs {
		if _, ok := c[k]; ok {
			n++
		}
	}
	return n
}
