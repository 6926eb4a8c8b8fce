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
// the one three-knob config, so it is the best config found.
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
	for _, tt := range tests {
		for seed := int64(1); seed <= 3; seed++ {
			o := DefaultOptions()
			o.Band = nccl.Band{Min: 64 << 10, Max: 256 << 10}
			o.Guard, o.Seed = DefaultGuard(o.Band), seed
			space, err := ParseSpace([]string{"NCCL_PROTO=Simple", "NCCL_MAX_NCHANNELS=" + tt.channels, "NCCL_ALGO=Ring"}, true)
			if err != nil {
				t.Fatal(err)
			}
			o.Space, o.Sampler = space, "grid"
			res, _, _ := runStudy(t, "spark4", o)
			if !res.Recommend || res.Env().Key() != tt.want {
				t.Errorf("cap %s, seed %d: recommended %q (recommend %v: %s), want %q", tt.channels, seed, res.Env().Key(), res.Recommend, res.Reason, tt.want)
			}
			d, ok := nccl.FindDrop(res.Dropped, "NCCL_ALGO")
			switch {
			case ok != tt.dropped:
				t.Errorf("cap %s, seed %d: NCCL_ALGO dropped %v (%+v), want %v", tt.channels, seed, ok, res.Dropped, tt.dropped)
			case ok && (d.Value != "Ring" || !strings.Contains(d.Reason, "RING")):
				t.Errorf("cap %s, seed %d: dropped %+v, want NCCL_ALGO=Ring with the algorithm NCCL chooses", tt.channels, seed, d)
			}
		}
	}
}
