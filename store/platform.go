package store

import "fmt"

// PlatformDiff is one thing two platforms both recorded and disagree on.
type PlatformDiff struct {
	// Field is "ranks", "nodes", "transport", "GPU" or "NCCL".
	Field string
	A, B  string
}

func (d PlatformDiff) String() string { return fmt.Sprintf("%s %s vs %s", d.Field, d.A, d.B) }

// Fabric reports a difference in what the ranks are and what joins them
// (ranks, nodes, transport): measurements across it are of two fabrics.
func (d PlatformDiff) Fabric() bool {
	return d.Field == "ranks" || d.Field == "nodes" || d.Field == "transport"
}

// Differences lists what p and o both recorded and disagree on, in a
// fixed order; what either did not record is no difference. A comparison
// or an import across them mixes what differs besides the config.
func (p Platform) Differences(o Platform) []PlatformDiff {
	var out []PlatformDiff
	num := func(field string, a, b int) {
		if a > 0 && b > 0 && a != b {
			out = append(out, PlatformDiff{field, fmt.Sprint(a), fmt.Sprint(b)})
		}
	}
	text := func(field, a, b string) {
		if a != "" && b != "" && a != b {
			out = append(out, PlatformDiff{field, a, b})
		}
	}
	num("ranks", p.Ranks, o.Ranks)
	num("nodes", p.Nodes, o.Nodes)
	text("transport", p.Transport, o.Transport)
	text("GPU", p.GPU, o.GPU)
	text("NCCL", p.NCCLVersion, o.NCCLVersion)
	return out
}
