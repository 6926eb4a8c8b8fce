package nccl

import "testing"

// NCCL_CROSS_NIC on several NICs per host: a value whose own log routes
// every channel through the defaults' NICs is a no-op from then on; one
// that moves a channel to another NIC, or whose log shows no routes,
// stays uncertain; one NIC or no network needs no log.
func TestLearnRoutes(t *testing.T) {
	defaults := []string{"00/0 0[0]-1[0] send IB/0", "01/0 0[0]-1[0] send IB/1", "00/0 3[0]-0[0] receive IB/0", "01/0 3[0]-0[0] receive IB/1"}
	plan := Plan{1 << 20: {Algo: "RING", Proto: "SIMPLE", Channels: 2}}
	for _, tc := range []struct {
		name   string
		value  string
		routes []string
		proved bool
	}{
		{"same routes", "0", defaults, true},
		{"fewer channels, same NICs", "1", defaults[:1], true},
		{"a channel on the other NIC", "1", []string{"00/0 0[0]-1[0] send IB/1", "01/0 0[0]-1[0] send IB/1"}, false},
		{"no routes in the log", "0", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Native{Plan: plan, Channels: 2, NICs: 2, NetRoutes: defaults}
			probe := Config{"NCCL_CROSS_NIC": tc.value}
			if n.Explain(probe).Certain {
				t.Fatal("certain before any log of the value")
			}
			if got := n.LearnRoutes(Native{Config: probe, NetRoutes: tc.routes}); got != tc.proved {
				t.Fatalf("LearnRoutes = %v, want %v", got, tc.proved)
			}
			r := n.Explain(Config{"NCCL_CROSS_NIC": tc.value, "NCCL_MAX_CTAS": "1"})
			dropped := len(r.Dropped) == 1 && r.Dropped[0].Rule == RuleSameRoutes
			if dropped != tc.proved || tc.proved && r.Reduced.Key() != "NCCL_MAX_CTAS=1" {
				t.Errorf("after the log: dropped %+v, reduced %s; want CROSS_NIC dropped %v", r.Dropped, r.Reduced, tc.proved)
			}
			other := map[string]string{"0": "1", "1": "0"}[tc.value]
			if n.Explain(Config{"NCCL_CROSS_NIC": other}).Certain {
				t.Errorf("NCCL_CROSS_NIC=%s proved by the log of =%s", other, tc.value)
			}
		})
	}
	for _, n := range []Native{{Plan: plan, NICs: 1}, {Plan: plan, NICs: 2, NoNetwork: true}} {
		if r := n.Explain(Config{"NCCL_CROSS_NIC": "1"}); !r.Certain || len(r.Reduced) != 0 {
			t.Errorf("NICs %d, no network %v: %+v; want CROSS_NIC dropped without a log", n.NICs, n.NoNetwork, r)
		}
	}
}
