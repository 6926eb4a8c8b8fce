package search

// Exploration's proposals: what to launch next.

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// guardPenaltyWeight scales a guard regression into the sampler's objective.
const guardPenaltyWeight = 10

// next decides the next exploration launch: a refinement where the
// planner says it settles which config leads, else a proposal.
func (s *loop) next() (*Trial, string, error) {
	// A global list that lost an op: its per-function form first.
	if t, err := s.nextPerFunction(); t != nil || err != nil {
		return t, vocab.PhaseExplore, err
	}
	if t := s.nextRefinement(); t != nil {
		return t, vocab.PhaseRefine, nil
	}
	if t, phase, err := s.nextLocalStep(); t != nil || err != nil {
		return t, phase, err
	}
	s.localRun = 0
	return s.nextProposal()
}

// nextRefinement is the trial to launch again, if one should be.
func (s *loop) nextRefinement() *Trial {
	base := s.baseline()
	// The config the study would confirm now is measured at least
	// MaxLaunchesPerTrial times: one more launch tells luck from a real
	// gain. Not when it cannot plausibly beat the leader.
	if c := s.rank.candidate(base); c != nil && len(c.Explore) < min(3, s.opts.MaxLaunchesPerTrial) && s.plausible(c) {
		return c
	}
	// A config one batch measured ranks after a second block.
	for _, t := range s.trials {
		if s.batcher() == nil && t.State.Usable() && !t.blockRanked() && s.plausible(t) {
			return t
		}
	}
	if s.exploreLeft() <= settleLaunches*s.cost() {
		if r := s.rank.runnerUp(base); r != nil {
			return r
		}
	}
	// The planner settles the order of the current top configs only.
	if s.refinements() < 2*s.explored() {
		return s.planNext(s.rank.leaders(s.opts.TopConfigs), s.opts.MaxLaunchesPerTrial)
	}
	return nil
}

// planNext is the trial of top that model.PlanNext says to launch again.
func (s *loop) planNext(top []*Trial, limit int) *Trial {
	arms := make([]model.Arm, len(top))
	for i, t := range top {
		arms[i] = model.Arm{Launches: t.Explore}
	}
	plan := model.PlanNext(arms, s.sizes, s.opts.Stats, limit)
	if plan.Done || plan.Arm < 0 {
		return nil
	}
	return top[plan.Arm]
}

// nextLocalStep is a new trial one step from the leader, when it is a
// local step's turn.
func (s *loop) nextLocalStep() (t *Trial, phase string, err error) {
	// Past the sampler's start-up, its proposals alternate with a local
	// step from the leader: a simplification if one is untried, else a
	// random untried neighbour. These test the leader's knobs together,
	// where NCCL's knobs interact.
	if s.localRun < s.opts.LocalSteps && s.explored() >= s.opts.Startup && s.opts.Sampler != "grid" && s.opts.Sampler != "random" {
		c := s.simplification()
		if c == nil {
			if c = s.localStep(); c != nil {
				c = s.twinFirst(c)
			}
		}
		if c != nil {
			s.localRun++
			if t := s.checkTwin(c); t != nil {
				return t, vocab.PhasePlan, nil
			}
			t, err := s.addTrial(c, vocab.RoleExplore)
			return t, vocab.PhaseExplore, err
		}
	}
	return nil, "", nil
}

// maxHops bounds the passes one proposal takes.
const maxHops = 2

// nextProposal is the sampler's next config; errSpaceExhausted when fifty
// proposals in a row bring nothing new.
func (s *loop) nextProposal() (*Trial, string, error) {
	for attempt := 0; attempt < 50; attempt++ {
		cfg, err := s.prop.propose(s.observations())
		if err != nil {
			return nil, "", err
		}
		if err := cfg.Validate(); err != nil {
			// Impossible combinations are learnt as failures.
			s.rejected = append(s.rejected, cfg)
			continue
		}
		cfg = cfg.Canonical()
		if s.plan.refuse(cfg) {
			// Switches on what NCCL's defaults disabled: learnt as a failure.
			s.rejected = append(s.rejected, cfg)
			continue
		}
		// A proposal merged into a trial measured enough moves to an
		// untried neighbour, checked as a proposal is.
		for hop := 0; hop < maxHops && cfg != nil; hop++ {
			if t, err := s.checkRoutes(cfg); t != nil || err != nil {
				// Only its NCCL_CROSS_NIC value's own debug log can tell.
				return t, vocab.PhasePlan, err
			}
			cfg = s.twinFirst(cfg)
			if s.awaitsMember(cfg) {
				return nil, "", errAwaitsBatch
			}
			if t := s.checkTwin(cfg); t != nil {
				// One debug launch of the config it may run like tells.
				return t, vocab.PhasePlan, nil
			}
			t, seen := s.byKey[s.plan.keyOf(cfg)]
			if !seen {
				t, err := s.addTrial(cfg, vocab.RoleExplore)
				return t, vocab.PhaseExplore, err
			}
			s.plan.noteMerge(cfg, t)
			if t.State.Usable() && len(t.Explore) < s.opts.MaxLaunchesPerTrial && s.refinements() < s.explored() && s.plausible(t) {
				return t, vocab.PhaseRefine, nil
			}
			if cfg = neighbour(s.opts.Space, cfg, s.tried, s.rng); cfg == nil {
				// Every neighbour is measured: jump to an untried config.
				cfg = s.randomUntried()
			}
		}
	}
	return nil, "", errSpaceExhausted
}

