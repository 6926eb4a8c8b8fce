package search

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// planState is what the study knows of NCCL's own plan: what NCCL runs
// under its defaults (read from one debug launch before exploring) and
// under the configs whose debug logs it has read, and what it did with
// that knowledge (configs merged, configs refused).
type planState struct {
	// native is NCCL's plan under the defaults at the band and guard
	// sizes; nil until read, and for good when the log has none.
	native *nccl.Native
	// note says why configs are not merged by plan, "" when they are.
	note string
	// known are plans read from other configs' debug logs, by config key.
	known map[string]nccl.Native
	// merged are configs the sampler proposed that run the same plan as a
	// config already tried, by config key, with the rules that proved it.
	merged map[string][]string
	// refused are configs never launched because they switch on a
	// protocol or algorithm NCCL's defaults disabled, by config key.
	refused map[string]string
	// checks counts debug launches made to settle an uncertain rule.
	checks int
	// logged are the trials with a debug launch that recorded NCCL's choices.
	logged map[*Trial]bool
	// cache holds resolutions by config key until a plan is learnt: steps
	// and random draws ask about the same configs many times.
	cache map[string]nccl.Resolution
}

// PlanSummary is what a study did with NCCL's own plan.
type PlanSummary struct {
	// Read is true when NCCL's plan was read from the debug launch.
	Read bool
	// Note says why configs were not merged by plan, "" when they were.
	Note string
	// Native is NCCL's plan of the defaults at the band and guard sizes.
	Native nccl.Plan
	// SpaceConfigs is the number of configs of the search space.
	SpaceConfigs int
	// ConfigsExplored counts the configs launched while exploring;
	// PlansExplored the distinct plans they ran (proved by the rules or by
	// their own debug logs; a config whose plan is not proved counts as
	// its own).
	ConfigsExplored int
	PlansExplored   int
	// Merged counts the proposed configs that were not launched as new
	// trials because NCCL runs them like one already tried, per rule (a
	// config merged by two rules counts under each); MergedConfigs counts
	// those configs once.
	Merged        []MergeCount
	MergedConfigs int
	// Refused counts the configs never launched because they switch on a
	// protocol or algorithm NCCL's defaults disabled (see
	// Options.AllowDisabled), Checks the debug launches spent settling
	// uncertain rules.
	Refused int
	Checks  int
}

// MergeCount is how many configs one rule merged.
type MergeCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// ruleSamePlanLogged is the merge reason when a config's own debug log
// (or that of its simpler twin) proved the plan.
const ruleSamePlanLogged = "the same plan as a config already tried, proved by a debug log"

