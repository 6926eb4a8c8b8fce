package sim

// --batch PLAN.json prints what the torch instrument's batch mode prints
// (docs/TORCH.md), so a simulated study in batches goes the real one's way.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/runner"
)

// batchSampler is a profile or a replay: what SampleBatch draws from.
type batchSampler interface {
	SampleBatch(ops []BatchOp, cfgs []nccl.Config, rounds, warmup, iters int, noise float64, seed int64, launch int) *BatchDraw
}

// mainBatch runs one batch launch of o.batch's plan under env. The done
// line's seconds are the launch's modelled wall time, not this process's.
func mainBatch(o options, env nccl.Config, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s --batch %s: %v\n", o.program(), o.batch, err)
		return 2
	}
	data, err := input.ReadFile(context.Background(), o.batch, nil, 1<<20)
	if err != nil {
		return fail(err)
	}
	plan, err := runner.ParseBatchPlan(data)
	if err != nil {
		return fail(err)
	}
	var s batchSampler
	var p *Profile
	if IsReplay(o.profile) {
		r, err := LoadReplay(o.profile)
		if err != nil {
			return fail(err)
		}
		for _, op := range plan.Ops {
			if op.Op != nccl.AllReduce {
				return fail(fmt.Errorf("the replay %s recorded all_reduce launches and cannot speak for %s; simulate it on a profile", r.Name, op.Op))
			}
		}
		s, p = r, r.profile()
	} else {
		if p, err = LoadProfile(o.profile); err == nil && o.ranks > 0 {
			p, err = p.WithRanks(o.ranks)
		}
		if err != nil {
			return fail(err)
		}
		s = p
	}
	names := make([]string, len(plan.Configs))
	cfgs := make([]nccl.Config, len(plan.Configs))
	for i, c := range plan.Configs {
		names[i], cfgs[i] = c.Name, commConfig(env, c.CommSettings)
	}
	d := s.SampleBatch(plan.Ops, cfgs, plan.Rounds, plan.WarmupIters, plan.Iters, o.noise, o.seed, o.launch)
	rounds, wall := d.within(plan.Rounds, len(cfgs), plan.MaxSeconds)

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	enc := json.NewEncoder(out)
	hosts := make([]string, p.NRanks)
	for r := range hosts {
		hosts[r] = p.HostPrefix + strconv.Itoa(r)
	}
	enc.Encode(map[string]any{"instrument": benchfmt.TorchInstrumentName, "version": benchfmt.TorchFormatVersion, "batch": 1,
		"simulated": true, "profile": p.Name, "world": p.NRanks, "hosts": hosts, "device": p.GPU, "backend": "nccl",
		"nccl_version": p.NCCLVersion, "warmup": plan.WarmupIters, "iters": plan.Iters, "time": "median", "dtype": "float32",
		"configs": names, "creation_order": plan.CreationOrder, "rounds": plan.Rounds, "ops": plan.Ops,
		"round_seed": plan.RoundSeed, "max_seconds": plan.MaxSeconds})
	for _, i := range plan.CreationOrder {
		if d.Errs[i] != nil {
			enc.Encode(map[string]any{"config": names[i], "failed": "rank 0: SIMULATED " + d.Errs[i].Error(), "round": 0})
			continue
		}
		line := map[string]any{"config": names[i], "comm": "created", "init_s": BatchCommInit.Seconds()}
		if _, replay := s.(*Replay); replay {
			line["took_effect"], line["evidence"] = true, []string{"SIMULATED: replayed from recorded launches of this config"}
		} else {
			p.commVerdict(line, plan.Configs[i].CommSettings, cfgs[i], plan.Ops)
		}
		enc.Encode(line)
	}
	for r := range rounds {
		// Each round visits the configs in its own order, as the
		// instrument shuffles them with the plan's round seed.
		order := newRNG(plan.RoundSeed, int64(r)).Perm(len(cfgs))
		for _, i := range order {
			if d.Errs[i] != nil {
				continue
			}
			for j, op := range plan.Ops {
				for _, size := range op.Sizes {
					t := d.Visits[i][j][r][size]
					bytes, count := op.Op.RowShape(size, 4, p.NRanks)
					algbw := float64(bytes) / (t * 1e3)
					enc.Encode(map[string]any{"config": names[i], "round": r, "arm": "torch", "collective": op.Op, "bytes": bytes,
						"count": count, "time_us": t, "algbw": algbw, "busbw": algbw * op.Op.BusFactor(p.NRanks),
						"ok": true, "wrong": 0, "ranks": p.NRanks, "nccl_version": p.NCCLVersion})
				}
			}
		}
	}
	enc.Encode(map[string]any{"done": true, "rounds": rounds, "seconds": wall.Seconds()})
	return 0
}

