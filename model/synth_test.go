package model

import (
	"math"
	"math/rand/v2"

	"github.com/nccltune/nccltune/internal/nccl"
)

// fabric generates synthetic launches shaped like the simulated fabric
// (DESIGN.md, "The simulated fabric"; REFERENCE.md, spark4): a true time
// per size, multiplied per launch by a log-normal offset common to all
// sizes, and per iteration by a log-normal jitter whose size depends on the
// message size, with rare outlier launches and iterations. A candidate
// with true speedup S has every time divided by S, so the truth is known by
// construction: every location statistic of the candidate is the
// baseline's divided by S.
type fabric struct {
	sizes      []int64
	trueUS     []float64 // baseline's true median time per size
	iterSD     []float64 // per-iteration log-normal sigma per size
	launchSD   float64   // per-launch log-normal sigma (common to all sizes)
	iters      int       // iterations per launch and size
	pOutLaunch float64   // probability a launch is an outlier
	outLaunch  float64   // its slowdown factor
	pOutIter   float64   // probability an iteration is an outlier
	outIter    float64   // its slowdown factor
	// bimodal, when positive, puts each launch with probability 1/2 in a
	// second mode this much slower.
	bimodal float64
}

// band is the 512K–4M band of the issue.
var band = []int64{512 * nccl.KiB, nccl.MiB, 2 * nccl.MiB, 4 * nccl.MiB}

// spark4Fabric: ≈18 % iteration jitter at 512K–1M falling to ≈3 % at 4M,
// a 5 % launch offset, 2 % of launches 1.5× slow, 1 % of iterations 3× slow.
// True times follow spark4's defaults (the 512K–4M hole: ≈1150 µs at 1M).
func spark4Fabric() fabric {
	return fabric{
		sizes:      band,
		trueUS:     []float64{620, 1150, 1050, 760},
		iterSD:     []float64{0.18, 0.18, 0.10, 0.03},
		launchSD:   0.05,
		iters:      100,
		pOutLaunch: 0.02, outLaunch: 1.5,
		pOutIter: 0.01, outIter: 3,
	}
}

// launch draws one launch of a config whose true speedup over the
// baseline is speedup.
func (f fabric) launch(r *rand.Rand, speedup float64) Launch {
	off := math.Exp(f.launchSD*r.NormFloat64()) / speedup
	if r.Float64() < f.pOutLaunch {
		off *= f.outLaunch
	}
	if f.bimodal > 0 && r.IntN(2) == 1 {
		off *= f.bimodal
	}
	l := Launch{Times: make(map[int64][]float64, len(f.sizes))}
	for i, b := range f.sizes {
		xs := make([]float64, f.iters)
		for j := range xs {
			x := f.trueUS[i] * off * math.Exp(f.iterSD[i]*r.NormFloat64())
			if r.Float64() < f.pOutIter {
				x *= f.outIter
			}
			xs[j] = x
		}
		l.Times[b] = xs
	}
	return l
}

func (f fabric) launches(r *rand.Rand, n int, speedup float64) []Launch {
	out := make([]Launch, n)
	for i := range out {
		out[i] = f.launch(r, speedup)
	}
	return out
}

// newRand is the tests' deterministic source.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6e63636c74756e65)) }
