package search

// Ranking the trials: the spread, the guard filter, the leaders and the
// candidate.

import (
	"math"
	"slices"
	"sort"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// ranking ranks the study's trials; its own state is a cache.
type ranking struct {
	*measured
	plan *planner
	// sizes are the band's, guard the guard sizes (and a timed workload's
	// calls); minEffect the smallest gain that counts, maxLaunches the most
	// exploration launches a trial gets (Options.MaxLaunchesPerTrial).
	sizes       []int64
	guard       []opSize
	minEffect   float64
	maxLaunches int
	// cache holds what the rules compute over every trial, valid while
	// cacheKey matches the study's launches and trials.
	cache    decisionCache
	cacheKey [2]int
	// ruledOut, when set, says a refusal ruled a trial out; refused are the
	// (op, size) sites where the refusals were made (refusedSlower). The
	// loop empties the cache (forget) when they change.
	ruledOut func(*Trial) bool
	refused  []Site
}

// forget empties the cache: what the rules computed no longer holds.
func (s *ranking) forget() { s.cache, s.cacheKey = decisionCache{}, [2]int{-1, -1} }

// measured is the study's trials, in order, and the launches made.
type measured struct {
	trials []*Trial
	seq    int
}

// baseline is the study's baseline trial, nil before it is added.
func (m *measured) baseline() *Trial {
	for _, t := range m.trials {
		if t.Role == vocab.RoleBaseline {
			return t
		}
	}
	return nil
}

// spread is the pooled launch-to-launch SD of log launch scores, or
// defaultSpread until it has minSpreadDF degrees of freedom.
func (s *ranking) spread() float64 {
	c := s.cached()
	if c.spread != 0 {
		return c.spread
	}
	ss, df := 0.0, 0
	for _, t := range s.trials {
		if !t.State.Usable() {
			continue
		}
		n, tss := t.scoreStats(s.sizes)
		if n >= 2 {
			ss += tss
			df += n - 1
		}
	}
	c.spread = defaultSpread
	if df >= minSpreadDF {
		c.spread = max(math.Sqrt(ss/float64(df)), minSpread)
	}
	return c.spread
}

// decisionCache: see ranking.cache.
type decisionCache struct {
	spread     float64
	guardSD    map[opSize]float64
	candidate  *Trial
	candidateN bool // candidate has been computed (it may be nil)
	candBase   *Trial
	guardFails map[*Trial]bool
}

// cached returns the cache, emptied if a launch or a trial was added.
// Trial states change only in launches. A ranking never filled has no
// maps yet, whatever its key says.
func (s *ranking) cached() *decisionCache {
	key := [2]int{s.seq, len(s.trials)}
	if key != s.cacheKey || s.cache.guardSD == nil {
		s.cache, s.cacheKey = decisionCache{guardSD: map[opSize]float64{}, guardFails: map[*Trial]bool{}}, key
	}
	return &s.cache
}

// rankKappa is how many standard errors a config's estimate is made
// pessimistic by (see candidate).
const rankKappa = 1.0

// rankScore is a trial's log score made pessimistic by rankKappa.
func (s *ranking) rankScore(t *Trial, sigma float64) float64 {
	n, _ := t.scoreStats(s.sizes)
	if n == 0 {
		return math.Inf(1)
	}
	return t.logScore(s.sizes) + rankKappa*sigma/math.Sqrt(float64(n))
}

// guardFails reports a trial whose exploration launches are slower than
// the baseline's at a guard size or call (slowerAt, at sitesZ): it would
// likely fail the guard check, so exploration prefers others.
func (s *ranking) guardFails(t *Trial) bool {
	c := s.cached()
	f, ok := c.guardFails[t]
	if !ok {
		base := s.baseline()
		z := sitesZ(len(s.guard))
		f = t != base && base != nil && s.guardPenalty(t, base) > 0 &&
			slices.ContainsFunc(s.guard, func(g opSize) bool { return s.slowerAt(t, base, g, z) })
		c.guardFails[t] = f
	}
	return f
}

// sitesZ is the z that makes "slower at one of k sites" as likely by
// noise alone as guardZ at one site (Šidák; TestSlowerSomewhereByNoise).
func sitesZ(k int) float64 {
	if k <= 1 {
		return guardZ
	}
	p := 0.5 * math.Erfc(guardZ/math.Sqrt2)
	each := -math.Expm1(math.Log1p(-p) / float64(k))
	return math.Sqrt2 * math.Erfinv(1-2*each)
}

// slowerAt reports whether t is slower than the baseline at g by more than
// the minimum effect and z standard errors.
func (s *ranking) slowerAt(t, base *Trial, g opSize, z float64) bool {
	tm, tl := t.guardAt(g)
	bm, bl := base.guardAt(g)
	if len(tl) == 0 || len(bl) == 0 {
		return false
	}
	se := s.guardSpread(g) * math.Sqrt(1/float64(len(tl))+1/float64(len(bl)))
	return tm > 0 && bm > 0 && math.Log(tm/bm)-math.Log(1+s.minEffect) > z*se
}

// refusedSlower reports whether t is slower than the baseline at a site
// where a candidate was refused: those are confirmed last.
func (s *ranking) refusedSlower(t, base *Trial) bool {
	if t == base || base == nil {
		return false
	}
	z := sitesZ(len(s.refused))
	return slices.ContainsFunc(s.refused, func(g Site) bool { return s.slowerAt(t, base, opSize{g.Op, g.Bytes}, z) })
}

// guardSpread is the pooled launch spread at guard size g.
func (s *ranking) guardSpread(g opSize) float64 {
	c := s.cached()
	if sd, ok := c.guardSD[g]; ok {
		return sd
	}
	var groups [][]float64
	for _, t := range s.trials {
		if t.State.Usable() {
			_, lg := t.guardAt(g)
			groups = append(groups, lg)
		}
	}
	sd, df := model.PooledSD(groups)
	sd = max(sd, minSpread)
	if df < minSpreadDF {
		sd = defaultSpread
	}
	c.guardSD[g] = sd
	return sd
}

// leaders returns up to n usable trials with the best score estimates.
func (s *ranking) leaders(n int) []*Trial {
	_, arms := s.arms()
	ok := slices.DeleteFunc(arms, func(t *Trial) bool { return !t.blockRanked() })
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].logScore(s.sizes) < ok[j].logScore(s.sizes) }) // cached
	return ok[:min(n, len(ok))]
}

