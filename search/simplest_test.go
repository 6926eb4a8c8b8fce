package search

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// TestMinimalAfterTheOtherKnobs: a knob is dropped from the
// recommendation when NCCL runs the same plan without it beside the rest
// of the config, not only when it changes nothing beside NCCL's defaults.
// On the simulated four Sparks at 64K–256K (guard 512K) NCCL's defaults run
// Tree/LL at 64K, so NCCL_ALGO=Ring changes the defaults' plan; under
// NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 NCCL's tuner already picks
// Ring/Simple at every size (one channel's bandwidth makes Tree's lower
// latency lose from 64K), so there NCCL_ALGO=Ring changes nothing and must
// go. Under NCCL_MAX_NCHANNELS=2 NCCL still runs Tree/Simple at 64K:
// NCCL_ALGO=Ring changes the plan there and must stay. The space holds
// the one three-knob config, so it is the best config found. A workload
// is judged alike, at every size it calls: the same sizes timed (--calls),
// alone and beside all_gather 1M, where the debug read of the config
// without the list launches only the op whose plan it leaves in doubt.
func TestMinimalAfterTheOtherKnobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		channels string
		want     string // the recommended env
		dropped  bool   // NCCL_ALGO=Ring among Result.Dropped
	}{
		{"1", "NCCL_MAX_NCHANNELS=1 NCCL_PROTO=Simple", true},
		{"2", "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=2 NCCL_PROTO=Simple", false},
	}
	band := []string{"all_reduce:65536:100", "all_reduce:131072:100", "all_reduce:262144:100"}
	for _, calls := range [][]string{nil, band, append(band, "all_gather:1048576:20")} {
		for _, tt := range tests {
			for seed := int64(1); seed <= 3; seed++ {
				o := DefaultOptions()
				o.Band = nccl.Band{Min: 64 << 10, Max: 256 << 10}
				o.Guard, o.Seed = DefaultGuard(o.Band), seed
				if calls != nil {
					w := timedFabric{calls: calls}.workload(t)
					o.Workload, o.Op, o.Band = w, w[0].Op, Hull(w)
					o.Guard, o.GuardOps = DefaultGuardFor(w), DefaultGuardOps(w)
					o.Budget = o.DefaultBudget()
				}
				space, err := ParseSpace([]string{"NCCL_PROTO=Simple", "NCCL_MAX_NCHANNELS=" + tt.channels, "NCCL_ALGO=Ring"}, true)
				if err != nil {
					t.Fatal(err)
				}
				o.Space, o.Sampler = space, "grid"
				res, _, _ := runStudy(t, "spark4", o)
				if !res.Recommend || res.Env().Key() != tt.want {
					t.Errorf("calls %v, cap %s, seed %d: recommended %q (recommend %v: %s), want %q", calls, tt.channels, seed, res.Env().Key(), res.Recommend, res.Reason, tt.want)
				}
				d, ok := nccl.FindDrop(res.Dropped, "NCCL_ALGO")
				switch {
				case ok != tt.dropped:
					t.Errorf("calls %v, cap %s, seed %d: NCCL_ALGO dropped %v (%+v), want %v", calls, tt.channels, seed, ok, res.Dropped, tt.dropped)
				case ok && (d.Value != "Ring" || !strings.Contains(d.Reason, "RING")):
					t.Errorf("calls %v, cap %s, seed %d: dropped %+v, want NCCL_ALGO=Ring with the algorithm NCCL chooses", calls, tt.channels, seed, d)
				}
			}
		}
	}
}
