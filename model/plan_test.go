package model

import (
	"strings"
	"testing"
)

func arms(ls ...[]Launch) []Arm {
	out := make([]Arm, len(ls))
	for i, l := range ls {
		out[i] = Arm{Launches: l}
	}
	return out
}

func TestPlanNextRules(t *testing.T) {
	t.Parallel()
	sizes := []int64{m1}
	fast := oneSize(50, 51, 52, 53, 54, 55)
	slow := oneSize(100, 101, 102, 103, 104, 105)
	for _, tc := range []struct {
		name     string
		arms     []Arm
		cap      int
		wantArm  int
		wantDone bool
		reason   string
	}{
		{"no arms", nil, 10, -1, true, "fewer than two"},
		{"one arm", arms(slow), 10, -1, true, "fewer than two"},
		{"arms without valid launches do not count", arms(slow, oneSize(-1)), 10, -1, true, "fewer than two"},
		{"the leader first, until it has 4", arms(slow[:1], fast[:3]), 10, 1, false, "leader needs 4 launches"},
		{"a close single launch is a plausible challenger", arms(oneSize(52), fast[:4]), 10, 0, false, "config 0 could still beat the leader"},
		{"a far single launch is not", arms(slow[:1], fast[:4]), 10, -1, true, "no other config could plausibly beat it"},
		{"a plausible challenger, separated", arms(oneSize(50.4, 50.5, 50.6, 50.7), oneSize(50, 50.1, 50.2, 50.3)), 10, -1, true, "separated from"},
		{"the most plausible challenger first", arms(oneSize(55), oneSize(50.5, 51.5, 52.5), fast[:4]), 10, 1, false, "config 1 could still"},
		{"not told apart: the one with fewer launches", arms(oneSize(1, 3, 5, 7, 9), oneSize(2, 4, 6, 8)), 10, 1, false, "not yet told apart"},
		{"not told apart: the leader on a tie", arms(oneSize(1, 3, 5, 7), oneSize(2, 4, 6, 8)), 10, 0, false, "not yet told apart"},
		{"cap reached", arms(oneSize(1, 3, 5, 7), oneSize(2, 4, 6, 8)), 4, -1, true, "reached the cap of 4"},
		{"cap below the minimum", arms(slow[:2], fast[:2]), 2, -1, true, "below the 4 needed"},
		{"equivalent within the minimum effect", arms(
			oneSize(100, 100.1, 100.2, 100.3, 100.4, 100.5, 100.6, 100.7, 100.8, 100.9),
			oneSize(100.05, 100.15, 100.25, 100.35, 100.45, 100.55, 100.65, 100.75, 100.85, 100.95)), 20, -1, true, "equivalent within the 3 % minimum effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanNext(tc.arms, sizes, DefaultOptions(), tc.cap)
			if p.Arm != tc.wantArm || p.Done != tc.wantDone || !strings.Contains(p.Reason, tc.reason) {
				t.Errorf("got arm %d done %v (%s); want arm %d done %v (%q)", p.Arm, p.Done, p.Reason, tc.wantArm, tc.wantDone, tc.reason)
			}
		})
	}
}

// TestPlausible is PlanNext's step 3 asked of one arm: the loopback's LL
// configs (2.4× slower than the defaults at their first launch) are out
// of reach; a close one, the leader and arms the rule cannot judge are not.
func TestPlausible(t *testing.T) {
	t.Parallel()
	sizes := []int64{m1}
	base := oneSize(1307, 1318)
	for _, tc := range []struct {
		name string
		arms []Arm
		arm  int
		want bool
	}{
		{"2.4x slower than the leader", arms(base, oneSize(3194)), 1, false},
		{"2 % slower", arms(base, oneSize(1340)), 1, true},
		{"the leader", arms(oneSize(3194, 3300), oneSize(1307)), 1, true},
		{"no arm measured twice: no spread", arms(oneSize(1307), oneSize(3194)), 1, true},
		{"one ranked arm", arms(base, oneSize(-1)), 1, true},
		{"an arm without a scored launch", arms(base, oneSize(3194), nil), 2, true},
		{"a wide spread reaches further", arms(oneSize(1000, 2000), oneSize(2400)), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plausible(tc.arms, sizes, tc.arm); got != tc.want {
				t.Errorf("Plausible(arm %d) = %v, want %v", tc.arm, got, tc.want)
			}
		})
	}
}

// TestPlanFindsTheBest drives the planner like the search would: five
// configs, one launch each from exploration, then launches where
// PlanNext says until it is done. With true speedups 1, 1.02, 1.10, 1.25
// and 1 (fabric noise, 5 % launch spread) the leader at the end must be
// the 1.25 config in at least 95 % of runs. With five identical configs
// the planner must stop (equivalent or capped) and rarely call a winner.
func TestPlanFindsTheBest(t *testing.T) {
	t.Parallel()
	runs := 60
	if testing.Short() {
		runs = 20
	}
	const limit = 12
	for _, tc := range []struct {
		name     string
		speedups []float64
		best     int // -1: none is better
	}{
		{"one is best", []float64{1, 1.02, 1.10, 1.25, 1}, 3},
		{"all the same", []float64{1, 1, 1, 1, 1}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := spark4Fabric()
			r := newRand(21)
			right, separated, launches := 0, 0, 0
			for range runs {
				as := make([]Arm, len(tc.speedups))
				for i, s := range tc.speedups {
					as[i].Launches = f.launches(r, 1, s)
				}
				var p LaunchPlan
				for steps := 0; ; steps++ {
					if steps > len(as)*limit {
						t.Fatal("the planner never said done")
					}
					p = PlanNext(as, band, DefaultOptions(), limit)
					if p.Done {
						break
					}
					as[p.Arm].Launches = append(as[p.Arm].Launches, f.launch(r, tc.speedups[p.Arm]))
					launches++
				}
				if p.Leader == tc.best {
					right++
				}
				if strings.Contains(p.Reason, "is separated") {
					separated++
				}
			}
			t.Logf("%s: right leader %d/%d, separated %d, %.1f extra launches per run", tc.name, right, runs, separated, float64(launches)/float64(runs))
			if tc.best >= 0 && right < runs*95/100 {
				t.Errorf("found the best config in %d of %d runs, want ≥ 95 %%", right, runs)
			}
			if tc.best < 0 && separated > runs*15/100 {
				t.Errorf("called a winner among identical configs in %d of %d runs, want ≤ 15 %%", separated, runs)
			}
		})
	}
}
