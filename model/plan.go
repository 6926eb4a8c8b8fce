package model

import (
	"fmt"
	"math"
	"slices"
)

// Arm is one config's launches so far, as the planner sees them.
type Arm struct {
	Launches []Launch
}

// LaunchPlan is PlanNext's answer with its reasoning, for logs and tests.
type LaunchPlan struct {
	// Arm is the index of the config to launch next; -1 when Done.
	Arm int
	// Done: no launch within the cap would change the verdict.
	Done bool
	// Leader is the best arm by band score (-1 if none).
	Leader int
	// Reason is one plain sentence.
	Reason string
}

// PlanBeta is the width of PlanNext's plausibility bounds in standard
// deviations of a log launch score (2 ≈ 97.7 % one-sided).
const PlanBeta = 2.0

// PlanNext says which config to launch next during exploration, and when
// to stop adding launches; maxPerArm caps the launches of any one config
// (0 means DefaultMaxPerArm). As in best-arm identification (LUCB), the
// leader is settled against its most plausible challenger, not simply the
// runner-up, so a good config with one unlucky launch gets a second look:
//
//  1. Rank the arms with a scored launch by band score (lower is better;
//     ties go to more launches, then the lower index); fewer than two: done.
//  2. Launch the leader until it has MinLaunchesForDecision launches.
//  3. σ is the pooled spread of log launch scores (at least 1 %). Arms
//     whose optimistic bound (log score − PlanBeta·σ/√n) is not below the
//     leader's pessimistic one (+ PlanBeta·σ/√n) get no more launches.
//  4. Plausible challengers, most optimistic first: one with too few
//     launches gets the next; else it is settled when the rank interval of
//     the leader over it excludes 1 or lies within ±MinEffect, and an
//     unsettled pair launches the one with fewer (the leader on a tie) or
//     is given up at the cap.
//  5. When every plausible challenger is settled or given up: done.
//
// The verdict is about the exploration ranking only; the gain reported
// comes from the interleaved confirmation against the baseline (Compare).
func PlanNext(arms []Arm, sizes []int64, opt Options, maxPerArm int) LaunchPlan {
	opt, _ = opt.resolve()
	if maxPerArm <= 0 {
		maxPerArm = DefaultMaxPerArm
	}
	p := LaunchPlan{Arm: -1, Leader: -1}
	ranked := rankArms(arms, sizes)
	if len(ranked) < 2 {
		p.Done = true
		p.Reason = "fewer than two configs have a scored launch: nothing to rank"
		if len(ranked) == 1 {
			p.Leader = ranked[0].arm
		}
		return p
	}
	lead := ranked[0]
	p.Leader = lead.arm
	need := MinLaunchesForDecision(opt)
	if lead.n < need {
		if lead.n < maxPerArm {
			p.Arm = lead.arm
			p.Reason = fmt.Sprintf("the leader needs %d launches before it can be compared with anything", need)
		} else {
			p.Done = true
			p.Reason = fmt.Sprintf("the per-config cap of %d launches is below the %d needed to tell configs apart", maxPerArm, need)
		}
		return p
	}
	sigma, _ := pooledLogSD(ranked)
	settle := settling{lead: lead, need: need, maxPerArm: maxPerArm, opt: opt}
	if settle.next(&p, plausibleChallengers(ranked[1:], sigma), leaderBound(lead, sigma)) {
		return p
	}
	p.Done = true
	p.Reason = settle.doneReason()
	return p
}

// rankedArm is one arm with a scored launch, as PlanNext ranks it.
type rankedArm struct {
	arm, n   int
	logScore float64   // log band score
	logs     []float64 // log launch scores
	bound    float64   // optimistic (challenger) or pessimistic (leader) bound
}

// rankArms ranks the arms with a scored launch by band score, best
// first; ties go to more launches, then the lower index (step 1).
func rankArms(arms []Arm, sizes []int64) []rankedArm {
	var ranked []rankedArm
	for i, a := range arms {
		an := analyse(a.Launches, sizes, false)
		scores, _ := an.validScores()
		score := an.bandScore()
		if len(scores) == 0 || math.IsNaN(score) {
			continue
		}
		ranked = append(ranked, rankedArm{arm: i, n: len(scores), logScore: math.Log(score), logs: logs(scores)})
	}
	slices.SortStableFunc(ranked, func(a, b rankedArm) int {
		if c := compareFloats(a.logScore, b.logScore); c != 0 {
			return c
		}
		return b.n - a.n // more launches first; stable keeps index order
	})
	return ranked
}

