package search

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/record"
	"github.com/nccltune/nccltune/internal/vocab"
)

// planner is what the study knows of NCCL's own plan, one opPlan per op,
// and what it did with it (configs merged, configs refused). It never
// launches: the loop hands it each debug launch (learn).
type planner struct {
	// ops are the ops whose plan the study reads: one, of op "", for a
	// one-part study; one per op of a workload.
	ops []*opPlan
	// allowDisabled is Options.AllowDisabled.
	allowDisabled bool
	// note says why configs are not merged by plan, "" when they are.
	note string
	// merged are configs proposed that run the same plan as one already
	// tried, by config key, with the rules that proved it.
	merged map[string][]string
	// refused are configs never launched because they switch on what
	// NCCL's defaults disabled, by config key.
	refused map[string]string
	// wrong are the list values that gave wrong results, by "KNOB=value",
	// with why; refusedWrong the configs never launched for allowing one.
	wrong        map[string]string
	refusedWrong map[string]string
	// checks counts debug launches made to settle an uncertain rule.
	checks int
	// routesRead are the NCCL_CROSS_NIC values whose routes a debug launch
	// was made to read.
	routesRead map[string]bool
	// logged are the trials with a debug launch that recorded NCCL's choices.
	logged map[*Trial]bool
	// cache holds resolutions by config key until a plan is learnt; drawn
	// those of points of the space by their indices.
	cache map[string]nccl.Resolution
	drawn map[string]nccl.Resolution
}

// opPlan is what the study knows of NCCL's plan of one op.
type opPlan struct {
	// op is the op; "" for a one-part study (its requests name no op).
	op nccl.Op
	// reads is the op whose lines the debug log is read for: op, or the
	// one-part study's own (a torch process logs other collectives first).
	reads nccl.Op
	// sizes are the op's parts' sizes and the guard sizes.
	sizes []int64
	// native is NCCL's plan of the op under the defaults at sizes; nil
	// until read.
	native *nccl.Native
	// known are the op's plans read from other configs' debug logs, by
	// core key.
	known map[string]nccl.Native
}

// newPlanner knows nothing of NCCL's plan yet.
func newPlanner(op nccl.Op, sizes, guard []int64, allowDisabled bool) planner {
	return plannerOf([]*opPlan{{reads: op.OrAllReduce(), sizes: planSizes(sizes, guard)}}, allowDisabled)
}

// newWorkloadPlanner is newPlanner for a workload of several parts.
func newWorkloadPlanner(w nccl.Workload, guard []int64, allowDisabled bool) planner {
	var ops []*opPlan
	for _, op := range w.Ops() {
		ops = append(ops, &opPlan{op: op, reads: op, sizes: planSizes(w.Sizes(op), guard)})
	}
	return plannerOf(ops, allowDisabled)
}

// plannerOf is a planner of ops that knows nothing yet.
func plannerOf(ops []*opPlan, allowDisabled bool) planner {
	for _, o := range ops {
		o.known = map[string]nccl.Native{}
	}
	p := planner{ops: ops, allowDisabled: allowDisabled, merged: map[string][]string{}, refused: map[string]string{},
		wrong: map[string]string{}, refusedWrong: map[string]string{}, routesRead: map[string]bool{},
		logged: map[*Trial]bool{}}
	p.forget()
	return p
}

// read reports whether NCCL's defaults' plan is known for every op.
func (p *planner) read() bool {
	return len(p.ops) > 0 && !slices.ContainsFunc(p.ops, func(o *opPlan) bool { return o.native == nil })
}

// defaults is what NCCL's defaults run for the first op, nil until read.
func (p *planner) defaults() *nccl.Native {
	if !p.read() {
		return nil
	}
	return p.ops[0].native
}

// opOf is the plan of op: the only one of a one-part study; nil for an
// op whose plan the study does not read.
func (p *planner) opOf(op nccl.Op) *opPlan {
	if len(p.ops) == 1 {
		return p.ops[0]
	}
	for _, o := range p.ops {
		if o.op == op.OrAllReduce() {
			return o
		}
	}
	return nil
}

// several reports a study whose plan is read per op.
func (p *planner) several() bool { return len(p.ops) > 1 }

// forOp is " for OP" in a study of several ops, "" in a one-part study.
func (p *planner) forOp(o *opPlan) string {
	if !p.several() {
		return ""
	}
	return " for " + string(o.op)
}

