package benchfmt

import (
	"cmp"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Native returns what the log says NCCL decided and has under the config
// it ran with: its choice per size for the collective (the log's first when
// ""), its channels, NICs and TUNING table. ok is false when the log has no
// per-size choice (no TUNING lines): then nothing about the plan is known.
func (f *Facts) Native(collective string) (n nccl.Native, ok bool) {
	if f == nil {
		return nccl.Native{}, false
	}
	n = nccl.Native{Collective: collective, Plan: nccl.Plan{}, Channels: f.Channels,
		NICs: f.nicsPerHost(), Version: f.NCCLVersion, NetRoutes: f.NetRoutes}
	switch f.Transport {
	case "P2P", "SHM", "P2P+SHM":
		n.NoNetwork = true
	}
	for _, c := range f.Choices {
		n.Collective = cmp.Or(n.Collective, c.Collective)
		if !strings.EqualFold(c.Collective, n.Collective) {
			continue
		}
		n.Plan[c.Bytes] = nccl.Choice{Algo: nccl.NormName(c.Algo), Proto: nccl.NormName(c.Proto), Channels: c.Channels}
	}
	for coll, table := range f.Tuning {
		if strings.EqualFold(coll, n.Collective) {
			n.Table = table
		}
	}
	return n, len(n.Plan) > 0
}

// LadderPlan is NCCL's plan for op as a debug launch over a ladder of sizes
// (-b lo -e hi -f 2) shows it at the sizes in (lo/2, hi]; empty unless the
// launch ended OK (a read that failed after some choices is no read). hi 0
// (a launch stored before its sizes were kept) bounds none.
func LadderPlan(outcome Outcome, f *Facts, op nccl.Op, lo, hi int64) nccl.Plan {
	plan := nccl.Plan{}
	if outcome != OK || f == nil {
		return plan
	}
	if n, ok := f.NativeOp(op, nil); ok {
		for b, ch := range n.Plan {
			if hi == 0 || 2*b > lo && b <= hi {
				plan[b] = ch
			}
		}
	}
	return plan
}

// NativeOp is Native for op's own function at sizes. An op NCCL runs as
// grouped send/recv logs no TUNING line; its plan is then the
// communicator's channels at every size.
func (f *Facts) NativeOp(op nccl.Op, sizes []int64) (nccl.Native, bool) {
	if _, planned := op.PerFunction(); planned {
		return f.Native(op.Function())
	}
	if f == nil {
		return nccl.Native{}, false
	}
	n, _ := f.Native(op.Function())
	n.SendRecv, n.Table = true, nil
	n.Plan = nccl.SendRecvPlan(sizes, f.Channels)
	return n, len(n.Plan) > 0
}

// nicsPerHost is how many NICs a host has for NCCL_CROSS_NIC's purpose: the
// devices one rank listed, not the fabric's (each host's Socket eth0 differs).
func (f *Facts) nicsPerHost() int {
	if f.NICsPerHost > 0 {
		return f.NICsPerHost
	}
	return len(f.NICs)
}
