package nccl

import (
	"regexp"
	"strings"
)

// blackwellName matches the device names of Blackwell GPUs (compute
// capability 10.x and 12.x) as nccl-tests prints them: "NVIDIA B200",
// "NVIDIA GB200", "NVIDIA GB10", "NVIDIA GeForce RTX 5090", "NVIDIA RTX PRO
// 6000 Blackwell …".
var blackwellName = regexp.MustCompile(`(?i)blackwell|\bG?B[123]\d{1,2}\b|\bRTX 50\d0\b`)

// ExamplePluginRetunes reports whether loading NVIDIA's example tuner
// plugin changes NCCL's own choices on a communicator of nodes nodes whose
// GPU is gpu (its name as nccl-tests prints it), whatever its CSV holds:
// its pluginInit rewrites NCCL's Blackwell cost-model constants at the
// ≥ 3-node scale (plugins/tuner/example/plugin.c:304-307 in NCCL 2.30.7),
// which NCCL reads for compute capability ≥ 10.0 with nNodes ≥ 3
// (src/graph/tuning.cc: "index2 = nNodes <= 2 ? nNodes-1 : 2"). known is
// false when the GPU's name does not say (then neither can the caller).
func ExamplePluginRetunes(gpu string, nodes int) (retunes, known bool) {
	gpu = strings.TrimSpace(gpu)
	if gpu == "" || nodes <= 0 {
		return false, false
	}
	return nodes >= 3 && blackwellName.MatchString(gpu), true
}

// ExamplePluginInit says what the example plugin's pluginInit changes in
// NCCL's cost model, in the words the tuner CSV's header and verify use.
const ExamplePluginInit = "its pluginInit caps NCCL's per-channel Tree bandwidth at 15 GB/s (NCCL's own 24) and Ring/LL128 at 20 GB/s " +
	"(NCCL's own 40 in 2.30, 73.4 in 2.28) on Blackwell GPUs at 3 or more nodes (plugin.c:304-307 in NCCL 2.30.7), and sets NCCL's " +
	"NVLS network latency to 24 us on any GPU (used only by NVLS across nodes): NCCL's own algorithm and protocol choices change there " +
	"even where no row matches"