// PlanSummary is what a study did with NCCL's own plan.
type PlanSummary = record.PlanSummary

// MergeCount is how many configs one rule merged.
type MergeCount = record.MergeCount

// ruleSamePlanLogged is the merge reason when a debug log proved the plan.
const ruleSamePlanLogged = "the same plan as a config already tried, proved by a debug log"

// planSizes are the sizes whose plan matters: the band and the guard sizes.
func planSizes(sizes, guard []int64) []int64 {
	out := slices.Concat(sizes, guard)
	slices.Sort(out)
	return slices.Compact(out)
}

// learn reads NCCL's plan from a debug launch of t that measured op, and
// reports whether it learnt a plan.
func (p *planner) learn(t *Trial, phase string, op nccl.Op, l *benchfmt.Launch) bool {
	o := p.opOf(op)
	if o == nil {
		return false
	}
	if l == nil || l.Outcome != benchfmt.OK || l.Result == nil {
		if t.Role == vocab.RoleBaseline && phase == vocab.PhasePlan && o.native == nil {
			p.note = "the debug launch of NCCL's defaults" + p.forOp(o) + " failed, so NCCL's plan is unknown: configs are not merged by plan"
		}
		return false
	}
	if l.Result.Facts != nil && len(l.Result.Facts.Choices) > 0 {
		p.logged[t] = true
	}
	n, ok := l.Result.Facts.NativeOp(o.reads, o.sizes) // what NCCL runs for the op's own function
	if ok {
		n.Plan = n.Plan.Restrict(o.sizes)
		ok = n.Plan.Covers(o.sizes)
	}
	isDefaults := len(t.Config.Canonical()) == 0
	// A config setting NCCL_CROSS_NIC may route every channel as the
	// defaults do: then the value is a no-op from now on.
	routes := false
	if !isDefaults && o.native != nil {
		m := n
		m.Config = t.Config.Canonical()
		routes = o.native.LearnRoutes(m)
	}
	if !ok {
		if routes {
			p.forget()
			return true
		}
		if isDefaults && o.native == nil {
			p.note = "NCCL's log shows no choice per size" + p.forOp(o) + " (TUNING lines need NCCL 2.24+ and NCCL_DEBUG_SUBSYS=TUNING): configs are not merged by plan"
			if _, planned := o.reads.PerFunction(); !planned {
				// A send/recv op's plan is the channels NCCL set up.
				p.note = "NCCL's log shows no channel count" + p.forOp(o) + " (the \"coll channels\" line of NCCL_DEBUG_SUBSYS=INIT): configs are not merged by plan"
			}
		}
		return false
	}
	if isDefaults {
		if o.native == nil {
			n.Config = nccl.Config{}
			o.native = &n
			if p.read() {
				p.note = ""
			}
		}
	} else if o.native != nil {
		// Safety and the no-op rules ask what NCCL's defaults enabled.
		n.Table = o.native.Table
		// A config whose knobs proved no-ops runs the defaults' plan.
		if n.Config = o.core(t.Config); len(n.Config) > 0 {
			o.known[n.Config.Key()] = n
		}
	}
	p.forget()
	return true
}

// resolve predicts what NCCL runs under cfg from everything known.
func (p *planner) resolve(cfg nccl.Config) nccl.Resolution {
	key := cfg.Canonical().Key()
	if r, ok := p.cache[key]; ok {
		return r
	}
	rs := make([]nccl.Resolution, len(p.ops))
	for i, o := range p.ops {
		rs[i] = o.resolve(cfg)
	}
	r := rs[0]
	if p.several() {
		r = p.combine(cfg, rs)
	}
	p.cache[key] = r
	return r
}

