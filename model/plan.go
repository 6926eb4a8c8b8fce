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

// Plan is NextLaunch's answer with its reasoning, for logs and tests.
type Plan struct {
	// Arm is the index of the config to launch next; -1 when Done.
	Arm int
	// Done is true when no launch would change the ranking's verdict.
	Done bool
	// Leader and RunnerUp are the two best arms by band score (-1 if none).
	Leader, RunnerUp int
	// Comparison is RunnerUp (baseline) against Leader (candidate), when
	// both have launches; nil otherwise.
	Comparison *Comparison
	// Reason is one plain sentence.
	Reason string
}

// NextLaunch says which config to launch next during exploration, so that
// launches go where they settle the ranking, and when to stop adding them.
// It is PlanNext without the reasoning. maxPerArm caps launches per
// config; 0 means DefaultMaxPerArm.
func NextLaunch(arms []Arm, sizes []int64, opt Options, maxPerArm int) (arm int, done bool) {
	p := PlanNext(arms, sizes, opt, maxPerArm)
	return p.Arm, p.Done
}

// PlanNext applies the launch rule:
//
//  1. Rank the arms with at least one scored launch by band score (lower
//     is better; ties go to the arm with more launches, then the lower
//     index). The leader and the runner-up are the first two. With fewer
//     than two ranked arms there is nothing to settle: done.
//  2. If either leader has fewer than MinLaunchesForDecision launches, and
//     is under the cap, launch the one with fewer (the leader on a tie):
//     no verdict is possible before that.
//  3. Compare the runner-up (as baseline) with the leader (as candidate).
//     Done when their speedup interval excludes 1 (the leader is
//     separated: the intervals of the two arms no longer overlap in the
//     sense that matters, their ratio), or when it lies inside
//     [1/(1+MinEffect), 1+MinEffect] (the two are equivalent within the
//     minimum effect, so more launches could not make either worth
//     recommending over the other).
//  4. Otherwise launch whichever of the two has fewer launches and is
//     under the cap (the leader on a tie); when both are at the cap, done.
//
// A launch that changes the ranking moves the attention to the new
// leaders, which is how a config crowned by one lucky launch (the winner's
// curse) is caught: it gets launches until it either stays ahead or falls
// back. The search interleaves this with exploration: after each new
// config's first launch it calls NextLaunch and, until done, spends launches
// where it says; then it proposes the next config. The verdict is about
// the exploration ranking only: the gain reported to the user comes from
// the separate interleaved confirmation against the baseline.
func PlanNext(arms []Arm, sizes []int64, opt Options, maxPerArm int) Plan {
	opt, _ = opt.resolve()
	if maxPerArm <= 0 {
		maxPerArm = DefaultMaxPerArm
	}
	p := Plan{Arm: -1, Leader: -1, RunnerUp: -1}
	type ranked struct {
		arm, n int
		score  float64
	}
	var rs []ranked
	for i, a := range arms {
		an := analyse(a.Launches, sizes, false)
		scores, _ := an.validScores()
		score := an.bandScore()
		if len(scores) == 0 || math.IsNaN(score) {
			continue
		}
		rs = append(rs, ranked{i, len(scores), score})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return b.n - a.n // more launches first; stable keeps index order
	})
	if len(rs) < 2 {
		p.Done = true
		p.Reason = "fewer than two configs have a scored launch: nothing to rank"
		if len(rs) == 1 {
			p.Leader = rs[0].arm
		}
		return p
	}
	lead, run := rs[0], rs[1]
	p.Leader, p.RunnerUp = lead.arm, run.arm
	// pick returns the arm of the two with fewer launches under the cap.
	pick := func() (int, bool) {
		switch {
		case lead.n <= run.n && lead.n < maxPerArm:
			return lead.arm, true
		case run.n < maxPerArm:
			return run.arm, true
		case lead.n < maxPerArm:
			return lead.arm, true
		}
		return -1, false
	}
	need := MinLaunchesForDecision(opt)
	if lead.n < need || run.n < need {
		if a, ok := pick(); ok {
			p.Arm = a
			p.Reason = fmt.Sprintf("the two leaders need %d launches each before they can be told apart", need)
			return p
		}
		p.Done = true
		p.Reason = fmt.Sprintf("the per-config cap of %d launches is below the %d needed to tell configs apart", maxPerArm, need)
		return p
	}
	c := Compare(arms[run.arm].Launches, arms[lead.arm].Launches, sizes, opt)
	p.Comparison = &c
	if c.CIOK && (c.Lo > 1 || c.Hi < 1) {
		p.Done = true
		p.Reason = fmt.Sprintf("the leader is separated from the runner-up (speedup interval %.3f–%.3f excludes 1)", c.Lo, c.Hi)
		return p
	}
	if c.CIOK && c.Lo >= 1/(1+opt.MinEffect) && c.Hi <= 1+opt.MinEffect {
		p.Done = true
		p.Reason = fmt.Sprintf("the leader and runner-up are equivalent within the %.0f %% minimum effect (interval %.3f–%.3f)",
			100*opt.MinEffect, c.Lo, c.Hi)
		return p
	}
	if a, ok := pick(); ok {
		p.Arm = a
		p.Reason = "the leader and runner-up are not yet told apart"
		return p
	}
	p.Done = true
	p.Reason = fmt.Sprintf("the leader and runner-up are not told apart, but both reached the cap of %d launches", maxPerArm)
	return p
}

// bandScore is the geometric mean over sizes of the per-size medians over
// launches, as Summary.ScoreUS, without the intervals and warnings.
func (a *analysis) bandScore() float64 {
	if len(a.sizes) == 0 {
		return math.NaN()
	}
	meds := make([]float64, 0, a.n)
	logSum := 0.0
	for si := range a.sizes {
		meds = meds[:0]
		for li := range a.medians {
			if m := a.medians[li][si]; !math.IsNaN(m) {
				meds = append(meds, m)
			}
		}
		if len(meds) == 0 {
			return math.NaN()
		}
		slices.Sort(meds)
		logSum += math.Log(sortedMedian(meds))
	}
	return math.Exp(logSum / float64(len(a.sizes)))
}
