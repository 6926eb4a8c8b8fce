package export

import "github.com/nccltune/nccltune/internal/nccl"

// The example tuner plugin spells algorithms and protocols in lower case
// with underscores (NCCL's own spellings are nccl.AlgoName and
// nccl.ProtoName).
var (
	pluginAlgos  = map[string]string{"tree": "tree", "ring": "ring", "collnetdirect": "collnet_direct", "collnetchain": "collnet_chain", "nvls": "nvls", "nvlstree": "nvls_tree", "pat": "pat"}
	pluginProtos = map[string]string{"ll": "ll", "ll128": "ll128", "simple": "simple"}
	// pluginCollectives are the collectives the example plugin reads;
	// any other name it silently takes as allreduce.
	pluginCollectives = map[string]string{"allreduce": "allreduce", "allgather": "allgather", "reducescatter": "reducescatter", "broadcast": "broadcast", "reduce": "reduce"}
)

// PluginCollective is the example tuner plugin's name for a collective
// ("AllReduce", "all_reduce" → "allreduce"); ok is false for one it does
// not know (it would read it as allreduce).
func PluginCollective(s string) (string, bool) {
	n, ok := pluginCollectives[nccl.FoldName(s)]
	return n, ok
}

// PluginAlgo is the example tuner plugin's name for an algorithm ("RING"
// → "ring", "NVLS_TREE" → "nvls_tree"); ok is false for one it does not
// know (it would read it as ring).
func PluginAlgo(s string) (string, bool) {
	n, ok := pluginAlgos[nccl.FoldName(s)]
	return n, ok
}

// PluginProto is the example tuner plugin's name for a protocol ("SIMPLE"
// → "simple"); ok is false for one it does not know (it would read it as
// simple).
func PluginProto(s string) (string, bool) {
	n, ok := pluginProtos[nccl.FoldName(s)]
	if !ok {
		return nccl.FoldName(s), false
	}
	return n, true
}
