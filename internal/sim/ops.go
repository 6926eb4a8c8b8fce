package sim

import (
	"cmp"
	"fmt"

	"github.com/nccltune/nccltune/internal/nccl"
)

// The collectives other than all-reduce reuse its cost model (trueTime);
// what differs is the op's geometry (opGeometry) and the per-op scales a
// profile's transport may give (OpCost), calibrated to the op's *_perf.

// p2pAlgo is the "algorithm" of the ops NCCL runs as grouped send/recv
// (alltoall, sendrecv), where NCCL_ALGO does not apply.
const p2pAlgo = nccl.SendRecvAlgo

// p2pLLThreshold is NCCL_P2P_LL_THRESHOLD's default: a send/recv of at
// most this many bytes per peer uses LL, larger ones Simple.
const p2pLLThreshold = 16384

// geometry is how op moves S bytes (nccl-tests' size) on n ranks: bus is
// the bytes each rank sends per byte of S (nccl-tests' bus factor), steps
// the algorithm's steps, split how many parts of S one step carries over
// all channels (a ring step carries S/n, a pipelined chain all of S); p2p
// ops run as send/recv.
type geometry struct {
	bus, steps, split float64
	p2p               bool
}

func opGeometry(op nccl.Op, n int) geometry {
	nf := float64(max(n, 1))
	bus := op.BusFactor(n)
	switch op.OrAllReduce() {
	case nccl.AllGather, nccl.ReduceScatter:
		// A ring of n−1 steps, each passing one rank's share on.
		return geometry{bus: bus, steps: nf - 1, split: nf}
	case nccl.AllToAll:
		// n−1 rounds of send/recv, one share to each peer.
		return geometry{bus: bus, steps: nf - 1, split: nf, p2p: true}
	case nccl.SendRecv:
		// One send to the next rank and one receive from the previous.
		return geometry{bus: bus, steps: 1, split: 1, p2p: true}
	case nccl.Broadcast, nccl.Reduce:
		// A pipelined chain from (or to) the root: every byte crosses each
		// of the n−1 links, and the chunks of a step follow one another.
		return geometry{bus: bus, steps: nf - 1, split: 1}
	}
	// The all-reduce ring: reduce-scatter then all-gather.
	return geometry{bus: bus, steps: 2 * (nf - 1), split: nf}
}

// OpCost scales one op's terms of the all-reduce's cost on one transport
// (transports.X.ops.OP in a profile; a zero field is 1): how the op's own
// kernels and proxy work differ. Why is for the docs.
type OpCost struct {
	BaseScale    float64 `json:"base_scale,omitempty"`
	StepScale    float64 `json:"step_scale,omitempty"`
	OpScale      float64 `json:"op_scale,omitempty"`
	ChannelScale float64 `json:"channel_scale,omitempty"`
	LinkScale    float64 `json:"link_scale,omitempty"`
	Why          string  `json:"why,omitempty"`
}

// scale is v, or 1 for an unset scale.
func scale(v float64) float64 { return cmp.Or(v, 1) }

// check reports a scale outside (0, maxFactor].
func (c *OpCost) check(name string) error {
	for _, s := range []struct {
		field string
		v     float64
	}{{"base_scale", c.BaseScale}, {"step_scale", c.StepScale}, {"op_scale", c.OpScale}, {"channel_scale", c.ChannelScale}, {"link_scale", c.LinkScale}} {
		if s.v < 0 || s.v > maxFactor || (s.v != 0 && s.v < minGBps) {
			return fmt.Errorf("%s.%s %g must be between %g and %g (0: 1)", name, s.field, s.v, minGBps, maxFactor)
		}
	}
	return nil
}

// opCost is the transport's scales for the state's op (all 1 when none).
func (f *ncclState) opCost() OpCost {
	if f.cost != nil {
		if c := f.cost.Ops[string(f.op.OrAllReduce())]; c != nil {
			return *c
		}
	}
	return OpCost{}
}

// chooseP2P is NCCL's plan for a send/recv op: LL for small per-peer
// messages, Simple otherwise, over the comm's channels.
func (f *ncclState) chooseP2P(bytes int64) Choice {
	g := opGeometry(f.op, f.n)
	perPeer := float64(bytes) / g.split
	proto := protoSimple
	if perPeer <= p2pLLThreshold {
		proto = protoLL
	}
	return Choice{Algo: p2pAlgo, Proto: proto, Channels: f.commChannels}
}

// OpTimeUS is TrueTimeUS for op: the noise-free time of one op of bytes
// (nccl-tests' size column) under cfg.
func (p *Profile) OpTimeUS(op nccl.Op, cfg nccl.Config, bytes int64) (float64, error) {
	f := p.resolveOp(cfg, op, false)
	if f.usage != nil {
		return 0, f.usage
	}
	return f.trueTime(f.choose(bytes), bytes), nil
}

// ChooseOp is Choose for op: NCCL's plan for one op of bytes under cfg.
func (p *Profile) ChooseOp(op nccl.Op, cfg nccl.Config, bytes int64) (Choice, error) {
	f := p.resolveOp(cfg, op, false)
	if f.usage != nil {
		return Choice{}, f.usage
	}
	return f.choose(bytes), nil
}

// sourceFile is the op's nccl-tests source, named in its failure lines.
func sourceFile(op nccl.Op) string { return string(op.OrAllReduce()) + ".cu" }