// plausible reports whether t could still beat the leading config
// (model.Plausible over the configs PlanNext ranks).
func (s *loop) plausible(t *Trial) bool {
	if len(t.Explore) == 0 {
		return true
	}
	arms, trials := s.rank.arms()
	for i, a := range trials {
		if a == t {
			return model.Plausible(arms, s.sizes, i)
		}
	}
	return false
}

// explored counts trials with a scored exploration launch; refinements the
// extra launches given to them.
func (s *loop) explored() int {
	n := 0
	for _, t := range s.trials {
		if len(t.Explore) > 0 {
			n++
		}
	}
	return n
}

func (s *loop) refinements() int {
	n := 0
	for _, t := range s.trials {
		n += max(0, len(t.Explore)-1)
	}
	return n
}

// tried reports whether a config NCCL runs alike already has a trial.
func (s *loop) tried(c nccl.Config) bool {
	// A config that allows what gave wrong results is never tried.
	return s.triedAs(s.plan.resolve(c)) || s.plan.wrongIn(c) != ""
}

// triedAs is tried for the config resolved as r, but for wrongIn.
func (s *loop) triedAs(r nccl.Resolution) bool {
	_, ok := s.byKey[r.Key]
	return ok || !s.opts.AllowDisabled && len(r.Enables) > 0
}

// observations are what the sampler learns from.
func (s *loop) observations() []observation {
	worst := math.Inf(-1)
	var obs []observation
	base := s.baseline()
	for _, t := range s.trials {
		if t.State.Usable() && len(t.Explore) > 0 {
			v := t.logScore(s.sizes)
			if base != nil && t != base {
				// Slower at a guard size: worse than that much slower in the band.
				if p := s.rank.guardPenalty(t, base); p > 0 {
					v += guardPenaltyWeight * p
				}
			}
			worst = math.Max(worst, v)
			obs = append(obs, observation{config: t.Config, value: v})
		}
	}
	penalty := failurePenalty(worst)
	for _, t := range s.trials {
		if !t.State.Usable() {
			obs = append(obs, observation{config: t.Config, value: penalty})
		}
	}
	for _, c := range s.rejected {
		obs = append(obs, observation{config: c, value: penalty})
	}
	return obs
}

// randomUntried draws untried, valid configs from the space, nil if a
// thousand draws find none.
func (s *loop) randomUntried() nccl.Config {
	for i := 0; i < 1000; i++ {
		idx := s.opts.Space.draw(s.rng)
		if s.triedAs(s.plan.resolveDrawn(s.opts.Space, idx)) {
			continue
		}
		c := s.opts.Space.Config(idx).Canonical()
		if !s.tried(c) && c.Validate() == nil {
			return c
		}
	}
	return nil
}

// localLeader is the best config measured at least twice (or the best).
func (s *loop) localLeader() *Trial {
	leaders := s.rank.leaders(len(s.trials))
	if i := slices.IndexFunc(leaders, func(t *Trial) bool { return len(t.Explore) >= 2 }); i >= 0 {
		return leaders[i]
	}
	if len(leaders) > 0 {
		return leaders[0]
	}
	return nil
}

