package nccl

import (
	"maps"
	"slices"
	"strings"
)

// RuleSameRoutes proves NCCL_CROSS_NIC changes nothing on a fabric with
// several NICs per host: NCCL_CROSS_NIC acts only on which NIC each
// channel goes through, and its own debug log shows every channel going
// through the NIC it goes through under NCCL's defaults.
const RuleSameRoutes = "NCCL_CROSS_NIC whose debug log routes every channel through the defaults' NICs"

// LearnRoutes reads the debug log m of a config that sets NCCL_CROSS_NIC
// against n, NCCL's defaults: when every network route m shows is one n
// shows (m may show fewer, under a channel cap), the value is a no-op
// from then on (RuleSameRoutes). It reports whether it proved a value.
func (n *Native) LearnRoutes(m Native) bool {
	v, ok := m.Config.Canonical()["NCCL_CROSS_NIC"]
	if !ok || len(m.NetRoutes) == 0 || len(n.NetRoutes) == 0 || n.SameRoutes[v] {
		return false
	}
	if slices.ContainsFunc(m.NetRoutes, func(r string) bool { return !slices.Contains(n.NetRoutes, r) }) {
		return false
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
	return slices.Sorted(maps.Keys(seen))
}
