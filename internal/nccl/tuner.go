package nccl

import "strings"

// BlackwellCC is the compute capability of a Blackwell GPU named as
// nccl-tests prints it ("NVIDIA GB10" → "12.1", "NVIDIA B200" → "10.0"),
// "" for any other GPU: NCCL's log does not print the capability. The one
// home of "is this GPU Blackwell", for the tuner CSV's header, verify and
// doctor.
func BlackwellCC(gpu string) string {
	fields := strings.Fields(gpu)
	for i, f := range fields {
		switch f {
		case "GB10":
			return "12.1"
		case "B100", "B200", "GB200":
			return "10.0"
		case "B300", "GB300":
			return "10.3"
		case "Blackwell": // "NVIDIA RTX PRO 6000 Blackwell Server Edition"
			return "12.0"
		}
		// "NVIDIA GeForce RTX 5090"
		if f == "RTX" && i+1 < len(fields) && len(fields[i+1]) == 4 && strings.HasPrefix(fields[i+1], "50") {
			return "12.0"
		}
	}
	return ""
}

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
	return nodes >= 3 && BlackwellCC(gpu) != "", true
}

// ExamplePluginInit says what the example plugin's pluginInit changes in
// NCCL's cost model, in the words the tuner CSV's header and verify use.
const ExamplePluginInit = "its pluginInit caps NCCL's per-channel Tree bandwidth at 15 GB/s (NCCL's own 24) and Ring/LL128 at 20 GB/s " +
	"(NCCL's own 40 in 2.30, 73.4 in 2.28) on Blackwell GPUs at 3 or more nodes (plugin.c:304-307 in NCCL 2.30.7), and sets NCCL's " +
	"NVLS network latency to 24 us on any GPU (used only by NVLS across nodes): NCCL's own algorithm and protocol choices change there " +
	"even where no row matches"

// ExamplePluginAlgos and ExamplePluginProtos are the example tuner
// plugin's names of NCCL's algorithms and protocols (its CSV's, lower
// case with underscores), in NCCL's index order; its collectives are
// PerFunctionNames. The tuner CSV export writes them and the simulated
// plugin reads them: the one list.
var (
	ExamplePluginAlgos  = []string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	ExamplePluginProtos = []string{"ll", "ll128", "simple"}
)
