package nccl

import "strings"

// BlackwellCC is the compute capability of a Blackwell GPU named as
// nccl-tests prints it ("NVIDIA GB10" → "12.1"), "" for any other GPU.
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
// plugin changes NCCL's own choices on nodes nodes of gpu, whatever its
// CSV holds: its init rewrites the Blackwell cost-model constants NCCL
// reads at 3 or more nodes. known is false when the GPU's name does not say.
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
// plugin's names of NCCL's algorithms and protocols, in NCCL's index order.
var (
	ExamplePluginAlgos  = []string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	ExamplePluginProtos = []string{"ll", "ll128", "simple"}
)
