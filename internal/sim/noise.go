package sim

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Streams of random numbers: every draw comes from a generator keyed by
// (seed, launch, stream, size, cycle, place), so a launch is reproducible
// whatever sizes it covers.
const (
	streamLaunch = iota + 1
	streamSize
	streamIter
	streamRanks
	streamWrong
	streamGarbage
	streamIdent
	streamReplay
	streamBatch
)

// splitmix64 is a strong 64-bit mixer (Steele, Lea, Flood 2014).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func hashKey(parts ...int64) uint64 {
	h := uint64(0x6e63636c74756e65) // "nccltune"
	for _, p := range parts {
		h = splitmix64(h ^ uint64(p))
	}
	return h
}

func newRNG(parts ...int64) *rand.Rand {
	h := hashKey(parts...)
	return rand.New(rand.NewPCG(h, splitmix64(h)))
}

// MaxNoise is the largest noise scale the simulator takes: ten times the
// calibrated noise is far noisier than any fabric measured, and beyond
// about 25 the per-row jitter (up to 4 % per unit) would make times
// negative.
const MaxNoise = 10

// sampler draws the per-iteration times of one launch: zLaunch is the
// launch's shared standard-normal offset, cold its cold-start factor.
type sampler struct {
	f       *ncclState
	noise   float64
	seed    int64
	launch  int
	zLaunch float64
	cold    float64
}

func (p *Profile) newSampler(f *ncclState, noise float64, seed int64, launch int) *sampler {
	s := &sampler{f: f, noise: math.Max(0, noise), seed: seed, launch: launch, cold: 1}
	s.zLaunch = newRNG(seed, int64(launch), streamLaunch).NormFloat64()
	if launch == 0 {
		s.cold = 1 + s.noise*p.Noise.ColdStart
	}
	return s
}

// offset is the launch's multiplicative offset at one size: a log-normal
// draw with the profile's launch-to-launch CV, mostly shared by all sizes
// of the launch (LaunchCorrelation), the rest drawn per size.
func (s *sampler) offset(bytes int64) float64 {
	n := s.f.p.Noise
	sigmaL, _ := n.noiseAt(bytes)
	if s.noise == 0 || sigmaL == 0 {
		return 1
	}
	rho := n.LaunchCorrelation
	zSize := newRNG(s.seed, int64(s.launch), streamSize, bytes).NormFloat64()
	z := rho*s.zLaunch + math.Sqrt(1-rho*rho)*zSize
	return math.Exp(s.noise * sigmaL * z)
}

// times draws iters iteration times (µs) for one size, cycle and place
// (0 out-of-place, 1 in-place): true time × cold start × launch offset ×
// log-normal iteration jitter, with rare outliers.
func (s *sampler) times(c Choice, bytes int64, iters, cycle, place int) []float64 {
	n := s.f.p.Noise
	base := s.f.trueTime(c, bytes) * s.cold * s.offset(bytes)
	_, sigmaI := n.noiseAt(bytes)
	rng := newRNG(s.seed, int64(s.launch), streamIter, bytes, int64(cycle), int64(place))
	pOut := math.Min(1, s.noise*n.OutlierProb)
	out := make([]float64, iters)
	for i := range out {
		t := base
		if s.noise > 0 {
			t *= math.Exp(s.noise * sigmaI * rng.NormFloat64())
			if pOut > 0 && rng.Float64() < pOut {
				t *= math.Exp(math.Log(1.5) + rng.Float64()*(math.Log(n.OutlierMax)-math.Log(1.5)))
			}
		}
		out[i] = t
	}
	return out
}

// rankTimes spreads each iteration over the ranks for nccl-tests'
// per_process_max_times_us: one rank is the slowest (the sample itself),
// the others a little faster.
func (s *sampler) rankTimes(samples []float64, nranks int, bytes int64, cycle, place int) [][]float64 {
	rng := newRNG(s.seed, int64(s.launch), streamRanks, bytes, int64(cycle), int64(place))
	rows := make([][]float64, nranks)
	for r := range rows {
		rows[r] = make([]float64, len(samples))
	}
	for i, t := range samples {
		slowest := rng.IntN(nranks)
		for r := range rows {
			if r == slowest {
				rows[r][i] = t
				continue
			}
			rows[r][i] = t * (1 - s.noise*0.04*rng.Float64())
		}
	}
	return rows
}

// SampleLaunch simulates one launch of all_reduce_perf under cfg (NCCL_*
// variables, and maybe NCCLTUNE_SIM_FAULT) and returns, per size, the
// per-iteration out-of-place times in µs (nccl-tests' times_us): true
// time × cold start (launch 0) × the launch's log-normal offset × per-
// iteration log-normal jitter, with rare outliers, all scaled by noise. A
// launch is reproducible from seed and launch (its index since the fabric
// started), and the process path draws the very same samples.
//
// noise 0 makes every sample the true time. The error is a *UsageError
// when NCCL refuses cfg (no samples), or a *FaultError: for hang and crash
// the samples hold the sizes completed before it; for wrong results all
// sizes (the times are real, the data is not); for the other faults none.
func (p *Profile) SampleLaunch(cfg nccl.Config, sizes []int64, iters int, noise float64, seed int64, launch int) (map[int64][]float64, error) {
	return p.SampleLaunchOp(nccl.AllReduce, cfg, sizes, iters, noise, seed, launch)
}

// SampleLaunchOp is SampleLaunch for op's *_perf (sizes are nccl-tests'
// size column, as --collective op prints them).
func (p *Profile) SampleLaunchOp(op nccl.Op, cfg nccl.Config, sizes []int64, iters int, noise float64, seed int64, launch int) (map[int64][]float64, error) {
	f := p.resolveOp(cfg, op.OrAllReduce(), false)
	if f.usage != nil {
		return nil, f.usage
	}
	fault, err := p.faultFor(cfg)
	if err != nil {
		return nil, err
	}
	s := p.newSampler(f, noise, seed, launch)
	out := make(map[int64][]float64, len(sizes))
	stop := len(sizes)
	if fault != nil {
		switch fault.kind {
		case FaultHang, FaultCrash:
			stop = faultRow(fault, sizes)
		case FaultWrong:
		default:
			stop = 0
		}
	}
	for _, b := range sizes[:stop] {
		out[b] = s.times(f.choose(b), b, max(iters, 1), 0, 0)
	}
	if fault != nil {
		fe := &FaultError{Kind: fault.kind, Rule: fault.rule, Why: fault.why}
		if stop < len(sizes) {
			fe.Bytes = sizes[stop]
		} else if fault.kind == FaultWrong {
			if i := slices.IndexFunc(sizes, fault.hits); i >= 0 {
				fe.Bytes = sizes[i]
			}
			if fe.Bytes == 0 {
				// The rule's sizes are not in this sweep: nothing goes wrong.
				return out, nil
			}
		}
		return out, fe
	}
	return out, nil
}

// faultRow is the index of the first row a hang or crash never finishes:
// for an on-demand fault the middle of the sweep (so some rows print),
// for a rule the first size the rule covers.
func faultRow(a *activeFault, sizes []int64) int {
	if !a.rule {
		return len(sizes) / 2
	}
	if i := slices.IndexFunc(sizes, a.hits); i >= 0 {
		return i
	}
	return len(sizes)
}