// localStep returns an untried config one step from the local leader.
func (s *loop) localStep() nccl.Config {
	lead := s.localLeader()
	if lead == nil {
		return nil
	}
	idx, ok := s.opts.Space.Index(lead.Config)
	if !ok {
		return nil
	}
	obs := s.observations()
	n := len(s.opts.Space)
	for k := 0; k < n; k++ {
		d := (s.localDim + k) % n
		dim := s.opts.Space[d]
		var moves []int
		if numeric(dim.Choices) && idx[d] > 0 {
			for _, j := range []int{idx[d] - 1, idx[d] + 1} {
				if j >= 1 && j < len(dim.Choices) {
					moves = append(moves, j)
				}
			}
		} else {
			for j := range dim.Choices {
				if j != idx[d] {
					moves = append(moves, j)
				}
			}
		}
		// Most promising first: by the mean score of every trial measured
		// with that value.
		marg := marginals(dim, obs)
		sort.SliceStable(moves, func(a, b int) bool { return marg[moves[a]] < marg[moves[b]] })
		for _, j := range moves {
			next := append([]int(nil), idx...)
			next[d] = j
			c := s.opts.Space.Config(next)
			if !s.tried(c) && c.Validate() == nil {
				s.localDim = d + 1
				return c
			}
		}
	}
	return neighbour(s.opts.Space, lead.Config, s.tried, s.rng)
}

// marginals is, for each choice of dim, the mean log score of the
// observations made with it.
func marginals(dim Dimension, obs []observation) []float64 {
	sum := make([]float64, len(dim.Choices))
	n := make([]int, len(dim.Choices))
	for _, o := range obs {
		v := o.config[dim.Knob]
		for j, c := range dim.Choices {
			if c == v {
				sum[j] += o.value
				n[j]++
			}
		}
	}
	all, alln := 0.0, 0
	for j := range sum {
		all += sum[j]
		alln += n[j]
	}
	out := make([]float64, len(sum))
	for j := range sum {
		switch {
		case n[j] > 0:
			out[j] = sum[j] / float64(n[j])
		case alln > 0:
			out[j] = all / float64(alln)
		}
	}
	return out
}

// numeric reports whether every set choice is a number.
func numeric(choices []string) bool {
	for _, c := range choices {
		if _, err := strconv.Atoi(c); c != "" && err != nil {
			return false
		}
	}
	return true
}

// simplification returns an untried config that is the leader with one
// of its knobs unset, or nil.
func (s *loop) simplification() nccl.Config {
	lead := s.localLeader()
	if lead == nil {
		return nil
	}
	for _, k := range lead.Config.Names() {
		if c := without(lead.Config, k); !s.tried(c) && c.Validate() == nil {
			if _, ok := s.opts.Space.Index(c); ok {
				return c
			}
		}
	}
	return nil
}

// checkTwin returns a trial to give a debug launch, or nil: its twin was
// tried but its plan is unknown. Checks are bounded.
func (s *loop) checkTwin(cfg nccl.Config) *Trial {
	// The route reads are bounded by the values, not by maxChecks.
	if !s.plan.read() || s.plan.checks-len(s.plan.routesRead) >= s.maxChecks() || s.exploreLeft() < 4*s.cost() {
		return nil
	}
	r := s.plan.resolve(cfg)
	if r.Certain || len(r.Conditional) == 0 {
		return nil
	}
	t, ok := s.byKey[s.plan.keyOf(twin(r))]
	if !ok || !t.State.Usable() || len(t.Explore) == 0 {
		return nil
	}
	if s.plan.planKnown(t) {
		return nil
	}
	s.plan.checks++
	return t
}

// errAwaitsBatch ends the filling of a batch (awaitsMember).
var errAwaitsBatch = errors.New("the proposal waits for the batch being filled")

// awaitsMember reports whether cfg's plan is in doubt only by the plan of
// its twin, a member of the batch being filled.
func (s *loop) awaitsMember(cfg nccl.Config) bool {
	if s.filling == nil || !s.plan.read() {
		return false
	}
	r := s.plan.resolve(cfg)
	if r.Certain || len(r.Conditional) == 0 {
		return false
	}
	t, ok := s.byKey[s.plan.keyOf(twin(r))]
	return ok && len(t.Explore) == 0 && slices.Contains(s.filling, t)
}

// twinFirst is the config to launch for cfg: its twin when that twin is
// in the space and untried, else cfg. Once the twin is measured, cfg's
// other spellings wait on one debug launch, not a timed launch each.
func (s *loop) twinFirst(cfg nccl.Config) nccl.Config {
	if !s.plan.read() {
		return cfg
	}
	r := s.plan.resolve(cfg)
	if r.Certain || len(r.Conditional) == 0 {
		// Nothing in cfg is a list its twin's plan could prove idle.
		return cfg
	}
	tw := twin(r)
	if s.tried(tw) || tw.Validate() != nil {
		return cfg
	}
	if _, ok := s.opts.Space.Index(tw); !ok {
		return cfg
	}
	return tw.Canonical()
}

// maxChecks bounds the debug launches spent on uncertain rules: one per
// six launches of budget. A check costs what the twin's timed launch it
// spares does; one per fifteen measured worse.
func (s *loop) maxChecks() int { return max(1, s.opts.Budget/6) }