// Plausible reports whether arm i could still beat the leader of arms by
// PlanNext's rule (step 3). The leader is plausible, and so is every arm
// while the rule cannot be applied (no scored launch, fewer than two
// ranked arms, no spread to pool).
func Plausible(arms []Arm, sizes []int64, i int) bool {
	ranked := rankArms(arms, sizes)
	if len(ranked) < 2 || ranked[0].arm == i {
		return true
	}
	sigma, ok := pooledLogSD(ranked)
	if !ok {
		return true
	}
	for _, c := range plausibleChallengers(ranked[1:], sigma) {
		if c.arm == i {
			return c.bound < leaderBound(ranked[0], sigma)
		}
	}
	return true // no scored launch: nothing says it cannot win
}

// leaderBound is the leader's pessimistic bound (step 3).
func leaderBound(lead rankedArm, sigma float64) float64 {
	return lead.logScore + PlanBeta*sigma/math.Sqrt(float64(lead.n))
}

// pooledLogSD is the pooled standard deviation of log launch scores over
// arms with two or more launches, at least scaleFloor; ok false if none.
func pooledLogSD(ranked []rankedArm) (sd float64, ok bool) {
	groups := make([][]float64, len(ranked))
	for i, a := range ranked {
		groups[i] = a.logs
	}
	sd, df := PooledSD(groups)
	if df == 0 {
		return scaleFloor, false
	}
	return max(sd, scaleFloor), true
}

// plausibleChallengers gives each non-leader its optimistic bound and
// orders them most optimistic first (step 3).
func plausibleChallengers(others []rankedArm, sigma float64) []rankedArm {
	challengers := slices.Clone(others)
	for i := range challengers {
		challengers[i].bound = challengers[i].logScore - PlanBeta*sigma/math.Sqrt(float64(challengers[i].n))
	}
	slices.SortStableFunc(challengers, func(a, b rankedArm) int { return compareFloats(a.bound, b.bound) })
	return challengers
}

// compareFloats orders smaller first and, unlike cmp.Compare, ties a NaN
// with everything, so a stable sort keeps it where it was.
func compareFloats(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// settling is PlanNext settling the plausible challengers one by one
// (step 4), counting those settled and those given up at the cap.
type settling struct {
	lead            rankedArm
	need, maxPerArm int
	opt             Options
	settled         int
	givenUp         int
}

// next puts the next launch in p and reports true, or reports false when
// every plausible challenger is settled or given up.
func (s *settling) next(p *LaunchPlan, challengers []rankedArm, leaderBound float64) bool {
	lead, maxPerArm := s.lead, s.maxPerArm
	margin := math.Log(1 + s.opt.MinEffect)
	for _, c := range challengers {
		if c.bound >= leaderBound {
			break // this and every later challenger cannot plausibly win
		}
		if c.n < s.need {
			if c.n < maxPerArm {
				p.Arm = c.arm
				p.Reason = fmt.Sprintf("config %d could still beat the leader (config %d): it needs %d launches to be compared", c.arm, lead.arm, s.need)
				return true
			}
			s.givenUp++
			continue
		}
		iv := shiftInterval(c.logs, lead.logs, s.opt.Confidence)
		if iv.ok && (iv.lo > 0 || iv.lo >= -margin && iv.hi <= margin) {
			s.settled++
			continue
		}
		switch {
		case lead.n <= c.n && lead.n < maxPerArm:
			p.Arm = lead.arm
		case c.n < maxPerArm:
			p.Arm = c.arm
		case lead.n < maxPerArm:
			p.Arm = lead.arm
		default:
			s.givenUp++
			continue
		}
		p.Reason = fmt.Sprintf("the leader (config %d) and config %d are not yet told apart", lead.arm, c.arm)
		return true
	}
	return false
}

// doneReason says why nothing is left to settle (step 5).
func (s *settling) doneReason() string {
	switch {
	case s.settled == 0 && s.givenUp == 0:
		return fmt.Sprintf("the leader (config %d) is separated: no other config could plausibly beat it", s.lead.arm)
	case s.givenUp == 0:
		return fmt.Sprintf("the leader (config %d) is separated from, or equivalent within the %.0f %% minimum effect to, every config that could beat it",
			s.lead.arm, 100*s.opt.MinEffect)
	default:
		return fmt.Sprintf("the leader (config %d) is not told apart from %s, which reached the cap of %d launches",
			s.lead.arm, plural(s.givenUp, "one challenger", fmt.Sprintf("%d challengers", s.givenUp)), s.maxPerArm)
	}
}

// bandScore is the geometric mean over sizes of the per-size medians over
// launches, as Summary.ScoreUS, without the intervals and warnings.
func (a *analysis) bandScore() float64 {
	if len(a.sizes) == 0 {
		return math.NaN()
	}
	var meds []float64
	logSum := 0.0
	for si := range a.sizes {
		meds = a.column(si, meds[:0])
		if len(meds) == 0 {
			return math.NaN()
		}
		slices.Sort(meds)
		logSum += math.Log(sortedMedian(meds))
	}
	return math.Exp(logSum / float64(len(a.sizes)))
}
