package nccl

import "testing"

// The example plugin retunes NCCL on Blackwell at 3+ nodes only: GB10
// (DGX Spark, compute capability 12.1) is Blackwell.
func TestExamplePluginRetunes(t *testing.T) {
	for _, tc := range []struct {
		gpu            string
		nodes          int
		retunes, known bool
	}{
		{"NVIDIA GB10 (simulated)", 4, true, true},
		{"NVIDIA GB10", 3, true, true},
		{"NVIDIA GB10", 2, false, true},
		{"NVIDIA B200", 4, true, true},
		{"NVIDIA GB200", 8, true, true},
		{"NVIDIA GeForce RTX 5090", 3, true, true},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", 3, true, true},
		{"NVIDIA H200", 4, false, true},
		{"NVIDIA H100 80GB HBM3", 16, false, true},
		{"NVIDIA A100-SXM4-80GB", 4, false, true},
		{"", 4, false, false},
		{"NVIDIA GB10", 0, false, false},
	} {
		r, k := ExamplePluginRetunes(tc.gpu, tc.nodes)
		if r != tc.retunes || k != tc.known {
			t.Errorf("ExamplePluginRetunes(%q, %d) = %v, %v; want %v, %v", tc.gpu, tc.nodes, r, k, tc.retunes, tc.known)
		}
	}
}