// candidate picks the config to confirm: the best by rankScore, configs
// the guard filter expects to fail, or measured slower where a refusal
// was made, ranked after the others but never excluded. No preference for
// fewer knobs: on noisy estimates it recommended the worse config; NCCL's
// plan drops no-op knobs instead (simplest). nil when no other config has
// a usable scored launch.
func (s *ranking) candidate(base *Trial) *Trial {
	c := s.cached()
	if c.candidateN && c.candBase == base {
		return c.candidate
	}
	sigma := s.spread()
	type ranked struct {
		t              *Trial
		score          float64
		refused, guard bool
	}
	var pool []ranked
	for _, t := range s.trials {
		if t == base || !t.State.Usable() || len(t.Explore) == 0 || s.plan.runsDefaults(t) || !t.blockRanked() {
			// It runs NCCL's own plan: nothing to confirm.
			continue
		}
		if s.ruledOut != nil && s.ruledOut(t) {
			continue
		}
		if base != nil && s.plan.read() && s.plan.keyOf(t.Config) == s.plan.keyOf(base.Config) {
			// Likewise a config proved to run the baseline's plan.
			continue
		}
		sc := s.rankScore(t, sigma)
		if math.IsInf(sc, 1) {
			continue
		}
		pool = append(pool, ranked{t, sc, s.refusedSlower(t, base), s.guardFails(t)})
	}
	c.candidate, c.candidateN, c.candBase = nil, true, base
	if len(pool) > 0 {
		sort.SliceStable(pool, func(i, j int) bool {
			if pool[i].refused != pool[j].refused {
				return !pool[i].refused
			}
			if pool[i].guard != pool[j].guard {
				return !pool[i].guard
			}
			return pool[i].score < pool[j].score
		})
		c.candidate = pool[0].t
	}
	return c.candidate
}

// runnerUp is the config ranked second, if it may still overtake the
// candidate (model.Plausible); nil otherwise.
func (s *ranking) runnerUp(base *Trial) *Trial {
	c := s.candidate(base)
	if c == nil {
		return nil
	}
	sigma := s.spread()
	var best *Trial
	bestScore := math.Inf(1)
	for _, t := range s.trials {
		if t == base || t == c || !t.State.Usable() || len(t.Explore) == 0 || len(t.Explore) >= s.maxLaunches || !t.blockRanked() {
			continue
		}
		if n, _ := t.scoreStats(s.sizes); n == 0 {
			continue
		}
		pair := []model.Arm{{Launches: c.Explore}, {Launches: t.Explore}}
		if model.Plausible(pair, s.sizes, 1) && s.rankScore(t, sigma) < bestScore {
			best, bestScore = t, s.rankScore(t, sigma)
		}
	}
	return best
}

// arms are the candidates the planner ranks.
func (s *ranking) arms() ([]model.Arm, []*Trial) {
	var arms []model.Arm
	var trials []*Trial
	for _, t := range s.trials {
		if t.State.Usable() && len(t.Explore) > 0 && !s.guardFails(t) {
			arms = append(arms, model.Arm{Launches: t.Explore})
			trials = append(trials, t)
		}
	}
	return arms, trials
}

// guardPenalty is how far (in log time) t is slower than the baseline at
// its worst guard size, beyond the minimum effect.
func (s *ranking) guardPenalty(t, base *Trial) float64 {
	worst := 0.0
	for _, g := range s.guard {
		tm, _ := t.guardAt(g)
		bm, _ := base.guardAt(g)
		if tm <= 0 || bm <= 0 {
			continue
		}
		worst = math.Max(worst, math.Log(tm/bm)-math.Log(1+s.minEffect))
	}
	return worst
}
