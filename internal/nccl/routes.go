package nccl

import "strings"

// NCCL_CROSS_NIC and the routes NCCL prints. NCCL_CROSS_NIC says whether a
// ring or tree may enter a host through one NIC and leave through another
// (0: never, 1: yes, 2, the default: when it helps); it acts in the graph
// search at init, which decides the NIC each channel goes through, and
// NCCL prints the result for every channel ("Channel 00/0 : 0[0] -> 1[0]
// [send] via NET/IB/1"). A value under which every channel goes through
// the NIC it goes through under the defaults changed nothing.

// RuleSameRoutes proves NCCL_CROSS_NIC changes nothing on a fabric with
// several NICs per host: its own debug log shows every channel going
// through the NIC it goes through under NCCL's defaults.
const RuleSameRoutes = "NCCL_CROSS_NIC whose debug log routes every channel through the defaults' NICs"

// LearnRoutes reads the debug log m of a config that sets NCCL_CROSS_NIC
// against n, NCCL's defaults: when m shows network routes and every one
// of them (channel, ranks, end, NIC) is one the defaults' log shows, the
// value changed no channel's NIC, and Explain drops it from then on
// (RuleSameRoutes). A cap on the channels keeps the first channels of the
// same graph, so m may show fewer routes than n. It reports whether it
// proved a value; a value once proved stays proved.
func (n *Native) LearnRoutes(m Native) bool {
	v, ok := m.Config.Canonical()["NCCL_CROSS_NIC"]
	if !ok || len(m.NetRoutes) == 0 || len(n.NetRoutes) == 0 || n.SameRoutes[v] {
		return false
	}
	have := make(map[string]bool, len(n.NetRoutes))
	for _, r := range n.NetRoutes {
		have[r] = true
	}
	for _, r := range m.NetRoutes {
		if !have[r] {
			return false
		}
	}
	if n.SameRoutes == nil {
		n.SameRoutes = map[string]bool{}
	}
	n.SameRoutes[v] = true
	return true
}

// crossNICNoOp says why NCCL_CROSS_NIC=v changes nothing under n, "" (and
// rule "") when nothing proves it.
func (n Native) crossNICNoOp(v string) (rule, reason string) {
	switch {
	case n.NoNetwork:
		return RuleNoNetwork, "no data crosses the network here"
	case n.NICs == 1:
		return RuleOneNIC, "one NIC: there is nothing to cross"
	case n.SameRoutes[v]:
		return RuleSameRoutes, "its debug log routes every channel through the NICs NCCL's defaults use (" +
			strings.Join(routeNICs(n.NetRoutes), ", ") + ")"
	}
	return "", ""
}

// routeNICs are the distinct NICs of routes, sorted.
func routeNICs(routes []string) []string {
	seen := map[string]bool{}
	for _, r := range routes {
		if i := strings.LastIndexByte(r, ' '); i >= 0 {
			seen[r[i+1:]] = true
		}
	}
	return sortedSet(seen)
}
