package search

import (
	"context"
	"strings"
	"testing"
)

// TestCallsAtTheirOwnSize: a call is measured at its nearest power of two,
// but the process calls its own size, where NCCL may plan otherwise. On
// fabric 15 of the unseen probe's seed 1 (search/testdata/
// unseen-exact-size.json) study seed 1 shipped NCCL_MAX_NCHANNELS=32
// NCCL_PROTO=broadcast:LL, safe at 8M and 13.1 % slower at the
// 9701523-byte broadcast the process calls once. No study may ship a
// setting more than 5 % slower at a size the process calls (timedTruth
// judges there), and a refusal for a call's own size names the call and
// both sizes, and most studies still ship the best safe setting.
func TestCallsAtTheirOwnSize(t *testing.T) {
	t.Parallel()
	f := timedFabric{name: "unseen-exact-size", profile: "testdata/unseen-exact-size.json",
		calls: []string{"broadcast:399360:196", "broadcast:313344:10", "broadcast:479232:6", "broadcast:9701523:1"}}
	w := f.workload(t)
	prof := f.launcher(t, 0).prof
	_, safeStep, _, _ := bestSafe(prof, w, DefaultSpace(), prof.NCCLVersion)
	seeds, best, ownSize := 5, 0, 0
	for seed := int64(1); seed <= int64(seeds); seed++ {
		o := DefaultOptions()
		o.Seed = seed
		o.Workload, o.Op, o.Band = w, w[0].Op, Hull(w)
		o.ScopeLists = true
		o.Budget = o.DefaultBudget()
		res, err := Run(context.Background(), o, f.launcher(t, seed), newMemRecorder(t), nil, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr := timedTruth(prof, w, res.Env())
		if tr.worst > 1.05 {
			t.Errorf("seed %d: shipped %s, %.1f%% slower at %s (%s)", seed, res.Env(), 100*(tr.worst-1), tr.at, res.Reason)
		}
		if tr.worst <= 1.05 && tr.step <= 1.05*safeStep {
			best++
		}
		for _, r := range res.Refused {
			if !strings.Contains(r.Reason, "not shown safe at its own size") {
				continue
			}
			ownSize++
			if !strings.Contains(r.Reason, "broadcast of 9701523 bytes, measured at 8M") {
				t.Errorf("seed %d: a refusal for a call's own size names another call or no sizes: %s", seed, r.Reason)
			}
		}
		t.Logf("seed %d: %s (%s), ×%.2f of the best safe step, %d launches, %d refused", seed, res.Env(), res.Ending, tr.step/safeStep, res.Launches, len(res.Refused))
	}
	if ownSize == 0 {
		t.Errorf("no study refused a candidate for a call's own size")
	}
	// Safe winners (×6.8) stand at their own sizes: most seeds ship one.
	if best < seeds-1 {
		t.Errorf("the best safe setting in %d of %d studies, want at least %d", best, seeds, seeds-1)
	}
}
