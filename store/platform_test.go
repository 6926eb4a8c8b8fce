package store

import (
	"fmt"
	"testing"
)

// TestPlatformDifferences: what both platforms recorded and disagree on,
// in order; a field either left empty is no difference.
func TestPlatformDifferences(t *testing.T) {
	spark4 := Platform{Ranks: 4, Nodes: 4, Transport: "IB", GPU: "NVIDIA GB10", NCCLVersion: "2.30.7"}
	for _, tc := range []struct {
		a, b   Platform
		want   string
		fabric bool
	}{
		{spark4, spark4, "[]", false},
		{spark4, Platform{Ranks: 2, Nodes: 2, Transport: "IB"}, "[ranks 4 vs 2 nodes 4 vs 2]", true},
		{Platform{Ranks: 2, Nodes: 2, Transport: "Socket"}, Platform{Ranks: 2, Nodes: 1, Transport: "P2P"}, "[nodes 2 vs 1 transport Socket vs P2P]", true},
		{spark4, Platform{NCCLVersion: "2.28.3"}, "[NCCL 2.30.7 vs 2.28.3]", false},
		{spark4, Platform{}, "[]", false},
	} {
		d := tc.a.Differences(tc.b)
		fabric := false
		for _, x := range d {
			fabric = fabric || x.Fabric()
		}
		if got := fmt.Sprint(d); got != tc.want || fabric != tc.fabric {
			t.Errorf("%+v vs %+v: %s (fabric %v), want %s (%v)", tc.a, tc.b, got, fabric, tc.want, tc.fabric)
		}
	}
}
