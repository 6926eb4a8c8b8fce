package benchfmt

import (
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Native returns what the log says NCCL decided and has under the config
// it ran with: its choice per size for the collective (the first one the
// log shows when collective is ""), the channels it set up, the NICs of
// its transport and, when the log has NCCL's TUNING table, which
// algorithms and protocols it enabled. ok is false when the log has no
// per-size choice (no TUNING lines: an NCCL older than 2.24, or a run
// without NCCL_DEBUG_SUBSYS=TUNING): then nothing about the plan is known.
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
		if n.Collective == "" {
			n.Collective = c.Collective
		}
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

// LadderPlan is NCCL's plan for op as a debug launch over a ladder of
// sizes (nccl-tests -b lo -e hi -f 2) shows it at that ladder's sizes, as
// nccl-tests ran them (in (lo/2, hi], nccl.LadderSize); empty unless the
// launch ended OK: a read that failed after logging some choices is no
// read. hi 0 (a launch stored before its sizes were kept) bounds none.
// The one rule by which search reads a plan at the calls' own sizes and
// the export delivers it (stored.CalledChoices).
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

// NativeOp is Native for op's own function at sizes (nccl-tests'
// sizes): what a study of several collectives reads per op. An op NCCL
// runs as grouped send/recv (alltoall, sendrecv: no per-function name)
// logs no TUNING line; its plan is then the communicator's channels at
// every size (nccl.SendRecvPlan), known once the log shows them.
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

// nicsPerHost is how many NICs a host has for NCCL_CROSS_NIC's purpose:
// the devices one rank listed, not the fabric's (on a Socket fabric each
// host's "eth0" has its own address, so four hosts list four "NICs").
func (f *Facts) nicsPerHost() int {
	if f.NICsPerHost > 0 {
		return f.NICsPerHost
	}
	return len(f.NICs)
}