// commConfig is the environment one communicator of a batch is created
// under, its ncclConfig_t limits as the knobs that cap channels alike.
func commConfig(env nccl.Config, s nccl.CommSettings) nccl.Config {
	cfg := env.Clone()
	maps.Copy(cfg, s.Env)
	if s.MaxCTAs > 0 {
		cfg["NCCL_MAX_CTAS"] = strconv.Itoa(s.MaxCTAs)
	}
	if s.MinCTAs > 0 {
		cfg["NCCL_MIN_CTAS"] = strconv.Itoa(s.MinCTAs)
	}
	return cfg
}

// commVerdict fills a communicator line's verdict as the torch instrument
// reads NCCL's log (comm_verdict): a protocol or algorithm named alone
// must be chosen at every size, a channel cap or floor must hold.
func (p *Profile) commVerdict(line map[string]any, s nccl.CommSettings, cfg nccl.Config, ops []BatchOp) {
	var evidence, missing []string
	var channels, widest int
	algos, protos := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		f := p.resolveOp(cfg, op.Op, false)
		channels = f.commChannels
		for _, size := range op.Sizes {
			bytes, _ := op.Op.RowShape(size, 4, p.NRanks)
			c := f.choose(bytes)
			algos[c.LogAlgo()], protos[c.LogProto()], widest = true, true, max(widest, c.Channels)
		}
	}
	for _, k := range []struct {
		key, field string
		chosen     map[string]bool
	}{{"NCCL_PROTO", "proto", protos}, {"NCCL_ALGO", "algo", algos}} {
		v, ok := s.Env[k.key]
		if !ok {
			continue
		}
		evidence = append(evidence, fmt.Sprintf("%s set by environment to %s", k.key, v))
		if strings.ContainsAny(v, "^,:") {
			continue
		}
		if len(k.chosen) != 1 || !k.chosen[strings.ToUpper(v)] {
			missing = append(missing, fmt.Sprintf("NCCL chose %s %s, not %s", k.field, strings.Join(sortedKeys(k.chosen), ","), v))
		} else {
			evidence = append(evidence, fmt.Sprintf("%s %s at every size", k.field, strings.ToUpper(v)))
		}
	}
	for _, c := range []struct {
		text  string
		want  int
		holds bool
	}{{"Max CTAs", s.MaxCTAs, channels <= s.MaxCTAs && widest <= s.MaxCTAs}, {"Min CTAs", s.MinCTAs, channels >= s.MinCTAs}} {
		switch {
		case c.want == 0:
		case !c.holds:
			missing = append(missing, fmt.Sprintf("NCCL printed 'Comm config %s set to %d' but used %d coll channels", c.text, c.want, channels))
		default:
			evidence = append(evidence, fmt.Sprintf("Comm config %s set to %d", c.text, c.want), fmt.Sprintf("%d coll channels", channels))
		}
	}
	line["took_effect"], line["channels"], line["evidence"] = len(missing) == 0, channels, append([]string{"SIMULATED"}, evidence...)
	line["algo"], line["proto"] = strings.Join(sortedKeys(algos), ","), strings.Join(sortedKeys(protos), ",")
	if len(missing) > 0 {
		line["why"] = "rank 0: SIMULATED " + strings.Join(missing, "; ")
	}
}

// within is how many of a batch's rounds run, and the launch's modelled
// wall time: as the instrument, no round starts that is planned (at the
// mean round) to end later than maxSeconds after the start.
func (d *BatchDraw) within(rounds, configs int, maxSeconds float64) (int, time.Duration) {
	fixed := BatchStartup + time.Duration(configs)*BatchCommInit
	round := (d.Duration - fixed) / time.Duration(max(rounds, 1))
	n := 0
	for n < rounds && (fixed+time.Duration(n+1)*round).Seconds() <= maxSeconds {
		n++
	}
	return n, fixed + time.Duration(n)*round
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
