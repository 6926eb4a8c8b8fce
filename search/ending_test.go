package search

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// TestSettledStudyLeavesTheRestUnspent: on spark4 with a space of four
// configs (every distinct plan explored long before the budget) and a
// gain of ×4, the confirmation decides at its first look and the study
// ends there: the launches left are unspent, and the result says why.
// With the budget spent (a space too large to exhaust), nothing is said.
func TestSettledStudyLeavesTheRestUnspent(t *testing.T) {
	t.Parallel()
	space, err := ParseSpace([]string{"NCCL_PROTO=unset,Simple", "NCCL_MAX_NCHANNELS=unset,8"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 3; seed++ {
		o := spark4Options(seed)
		o.Space = space
		res, _, l := runStudy(t, "spark4", o)
		confirms := 0
		for _, r := range l.launches {
			if r.Phase == vocab.PhaseConfirm {
				confirms++
			}
		}
		if res.Stopped != "space" || !res.Recommend || res.Looks != 1 {
			t.Fatalf("seed %d: stopped %q, recommend %v, looks %d; want the space exhausted and the first look deciding (%s)", seed, res.Stopped, res.Recommend, res.Looks, res.Reason)
		}
		if res.Unspent != o.Budget-res.Launches || res.Unspent < 20 || res.Launches != len(l.launches) {
			t.Errorf("seed %d: %d launches made, %d counted, %d unspent of %d", seed, len(l.launches), res.Launches, res.Unspent, o.Budget)
		}
		if confirms != 2*o.ConfirmLaunches {
			t.Errorf("seed %d: %d confirmation launches, want the first look's %d", seed, confirms, 2*o.ConfirmLaunches)
		}
		if !strings.Contains(res.Settled, "every distinct NCCL plan") || !strings.Contains(res.Settled, "left unspent") {
			t.Errorf("seed %d: settled %q", seed, res.Settled)
		}
	}
	res, _, _ := runStudy(t, "spark4", spark4Options(1))
	if res.Stopped == "space" || res.Settled != "" {
		t.Errorf("default space: stopped %q, settled %q; want the budget spent and nothing said", res.Stopped, res.Settled)
	}
}

// A config that is another with a list knob beside it is the same
// candidate while exploring (their plans only their logs can tell apart):
// settling the leaders does not time two spellings of one plan against
// each other. Configs with different plan-changing knobs are apart.
func TestCandidateFamilies(t *testing.T) {
	t.Parallel()
	p := newPlanner("", nccl.PowersOfTwo(512<<10, 4<<20), []int64{8 << 20}, false)
	p.ops[0].native = &nccl.Native{Plan: nccl.Plan{1 << 20: {Algo: "RING", Proto: "SIMPLE", Channels: 2}}, Channels: 2, NICs: 1}
	cap1 := nccl.Config{"NCCL_MAX_NCHANNELS": "1"}
	for _, tc := range []struct {
		a, b nccl.Config
		same bool
	}{
		{cap1, nccl.Config{"NCCL_MAX_NCHANNELS": "1", "NCCL_PROTO": "Simple"}, true},
		{cap1, nccl.Config{"NCCL_MAX_CTAS": "1", "NCCL_ALGO": "Ring", "NCCL_PROTO": "^LL128"}, true},
		{nccl.Config{"NCCL_ALGO": "Tree"}, nccl.Config{"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}, true},
		{cap1, nccl.Config{"NCCL_ALGO": "Tree"}, false},
		{cap1, nccl.Config{"NCCL_MAX_NCHANNELS": "4"}, false},
	} {
		fa, fb := p.family(tc.a), p.family(tc.b)
		if meet := familiesMeet(fa, fb); meet != tc.same {
			t.Errorf("%s and %s: families %v and %v meet %v, want %v", tc.a, tc.b, fa, fb, meet, tc.same)
		}
	}
}
