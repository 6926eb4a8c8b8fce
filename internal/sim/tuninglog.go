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
	for _, algos := range blocks {
		var head, protos, threads strings.Builder
		for _, a := range algos {
			fmt.Fprintf(&head, " %48s |", a)
			fmt.Fprintf(&threads, " %14d | %14d | %14d |", 0, 0, 0)
		}
		for range 3 {
			for _, pr := range protoNames {
				fmt.Fprintf(&protos, " %14s |", pr)
			}
		}
		lg.info(id, subTuning, "  Algorithm   |%s", head.String())
		lg.info(id, subTuning, "  Protocol    |%s", protos.String())
		lg.info(id, subTuning, " Max NThreads |%s", threads.String())
		for _, op := range []nccl.Op{nccl.Broadcast, nccl.Reduce, nccl.AllGather, nccl.ReduceScatter, nccl.AllReduce} {
			lg.info(id, subTuning, "%13s |%s", op.Function(), l.tuningRow(op, algos, recorded))
		}
	}
}

// tuningRow is one collective's row of the TUNING table. The all-reduce's
// is the recorded one on a replay, the model's otherwise. The others run
// Ring only (no tree, CollNet, NVLS or PAT for them here), with the
// bandwidth NCCL prints for the function (its model's bus bandwidth over
// the function's bus factor: all-gather twice the all-reduce's on 2 ranks,
// as real NCCL prints it), and a replay recorded none of them: zeros. A
// bandwidth is 0 where the op's lists leave the algorithm or protocol off.
func (l *launch) tuningRow(op nccl.Op, algos []string, recorded map[string]map[string]float64) string {
	g, bus := l.f, busFactor(l.f.n)
	if op != nccl.AllReduce {
		// g's n is the profile's ranks, not the launch's (-t, -g): only
		// its algo and proto switches are read here.
		g, bus = l.p.resolveOp(l.cfg, op, false), opGeometry(op, l.n).bus
	}
	var row strings.Builder
	for _, a := range algos {
		for _, pr := range protoNames {
			lat, bw := 0.0, 0.0
			m, ok := l.f.cost.NCCLModel[a][pr]
			switch {
			case op == nccl.AllReduce && recorded != nil:
				bw = recorded[nccl.NormName(a)][nccl.NormName(pr)]
				if on, known := g.algoOn[a]; known && !on || !g.protoOn[pr] {
					bw = 0
				}
			case ok && (op == nccl.AllReduce || a == algoRing && recorded == nil):
				lat = m.LatUS
				if g.usage == nil && g.algoOn[a] && g.protoOn[pr] {
					// NCCL prints the algorithm bandwidth of the comm.
					bw = m.GBps / bus
				}
			}
			fmt.Fprintf(&row, " %7.1f/%6.1f |", lat, bw)
		}
	}
	return row.String()
}
