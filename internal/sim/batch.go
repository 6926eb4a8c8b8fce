package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/runner"
)

// A batch launch measures several configs in one process, each on its own
// communicator, in rounds that visit each config once. Its cost, measured
// on the real 4-rank loopback (docs/PERFORMANCE.md, "several configs in
// one launch"): ~3 s MPI start and NCCL's init, paid once; 0.13–0.19 s a
// communicator's init with its warm-up; and per visit its iterations and
// ~8 ms more.
const (
	BatchStartup       = 3 * time.Second
	BatchCommInit      = 160 * time.Millisecond
	BatchVisitOverhead = 8 * time.Millisecond
)

// BatchOp is one op a batch measures and its sizes (nccl-tests' size
// column), as a batch plan lists it.
type BatchOp = runner.BatchOp

// BatchDraw is one simulated batch launch: Visits[i][j][r] are config i's
// times of op j in round r (round 0 warms up), per size the median of the
// visit's timed iterations in µs; Errs[i] is why config i has no times;
// Duration the launch's modelled wall time.
type BatchDraw struct {
	Visits   [][][]map[int64]float64
	Errs     []error
	Duration time.Duration
}

func newBatchDraw(n int) *BatchDraw {
	return &BatchDraw{Visits: make([][][]map[int64]float64, n), Errs: make([]error, n), Duration: BatchStartup + time.Duration(n)*BatchCommInit}
}

// addOp adds config i's rounds of one op, at(round, size) timing each
// size, and each visit's time: warmup+iters iterations at each size's
// median, and the overhead. The sizes are added in order, not in the
// map's: a float sum in random order differs in its last bits from run
// to run, and so would the modelled time a study decides from.
func (d *BatchDraw) addOp(i int, sizes []int64, rounds, warmup, iters int, at func(round int, b int64) float64) {
	var byRound []map[int64]float64
	for r := range rounds {
		times := map[int64]float64{}
		for _, b := range sizes {
			times[b] = at(r, b)
		}
		sum := 0.0
		for _, b := range slices.Sorted(maps.Keys(times)) {
			sum += times[b]
		}
		d.Duration += visitCost(sum, warmup, iters)
		byRound = append(byRound, times)
	}
	d.Visits[i] = append(d.Visits[i], byRound)
}

// visitCost is one visit's modelled time: its overhead and warmup+iters
// iterations of sumUS µs. A batch's visits and a launch of its own
// (LaunchDuration) are priced alike, as search's batchesPay assumes.
func visitCost(sumUS float64, warmup, iters int) time.Duration {
	return BatchVisitOverhead + time.Duration(float64(warmup+iters)*sumUS*float64(time.Microsecond))
}

// nccl-tests' -w and -n when a launch gives none, the simulator's own
// defaults (defaultOptions).
const (
	launchWarmup = 1
	launchIters  = 20
)

// LaunchDuration is the modelled wall time of a simulated launch of its
// own that printed res (nil: it failed before a size) after warmup untimed
// and iters timed iterations per size (0: nccl-tests' defaults), priced as
// a batch of that one config visited once at the times it printed. A study
// compares simulated batches with it (benchfmt.Launch.Cost): the
// simulator's own run time would depend on how fast this machine ran it.
func LaunchDuration(res *benchfmt.Result, warmup, iters int) time.Duration {
	d := BatchStartup + BatchCommInit
	if res == nil || len(res.Rows) == 0 {
		return d
	}
	if warmup <= 0 {
		warmup = launchWarmup
	}
	if iters <= 0 {
		iters = launchIters
	}
	sum := 0.0
	for _, r := range res.Rows {
		sum += r.Out.TimeUS
		if r.In != nil {
			sum += r.In.TimeUS
		}
	}
	return d + visitCost(sum, warmup, iters)
}

// SampleBatch simulates a batch launch of cfgs on the profile. Its noise is
// the launch's shared offset (every config's sampler draws the same: the
// batch is one block) and per-round iteration jitter.
func (p *Profile) SampleBatch(ops []BatchOp, cfgs []nccl.Config, rounds, warmup, iters int, noise float64, seed int64, launch int) *BatchDraw {
	d := newBatchDraw(len(cfgs))
	for i, cfg := range cfgs {
		fault, err := p.faultFor(cfg)
		if err == nil && fault != nil {
			err = &FaultError{Kind: fault.kind, Rule: fault.rule, Why: fault.why}
		}
		for _, op := range ops {
			f := p.resolveOp(cfg, op.Op.OrAllReduce(), false)
			if f.usage != nil {
				err = f.usage
			}
			if err != nil {
				d.Errs[i], d.Visits[i] = err, nil
				break
			}
			s := p.newSampler(f, noise, seed, launch)
			d.addOp(i, op.Sizes, rounds, warmup, iters, func(r int, b int64) float64 {
				// place 2+i: each config's iterations draw apart from
				// the others' and from a launch's out- and in-place.
				return medianOf(s.times(f.choose(b), b, max(iters, 1), r, 2+i))
			})
		}
	}
	return d
}

// SampleBatch replays a batch launch of cfgs: each config's communicator
// is one of its recorded warm launches, drawn per config (the recording's
// whole launch-to-launch spread, none shared with the baseline), and each
// round's visit draws iters of that launch's iteration times at the
// nearest recorded size. ops' op is ignored, as SampleLaunch ignores it.
func (r *Replay) SampleBatch(ops []BatchOp, cfgs []nccl.Config, rounds, warmup, iters int, noise float64, seed int64, launch int) *BatchDraw {
	d := newBatchDraw(len(cfgs))
	for i, cfg := range cfgs {
		c, _, err := r.Match(cfg)
		if err != nil {
			d.Errs[i] = err
			continue
		}
		rec := r.newDraw(c, noise, newRNG(seed, int64(launch), streamBatch, int64(i)))
		if rec.l.Failed != "" {
			d.Errs[i] = &ReplayedFailure{Replay: r.Name, Config: c.Env, Why: rec.l.Failed}
			continue
		}
		for j, op := range ops {
			d.addOp(i, op.Sizes, rounds, warmup, iters, func(round int, b int64) float64 {
				all := rec.times(b, len(rec.l.TimesUS[nearestSize(r.Sizes, b)]))
				rng := newRNG(seed, int64(launch), streamBatch, int64(i), int64(j), int64(round), b)
				visit := make([]float64, max(iters, 1))
				for k := range visit {
					visit[k] = all[rng.IntN(len(all))]
				}
				return medianOf(visit)
			})
		}
	}
	return d
}
