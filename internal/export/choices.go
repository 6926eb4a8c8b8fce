package export

import "github.com/nccltune/nccltune/internal/nccl"

// PluginCollective is the example tuner plugin's name for a collective
// ("AllReduce", "all_reduce" → "allreduce"); ok is false for one it does
// not know.
func PluginCollective(s string) (string, bool) { return nccl.LookupName(nccl.PerFunctionNames(), s) }

// PluginAlgo is the example tuner plugin's name for an algorithm ("RING"
// → "ring"); ok is false for one it does not know.
func PluginAlgo(s string) (string, bool) { return nccl.LookupName(nccl.ExamplePluginAlgos, s) }

// PluginProto is the example tuner plugin's name for a protocol ("SIMPLE"
// → "simple"); ok is false for one it does not know.
func PluginProto(s string) (string, bool) {
	if n, ok := nccl.LookupName(nccl.ExamplePluginProtos, s); ok {
		return n, true
	}
	return nccl.FoldName(s), false
}