// planSizes are the sizes whose plan matters: the band and the guard sizes.
func (s *loop) planSizes() []int64 {
	out := append([]int64(nil), s.sizes...)
	for _, g := range s.opts.Guard {
		if !containsSize(out, g) {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func containsSize(list []int64, x int64) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// learnPlan reads NCCL's plan from a debug launch of t.
func (s *loop) learnPlan(t *Trial, phase string, l *benchfmt.Launch) {
	if l == nil || l.Outcome != benchfmt.OK || l.Result == nil {
		if t.Role == vocab.RoleBaseline && phase == vocab.PhasePlan && s.plan.native == nil {
			s.plan.note = "the debug launch of NCCL's defaults failed, so NCCL's plan is unknown: configs are not merged by plan"
		}
		return
	}
	n, ok := l.Result.Facts.Native("")
	sizes := s.planSizes()
	if ok {
		n.Plan = n.Plan.Restrict(sizes)
		ok = n.Plan.Covers(sizes)
	}
	isDefaults := len(t.Config.Canonical()) == 0
	if !ok {
		if isDefaults && s.plan.native == nil {
			s.plan.note = "NCCL's log shows no choice per size (TUNING lines need NCCL 2.24+ and NCCL_DEBUG_SUBSYS=TUNING): configs are not merged by plan"
		}
		return
	}
	if isDefaults {
		if s.plan.native == nil {
			n.Config = nccl.Config{}
			s.plan.native = &n
			s.plan.note = ""
		}
	} else if s.plan.native != nil {
		// Safety and the no-op rules ask what NCCL's defaults enabled.
		n.Table = s.plan.native.Table
		n.Config = s.core(t.Config)
		if s.plan.known == nil {
			s.plan.known = map[string]nccl.Native{}
		}
		s.plan.known[n.Config.Key()] = n
	}
	s.rekey()
}

// resolve predicts what NCCL runs under cfg from everything known: the
// defaults' plan and the plans read from other configs' debug logs.
func (s *loop) resolve(cfg nccl.Config) nccl.Resolution {
	key := cfg.Canonical().Key()
	if r, ok := s.plan.cache[key]; ok {
		return r
	}
	r := s.resolveUncached(cfg)
	if s.plan.cache == nil {
		s.plan.cache = map[string]nccl.Resolution{}
	}
	s.plan.cache[key] = r
	return r
}

func (s *loop) resolveUncached(cfg nccl.Config) nccl.Resolution {
	if s.plan.native == nil {
		// Nothing known: no merging, but the safety rule still holds
		// (without the defaults' table, LL128 counts as unknown).
		r := nccl.Native{}.Explain(cfg)
		r.Certain, r.Reduced, r.Dropped, r.Conditional = false, cfg.Canonical(), nil, nil
		r.Key = "config:" + r.Reduced.Key()
		return r
	}
	r := s.plan.native.Explain(cfg)
	if r.Certain {
		return r
	}
	// A config with a known plan, of which cfg adds only no-ops, proves
	// cfg's plan; the most specific such base first.
	keys := make([]string, 0, len(s.plan.known))
	for k := range s.plan.known {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := len(s.plan.known[keys[i]].Config), len(s.plan.known[keys[j]].Config); a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	c := cfg.Canonical()
	core := s.core(c)
	for _, k := range keys {
		b := s.plan.known[k]
		if !isPart(b.Config, core) {
			continue
		}
		if rb := b.Explain(core); rb.Certain {
			// The base's own knobs stay: they are what changes the plan.
			rb.Dropped = append(append([]nccl.Drop(nil), r.Dropped...), rb.Dropped...)
			sort.Slice(rb.Dropped, func(i, j int) bool { return rb.Dropped[i].Knob < rb.Dropped[j].Knob })
			rb.Reduced = c.Clone()
			for _, d := range rb.Dropped {
				delete(rb.Reduced, d.Knob)
			}
			rb.Enables = r.Enables
			return rb
		}
	}
	return r
}

// core is cfg without the knobs NCCL's plan of the defaults proves change
// nothing whatever the rest (a cap at or above its channels, CROSS_NIC
// with one NIC…), its caps spelt one way: configs with the same core run
// the same plan, and a plan read from one config's log serves them all.
func (s *loop) core(cfg nccl.Config) nccl.Config {
	if s.plan.native == nil {
		return cfg.Canonical()
	}
	return s.plan.native.CapsAsCTAs(s.plan.native.Explain(cfg).Reduced)
}

// isPart reports whether every knob of part is set alike in c.
func isPart(part, c nccl.Config) bool {
	for k, v := range part {
		if c[k] != v {
			return false
		}
	}
	return true
}

// keyOf is the key under which the study keeps a config's trial: configs
// proved to run the same plan share it.
func (s *loop) keyOf(cfg nccl.Config) string { return s.resolve(cfg).Key }

// rekey rebuilds the trial index after a plan was learnt: configs that
// were apart may now be proved alike. The trial measured most keeps the key.
func (s *loop) rekey() {
	s.plan.cache = nil
	s.byKey = map[string]*Trial{}
	for _, t := range s.trials {
		k := s.keyOf(t.Config)
		old, ok := s.byKey[k]
		if !ok || t.Role == vocab.RoleBaseline || old.Role != vocab.RoleBaseline && len(t.Explore) > len(old.Explore) {
			s.byKey[k] = t
		}
	}
}

// refuse reports whether cfg must not be launched: it switches on a
// protocol or algorithm that NCCL's defaults disabled (LL128 where NCCL's
// tuner keeps it off can give wrong results), unless the user allowed it.
func (s *loop) refuse(cfg nccl.Config) bool {
	if s.opts.AllowDisabled {
		return false
	}
	r := s.resolve(cfg)
	if len(r.Enables) == 0 {
		return false
	}
	if s.plan.refused == nil {
		s.plan.refused = map[string]string{}
	}
	s.plan.refused[cfg.Canonical().Key()] = strings.Join(r.Enables, "; ")
	return true
}

// noteMerge records that cfg runs what trial t runs, with the rules that
// proved it.
func (s *loop) noteMerge(cfg nccl.Config, t *Trial) {
	c := cfg.Canonical()
	if c.Key() == t.Config.Key() {
		return
	}
	if s.plan.merged == nil {
		s.plan.merged = map[string][]string{}
	}
	if _, seen := s.plan.merged[c.Key()]; seen {
		return
	}
	rc, rt := s.resolve(c), s.resolve(t.Config)
	var rules []string
	for _, pair := range [][2]nccl.Config{{c, t.Config}, {t.Config, c}} {
		r := rc
		if pair[0].Key() == t.Config.Key() {
			r = rt
		}
		for _, d := range r.Dropped {
			if pair[1][d.Knob] != d.Value {
				rules = append(rules, d.Rule)
			}
		}
	}
	if rc.Reduced.Key() != rt.Reduced.Key() && capsAlike(rc.Reduced, rt.Reduced) {
		rules = append(rules, ruleCapAlias)
	}
	if s.plan.native != nil && !s.plan.native.Explain(c).Certain && rc.Certain {
		rules = append(rules, ruleSamePlanLogged)
	}
	if len(rules) == 0 {
		rules = []string{ruleSamePlanLogged}
	}
	s.plan.merged[c.Key()] = rules
}

// ruleCapAlias is the merge reason for NCCL_MAX_NCHANNELS against NCCL_MAX_CTAS.
const ruleCapAlias = "NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS cap the same channels (NCCL 2.17+)"

// capsAlike reports whether a and b differ only in which name caps (or
// floors) the channels (nccl.CapPair).
func capsAlike(a, b nccl.Config) bool {
	return a.CapsAsCTAs().Key() == b.CapsAsCTAs().Key()
}

// checkTwin returns a trial to give a debug launch, or nil: cfg's plan is
// uncertain only because a list knob sits beside a plan-changing one, and
// the config without those list knobs (its twin) was tried but its plan
// is unknown. One debug launch of the twin settles whether cfg runs the
// same; without it cfg would be measured as a new config. Checks are
// bounded so they never eat the exploration.
func (s *loop) checkTwin(cfg nccl.Config) *Trial {
	if s.plan.native == nil || s.plan.checks >= s.maxChecks() || s.exploreLeft() < 4 {
		return nil
	}
	r := s.resolve(cfg)
	if r.Certain || len(r.Conditional) == 0 {
		return nil
	}
	twin := r.Reduced.Clone()
	for _, d := range r.Conditional {
		delete(twin, d.Knob)
	}
	t, ok := s.byKey[s.keyOf(twin)]
	if !ok || !t.State.Usable() || len(t.Explore) == 0 {
		return nil
	}
	if s.planKnown(t) {
		return nil
	}
	s.plan.checks++
	return t
}

// maxChecks bounds the debug launches spent on uncertain rules: one per
// fifteen launches of budget, at least one.
func (s *loop) maxChecks() int { return max(1, s.opts.Budget/15) }

// runsDefaults reports whether t is not the baseline but provably runs
// NCCL's own plan (learnt after it was measured: proposals that do are
// merged with the defaults from the start).
func (s *loop) runsDefaults(t *Trial) bool {
	return s.plan.native != nil && t.Role != vocab.RoleBaseline && s.keyOf(t.Config) == s.keyOf(nccl.Config{})
}

// planKnown reports whether t's plan was read from a debug log (its own
// or that of a config with the same core).
func (s *loop) planKnown(t *Trial) bool {
	c := t.Config.Canonical()
	if len(c) == 0 {
		return s.plan.native != nil
	}
	_, ok := s.plan.known[s.core(c).Key()]
	return ok
}

// simplest returns the config to confirm in place of the candidate w: the
// one with the fewest knobs that NCCL provably runs like w (knobs proved
// to change nothing dropped; a cap preferred to a list), with the knobs
// it leaves out and why. When only w's simpler twin's debug log can prove
// it, one debug launch of the twin is made, if the budget holds one.
func (s *loop) simplest(ctx context.Context, w *Trial) (*Trial, []nccl.Drop, error) {
	if s.plan.native == nil {
		return w, nil, nil
	}
	r := s.resolve(w.Config)
	if !r.Certain && len(r.Conditional) > 0 && s.seq+1 <= s.opts.Budget-2*s.opts.ConfirmLaunches {
		twin := r.Reduced.Clone()
		for _, d := range r.Conditional {
			delete(twin, d.Knob)
		}
		if _, known := s.plan.known[s.core(twin).Key()]; !known {
			t := s.trialFor(twin)
			if t == nil {
				var err error
				if t, err = s.addTrial(twin, vocab.RoleExplore); err != nil {
					return w, nil, err
				}
			}
			s.plan.checks++
			s.candidateRead = true
			if err := s.launch(ctx, t, vocab.PhasePlan, false); err != nil {
				return w, nil, err
			}
			r = s.resolve(w.Config)
		}
	}
	// Knobs proved to change nothing go (when r is uncertain, only those
	// that change nothing whatever the rest of the config).
	best := r.Reduced
	for _, t := range s.trials {
		if t.State.Usable() && s.keyOf(t.Config) == r.Key {
			if m := s.resolve(t.Config).Reduced; simpler(m, best) {
				best = m
			}
		}
	}
	if len(best) == 0 || best.Key() == w.Config.Canonical().Key() {
		return w, r.Dropped, nil
	}
	var dropped []nccl.Drop
	for _, k := range w.Config.Names() {
		if _, kept := best[k]; kept {
			continue
		}
		d := nccl.Drop{Knob: k, Value: w.Config[k], Reason: "NCCL runs the same plan without it", Rule: ruleSamePlanLogged}
		if partner := nccl.CapPartner(k); partner != "" && best[partner] == w.Config[k] {
			d.Reason = fmt.Sprintf("%s=%s says the same: both cap the channels NCCL uses (NCCL 2.17+)", partner, best[partner])
			d.Rule = ruleCapAlias
		}
		for _, rd := range r.Dropped {
			if rd.Knob == k {
				d = rd
			}
		}
		dropped = append(dropped, d)
	}
	t := s.trialFor(best)
	if t == nil {
		var err error
		if t, err = s.addTrial(best, vocab.RoleExplore); err != nil {
			return w, nil, err
		}
	}
	if !t.State.Usable() {
		return w, r.Dropped, nil
	}
	return t, dropped, nil
}

// trialFor finds the trial of exactly cfg, nil if there is none.
func (s *loop) trialFor(cfg nccl.Config) *Trial {
	key := cfg.Canonical().Key()
	for _, t := range s.trials {
		if t.Config.Key() == key {
			return t
		}
	}
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

// planSummary sums up what the study did with NCCL's plan.
func (s *loop) planSummary() *PlanSummary {
	ps := &PlanSummary{Read: s.plan.native != nil, Note: s.plan.note, SpaceConfigs: s.opts.Space.Size(),
		Refused: len(s.plan.refused), Checks: s.plan.checks, MergedConfigs: len(s.plan.merged)}
	if s.plan.native != nil {
		ps.Native = s.plan.native.Plan
	}
	plans := map[string]bool{}
	for _, t := range s.trials {
		if len(t.Explore) == 0 {
			continue
		}
		ps.ConfigsExplored++
		plans[s.keyOf(t.Config)] = true
	}
	ps.PlansExplored = len(plans)
	counts := map[string]int{}
	for _, rules := range s.plan.merged {
		seen := map[string]bool{}
		for _, r := range rules {
			if !seen[r] {
				seen[r] = true
				counts[r]++
			}
		}
	}
	for r, n := range counts {
		ps.Merged = append(ps.Merged, MergeCount{Reason: r, Count: n})
	}
	sort.Slice(ps.Merged, func(i, j int) bool {
		if ps.Merged[i].Count != ps.Merged[j].Count {
			return ps.Merged[i].Count > ps.Merged[j].Count
		}
		return ps.Merged[i].Reason < ps.Merged[j].Reason
	})
	if ps.Note == "" && !ps.Read {
		ps.Note = "NCCL's plan was not read: configs are not merged by plan"
	}
	return ps
}

// String is the summary in one line for the search output.
func (p *PlanSummary) String() string {
	if !p.Read {
		return p.Note
	}
	var b strings.Builder
	fmt.Fprintf(&b, "space of %d configs: %d configs explored, %d distinct NCCL plans", p.SpaceConfigs, p.ConfigsExplored, p.PlansExplored)
	if p.MergedConfigs > 0 {
		fmt.Fprintf(&b, "; %d configs merged", p.MergedConfigs)
	}
	if p.Refused > 0 {
		fmt.Fprintf(&b, "; %d refused (they switch on what NCCL's defaults disabled)", p.Refused)
	}
	return b.String()
}
