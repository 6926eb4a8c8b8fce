package store

import (
	"cmp"
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// PlatformOf is the platform a launch's output shows, completed from
// NCCL's log (CompleteFrom): the one derivation of a study's fingerprint.
func PlatformOf(r *benchfmt.Result) Platform {
	f := Platform{NCCLVersion: r.NCCLVersion, TestsVersion: r.TestsVersion, Ranks: r.NRanks}
	hosts := map[string]bool{}
	for _, d := range r.Devices {
		if d.Host != "" && !hosts[d.Host] {
			hosts[d.Host] = true
			f.Hosts = append(f.Hosts, d.Host)
		}
		f.GPU = cmp.Or(f.GPU, d.Name)
	}
	f.Nodes = len(f.Hosts)
	if fa := r.Facts; fa != nil {
		f.CompleteFrom(fa)
		if fa.NNodes > 0 { // NCCL's count beats the benchmark's hosts
			f.Nodes = fa.NNodes
		}
	}
	return f
}

// CompleteFrom fills in from an NCCL debug log's facts what f did not
// record.
func (f *Platform) CompleteFrom(fa *benchfmt.Facts) {
	if fa == nil {
		return
	}
	f.AddTransport(fa)
	f.NCCLVersion = cmp.Or(f.NCCLVersion, fa.NCCLVersion)
	f.Ranks, f.Nodes = cmp.Or(f.Ranks, fa.NRanks), cmp.Or(f.Nodes, fa.NNodes)
	if len(f.Hosts) == 0 {
		f.Hosts = fa.Hosts
	}
}

// PlatformDiff is one thing two platforms both recorded and disagree on.
type PlatformDiff struct {
	Field string // "ranks", "nodes", "transport", "GPU" or "NCCL"
	A, B  string
}

func (d PlatformDiff) String() string { return fmt.Sprintf("%s %s vs %s", d.Field, d.A, d.B) }

// Fabric reports a difference that makes two fabrics.
func (d PlatformDiff) Fabric() bool {
	return d.Field == "ranks" || d.Field == "nodes" || d.Field == "transport"
}

// Differences lists what p and o both recorded and disagree on, in a
// fixed order.
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

// AddTransport takes the transport from an NCCL debug log's facts, when
// the fabric has none yet (or only a log's word without channel lines).
// It reports whether anything changed.
func (f *Platform) AddTransport(fa *benchfmt.Facts) bool {
	if fa == nil || (fa.Transport == "" && len(fa.Routes) == 0) {
		return false
	}
	if f.TransportSummary != "" || (f.Transport != "" && len(fa.Routes) == 0) {
		return false
	}
	// Old facts (no Network, no Routes) hold "Using network …" as the
	// transport: on one node that network carried nothing.
	if len(fa.Routes) == 0 && fa.Network == "" && fa.NNodes == 1 {
		return false
	}
	f.Transport, f.GDR, f.Network = fa.Transport, fa.GDR, fa.Network
	f.Routes = append([]benchfmt.Route(nil), fa.Routes...)
	f.TransportSummary = benchfmt.RoutesText(fa.Routes)
	if fa.NNodes > 0 {
		f.Nodes = fa.NNodes
	}
	return true
}