// resolve is planner.resolve for one op.
func (o *opPlan) resolve(cfg nccl.Config) nccl.Resolution {
	if o.native == nil {
		// Nothing known: no merging, but the safety rule still holds.
		r := nccl.Native{}.Explain(cfg)
		r.Certain, r.Reduced, r.Dropped, r.Conditional = false, cfg.Canonical(), nil, nil
		r.Key = "config:" + r.Reduced.Key()
		return r
	}
	r := o.native.Explain(cfg)
	if r.Certain {
		return r
	}
	// A config with a known plan, of which cfg adds only no-ops, proves
	// cfg's plan; the most specific such base first.
	keys := slices.SortedFunc(maps.Keys(o.known), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(o.known[b].Config), len(o.known[a].Config)), strings.Compare(a, b))
	})
	c := cfg.Canonical()
	core := o.core(c)
	for _, k := range keys {
		b := o.known[k]
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

// combine is the resolution of cfg in a study of several ops from each
// op's (rs): a knob dropped only when every op drops it.
func (p *planner) combine(cfg nccl.Config, rs []nccl.Resolution) nccl.Resolution {
	c := cfg.Canonical()
	out := nccl.Resolution{Plan: rs[0].Plan, Certain: true, Reduced: nccl.Config{}}
	keys := make([]string, len(rs))
	for i, r := range rs {
		out.Certain = out.Certain && r.Certain
		maps.Copy(out.Reduced, r.Reduced)
		for _, e := range r.Enables {
			out.Enables = append(out.Enables, string(p.ops[i].op)+": "+e)
		}
		keys[i] = string(p.ops[i].op) + "{" + r.Key + "}"
	}
	out.Key = "ops:" + strings.Join(keys, " ")
	for _, k := range c.Names() {
		if _, kept := out.Reduced[k]; !kept {
			out.Dropped = append(out.Dropped, p.dropAcross(k, c[k], rs))
		}
	}
	for _, k := range out.Reduced.Names() {
		var cond *nccl.Drop
		every := true
		for _, r := range rs {
			if d, ok := nccl.FindDrop(r.Conditional, k); ok {
				if cond == nil {
					cond = &d
				}
			} else if _, ok := nccl.FindDrop(r.Dropped, k); !ok {
				every = false
			}
		}
		if cond != nil && every {
			out.Conditional = append(out.Conditional, *cond)
		}
	}
	return out
}

// dropAcross is why knob k=v, dropped by every op, changes nothing.
func (p *planner) dropAcross(k, v string, rs []nccl.Resolution) nccl.Drop {
	var reasons, rules []string
	for _, r := range rs {
		d, _ := nccl.FindDrop(r.Dropped, k)
		reasons = append(reasons, d.Reason)
		if !slices.Contains(rules, d.Rule) {
			rules = append(rules, d.Rule)
		}
	}
	out := nccl.Drop{Knob: k, Value: v, Rule: strings.Join(rules, "; ")}
	if !slices.ContainsFunc(reasons, func(r string) bool { return r != reasons[0] }) {
		out.Reason = reasons[0] + " for " + p.opList()
		return out
	}
	parts := make([]string, len(rs))
	for i := range rs {
		parts[i] = string(p.ops[i].op) + ": " + reasons[i]
	}
	out.Reason = strings.Join(parts, "; ")
	return out
}

// opList names the ops whose plan the study reads: "a, b and c".
func (p *planner) opList() string {
	names := make([]string, len(p.ops))
	for i, o := range p.ops {
		names[i] = string(o.op)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// core is cfg without the knobs NCCL's plan of the defaults proves change
// nothing, its caps spelt one way: configs with the same core run alike.
func (p *planner) core(cfg nccl.Config) nccl.Config {
	if !p.several() {
		return p.ops[0].core(cfg)
	}
	out := nccl.Config{}
	for _, o := range p.ops {
		maps.Copy(out, o.core(cfg))
	}
	return out
}

// readOp is op's plan when the study reads op's own and it was read.
func (p *planner) readOp(op nccl.Op) *opPlan {
	o := p.opOf(op)
	if o == nil || o.reads != op.OrAllReduce() || o.native == nil {
		return nil
	}
	return o
}

// sameCore reports whether NCCL's plan rules prove that op runs alike
// under a and b.
func (p *planner) sameCore(op nccl.Op, a, b nccl.Config) bool {
	o := p.readOp(op)
	return o != nil && o.core(a).Key() == o.core(b).Key()
}

// sameCoreAt is sameCore at a size b off the powers of two, where NCCL's
// defaults choose x (search/testdata/exact-core.json).
func (p *planner) sameCoreAt(op nccl.Op, a, b nccl.Config, size int64, x nccl.Choice) bool {
	o := p.readOp(op)
	if o == nil {
		return false
	}
	n := *o.native
	n.Plan = o.native.Plan.Clone()
	n.Plan[size] = x
	at := opPlan{native: &n}
	return at.core(a).Key() == at.core(b).Key()
}

// core is planner.core for one op.
func (o *opPlan) core(cfg nccl.Config) nccl.Config {
	if o.native == nil {
		return cfg.Canonical()
	}
	return o.native.CapsAsCTAs(o.native.Explain(cfg).Reduced)
}

// knows reports whether cfg's plan was read from a debug log for every op.
func (p *planner) knows(cfg nccl.Config) bool {
	for _, o := range p.ops {
		core := o.core(cfg)
		if p.several() && len(core) == 0 && o.native != nil {
			continue
		}
		if _, ok := o.known[core.Key()]; !ok {
			return false
		}
	}
	return true
}

// uncertainOps are the ops whose plan under cfg is not proved.
func (p *planner) uncertainOps(cfg nccl.Config) []nccl.Op {
	var out []nccl.Op
	for _, o := range p.ops {
		if !o.resolve(cfg).Certain {
			out = append(out, o.op)
		}
	}
	return out
}

// certainByRules reports whether the rules alone prove cfg's plan.
func (p *planner) certainByRules(cfg nccl.Config) bool {
	return !slices.ContainsFunc(p.ops, func(o *opPlan) bool { return o.native == nil || !o.native.Explain(cfg).Certain })
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

// keyOf is the key under which the study keeps a config's trial.
func (p *planner) keyOf(cfg nccl.Config) string { return p.resolve(cfg).Key }

// resolveDrawn is resolve of the space's point at idx in canonical form.
func (p *planner) resolveDrawn(space Space, idx []int) nccl.Resolution {
	var b []byte
	for _, i := range idx {
		b = strconv.AppendInt(append(b, ','), int64(i), 10)
	}
	r, ok := p.drawn[string(b)]
	if !ok {
		r = p.resolve(space.Config(idx).Canonical())
		p.drawn[string(b)] = r
	}
	return r
}

// forget drops what was resolved, once a plan is learnt.
func (p *planner) forget() {
	p.cache, p.drawn = map[string]nccl.Resolution{}, map[string]nccl.Resolution{}
}

// refuse reports whether cfg must not be launched: it switches on what
// NCCL's defaults disabled, unless the user allowed it.
func (p *planner) refuse(cfg nccl.Config) bool {
	if why := p.wrongIn(cfg); why != "" {
		// Wrong results are proof, whatever --allow-disabled-protocols says.
		p.refusedWrong[cfg.Canonical().Key()] = why
		return true
	}
	if p.allowDisabled {
		return false
	}
	r := p.resolve(cfg)
	if len(r.Enables) == 0 {
		return false
	}
	p.refused[cfg.Canonical().Key()] = strings.Join(r.Enables, "; ")
	return true
}

// noteMerge records that cfg runs what trial t runs, with the rules.
func (p *planner) noteMerge(cfg nccl.Config, t *Trial) {
	c := cfg.Canonical()
	if c.Key() == t.Config.Key() {
		return
	}
	if _, seen := p.merged[c.Key()]; seen {
		return
	}
	rc, rt := p.resolve(c), p.resolve(t.Config)
	var rules []string
	for _, pair := range [][2]nccl.Config{{c, t.Config}, {t.Config, c}} {
		r := rc
		if pair[0].Key() == t.Config.Key() {
			r = rt
		}
		for _, d := range r.Dropped {
			if pair[1][d.Knob] != d.Value {
				// Dropped for several ops by different rules: counts under each.
				rules = append(rules, strings.Split(d.Rule, "; ")...)
			}
		}
	}
	if rc.Reduced.Key() != rt.Reduced.Key() && rc.Reduced.CapsAsCTAs().Key() == rt.Reduced.CapsAsCTAs().Key() {
		rules = append(rules, ruleCapAlias)
	}
	if p.read() && !p.certainByRules(c) && rc.Certain {
		rules = append(rules, ruleSamePlanLogged)
	}
	if len(rules) == 0 {
		rules = []string{ruleSamePlanLogged}
	}
	if p.several() {
		// Which ops' plans were the same: every op's.
		rules = append([]string{p.sameFor(t)}, rules...)
	}
	p.merged[c.Key()] = rules
}

// sameFor is the merge reason of a study of several ops.
func (p *planner) sameFor(t *Trial) string {
	if p.keyOf(t.Config) == p.keyOf(nccl.Config{}) {
		return "runs like NCCL's defaults for " + p.opList()
	}
	return "runs like a config already tried for " + p.opList()
}

// ruleCapAlias is the merge reason for NCCL_MAX_NCHANNELS against NCCL_MAX_CTAS.
const ruleCapAlias = "NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS cap the same channels (NCCL 2.17+)"

// runsDefaults reports whether t is not the baseline but provably runs
// NCCL's own plan.
func (p *planner) runsDefaults(t *Trial) bool {
	return p.read() && t.Role != vocab.RoleBaseline && p.keyOf(t.Config) == p.keyOf(nccl.Config{})
}

// planKnown reports whether t's plan was read from a debug log.
func (p *planner) planKnown(t *Trial) bool {
	c := t.Config.Canonical()
	if len(c) == 0 {
		return p.read()
	}
	return p.knows(c)
}

// twin is the config r would be without its conditional list knobs.
func twin(r nccl.Resolution) nccl.Config {
	t := r.Reduced.Clone()
	for _, d := range r.Conditional {
		delete(t, d.Knob)
	}
	return t
}

// twinUnknown returns the twin of cfg when cfg's plan is uncertain only by
// its conditional list knobs and the twin's plan is not yet known.
func (p *planner) twinUnknown(cfg nccl.Config) (nccl.Config, bool) {
	r := p.resolve(cfg)
	if r.Certain {
		return nil, false
	}
	if len(r.Conditional) == 0 {
		return p.listTwinUnknown(r)
	}
	t := twin(r)
	return t, !p.knows(t)
}

// listTwinUnknown is twinUnknown for a list that forces a choice beside
// another knob that changes the plan.
func (p *planner) listTwinUnknown(r nccl.Resolution) (nccl.Config, bool) {
	if len(r.Reduced) < 2 {
		return nil, false
	}
	for _, k := range listKnobs {
		if _, ok := r.Reduced[k]; !ok {
			continue
		}
		t := r.Reduced.Clone()
		delete(t, k)
		if !p.knows(t) {
			return t, true
		}
	}
	return nil, false
}

// summary sums up what the study did with NCCL's plan over its trials.
func (p *planner) summary(trials []*Trial, spaceConfigs int) *PlanSummary {
	ps := &PlanSummary{Read: p.read(), Note: p.note, SpaceConfigs: spaceConfigs,
		Refused: len(p.refused), Checks: p.checks, MergedConfigs: len(p.merged)}
	ps.WrongResults = p.wrongSummary()
	plans := map[string]bool{}
	for _, t := range trials {
		if len(t.Explore) == 0 {
			continue
		}
		ps.ConfigsExplored++
		plans[p.keyOf(t.Config)] = true
	}
	ps.PlansExplored = len(plans)
	counts := map[string]int{}
	for _, rules := range p.merged {
		for _, r := range slices.Compact(slices.Sorted(slices.Values(rules))) {
			counts[r]++
		}
	}
	for r, n := range counts {
		ps.Merged = append(ps.Merged, MergeCount{Reason: r, Count: n})
	}
	slices.SortFunc(ps.Merged, func(a, b MergeCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	if ps.Note == "" && !ps.Read {
		ps.Note = "NCCL's plan was not read: configs are not merged by plan"
	}
	return ps
}

// samePlanAt reports whether NCCL provably runs op at sizes alike under
// configs a and b.
func (p *planner) samePlanAt(a, b nccl.Config, op nccl.Op, sizes []int64) bool {
	known, same := p.plansAt(a, b, op, sizes)
	return known && same
}

// plansAt compares NCCL's plans for op at sizes under configs a and b.
func (p *planner) plansAt(a, b nccl.Config, op nccl.Op, sizes []int64) (known, same bool) {
	o := p.opOf(op)
	if o == nil || o.native == nil || len(sizes) == 0 {
		return false, false
	}
	ra, rb := o.resolve(a), o.resolve(b)
	if !ra.Certain || !rb.Certain || !ra.Plan.Covers(sizes) || !rb.Plan.Covers(sizes) {
		return false, false
	}
	return true, ra.Plan.Restrict(sizes).Equal(rb.Plan.Restrict(sizes))
}

// runApartAt reports whether NCCL provably runs op at size otherwise
// under a than under b (nccl.Native.Forbids included).
func (p *planner) runApartAt(a, b nccl.Config, op nccl.Op, size int64) bool {
	o := p.readOp(op)
	if o == nil {
		return false
	}
	if known, same := p.plansAt(a, b, op, []int64{size}); known {
		return !same
	}
	for _, x := range [][2]nccl.Config{{a, b}, {b, a}} {
		r := o.resolve(x[0])
		if c, ok := r.Plan[size]; r.Certain && ok && o.native.Forbids(x[1], c) {
			return true
		}
	}
	return false
}
