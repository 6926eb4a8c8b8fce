package export

import "github.com/nccltune/nccltune/internal/nccl"

// PluginCollective is the example tuner plugin's name for a collective
// ("AllReduce", "all_reduce" → "allreduce"); ok is false for one it does
// not know.
func PluginCollective(s string) (string, bool) { return pluginName(nccl.PerFunctionNames(), s) }

// PluginAlgo is the example tuner plugin's name for an algorithm ("RING"
// → "ring"); ok is false for one it does not know.
func PluginAlgo(s string) (string, bool) { return pluginName(nccl.ExamplePluginAlgos, s) }

// PluginProto is the example tuner plugin's name for a protocol ("SIMPLE"
// → "simple"); ok is false for one it does not know.
func PluginProto(s string) (string, bool) {
	if n, ok := pluginName(nccl.ExamplePluginProtos, s); ok {
		return n, true
	}
	return nccl.FoldName(s), false
}

// pluginName is the one of the plugin's names that s spells (NCCL's
// spellings: nccl.FoldName), "" and false for none.
func pluginName(names []string, s string) (string, bool) {
	f := nccl.FoldName(s)
	for _, n := range names {
		if nccl.FoldName(n) == f {
			return n, true
		}
	}
	return "", false
}
