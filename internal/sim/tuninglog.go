package sim

import (
	"fmt"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// tuningTable prints NCCL's TUNING table of the all-reduce the way NCCL
// 2.2x does at init on rank 0: per algorithm and protocol the latency and
// bandwidth its tuner believes, with bandwidth 0 where the algorithm or
// protocol is off (LL128 where the profile's NCCL keeps it off by default,
// or an env list removed it). nccltune reads from it which protocols NCCL's
// defaults enable, so the table follows exactly what choose runs.
func (l *launch) tuningTable(id logID) {
	f, lg := l.f, l.log
	if !lg.enabled(subTuning) || f.cost == nil {
		return
	}
	// A replay prints the table its recording holds (its defaults',
	// masked by what this config's NCCL_ALGO/NCCL_PROTO switch off), or
	// none: a made-up table would claim what NCCL enables.
	var recorded map[string]map[string]float64
	if l.replay != nil {
		if recorded = l.replay.r.Tuning; recorded == nil {
			return
		}
	}
	blocks := [][]string{
		{algoTree, algoRing, "CollNetDirect"},
		{"CollNetChain", "NVLS", "NVLSTree"},
		{"PAT"},
	}
	bus := busFactor(f.n)
	for _, algos := range blocks {
		var head, protos, threads, row strings.Builder
		for _, a := range algos {
			fmt.Fprintf(&head, " %48s |", a)
			fmt.Fprintf(&threads, " %14d | %14d | %14d |", 0, 0, 0)
			for _, pr := range protoNames {
				lat, bw := 0.0, 0.0
				if recorded != nil {
					bw = recorded[nccl.NormName(a)][nccl.NormName(pr)]
					if on, known := f.algoOn[a]; known && !on || !f.protoOn[pr] {
						bw = 0
					}
				} else if m, ok := f.cost.NCCLModel[a][pr]; ok {
					lat = m.LatUS
					if f.algoOn[a] && f.protoOn[pr] {
						// NCCL prints the algorithm bandwidth of the comm.
						bw = m.GBps / bus
					}
				}
				fmt.Fprintf(&row, " %7.1f/%6.1f |", lat, bw)
			}
		}
		for range 3 {
			for _, pr := range protoNames {
				fmt.Fprintf(&protos, " %14s |", pr)
			}
		}
		lg.info(id, subTuning, "  Algorithm   |%s", head.String())
		lg.info(id, subTuning, "  Protocol    |%s", protos.String())
		lg.info(id, subTuning, " Max NThreads |%s", threads.String())
		for _, op := range []nccl.Op{nccl.Broadcast, nccl.Reduce, nccl.AllGather, nccl.ReduceScatter} {
			lg.info(id, subTuning, "%13s |%s", op.Function(), l.opTuningRow(op, algos, recorded != nil))
		}
		lg.info(id, subTuning, "%13s |%s", "AllReduce", row.String())
	}
}

// opTuningRow is one other collective's row of the TUNING table: Ring
// only (these profiles run no tree, CollNet, NVLS or PAT for them), with
// the bandwidth NCCL prints for the function (its model's bus bandwidth
// over the function's bus factor: all-gather twice the all-reduce's on 2
// ranks, as real NCCL prints it) where the op's lists leave the protocol
// on. A replay recorded the all-reduce's row only: zeros.
func (l *launch) opTuningRow(op nccl.Op, algos []string, replay bool) string {
	var row strings.Builder
	g := l.opState(op)
	for _, a := range algos {
		for _, pr := range protoNames {
			lat, bw := 0.0, 0.0
			if m, ok := l.f.cost.NCCLModel[a][pr]; ok && a == algoRing && !replay {
				lat = m.LatUS
				if g.usage == nil && g.algoOn[a] && g.protoOn[pr] {
					bw = m.GBps / opGeometry(op, l.n).bus
				}
			}
			fmt.Fprintf(&row, " %7.1f/%6.1f |", lat, bw)
		}
	}
	return row.String()
}

// opState is what NCCL sets up for op under the launch's environment.
func (l *launch) opState(op nccl.Op) *ncclState {
	f := l.p.resolveOp(l.cfg, op, false)
	f.n = l.n
	return f
}
