package nccl

import "testing"

func TestNCCLSpellings(t *testing.T) {
	for _, c := range []struct{ in, algo, proto string }{
		{"RING", "Ring", "RING"},
		{"COLLNET_DIRECT", "CollnetDirect", "COLLNET_DIRECT"},
		{"nvls_tree", "NVLSTree", "nvls_tree"},
		{"SIMPLE", "SIMPLE", "Simple"},
		{"ll128", "ll128", "LL128"},
		{"Bogus", "Bogus", "Bogus"},
	} {
		if got := AlgoName(c.in); got != c.algo {
			t.Errorf("AlgoName(%q) = %q, want %q", c.in, got, c.algo)
		}
		if got := ProtoName(c.in); got != c.proto {
			t.Errorf("ProtoName(%q) = %q, want %q", c.in, got, c.proto)
		}
	}
}
