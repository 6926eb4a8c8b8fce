package search

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/c-bata/goptuna"
	"github.com/c-bata/goptuna/tpe"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Samplers names the proposal strategies; "tpe" is the default, the others
// exist to measure it against (docs/PERFORMANCE.md).
var Samplers = []string{"tpe", "random", "grid"}

// observation is what a proposer learns from one trial: its config and a
// value to minimise (log of the band score; a penalty for failures).
type observation struct {
	config nccl.Config
	value  float64
}

// proposer picks the next config to try. It may return a config already
// tried; the study then measures that trial again instead of adding one.
type proposer interface {
	propose(obs []observation) (nccl.Config, error)
}

func newProposer(name string, space Space, seed int64, startup int) (proposer, error) {
	rng := rand.New(rand.NewSource(seed))
	switch name {
	case "", "tpe":
		return &tpeProposer{space: space, rng: rng, startup: startup, seed: seed}, nil
	case "random":
		return &randomProposer{space: space, rng: rng}, nil
	case "grid":
		all := space.All()
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		return &gridProposer{configs: all}, nil
	}
	return nil, fmt.Errorf("unknown sampler %q; use tpe, random or grid", name)
}

// tpeProposer asks goptuna's TPE sampler, rebuilt from the observations
// for every proposal, with start-up configs drawn from a seeded source: a
// study is reproducible from its seed. goptuna has no ask/tell and its
// start-up draws from the global math/rand (Go 1.24+ ignores rand.Seed).
// With fewer choices than TPE's 24 candidates its proposals are a
// deterministic function of the observations, so a resumed study
// proposes what an uninterrupted one would have.
type tpeProposer struct {
	space   Space
	rng     *rand.Rand
	seed    int64
	startup int
}

// unsetLabel stands for "" (knob unset) in goptuna's choice lists.
const unsetLabel = "unset"

func (p *tpeProposer) choices(d Dimension) []string {
	out := make([]string, len(d.Choices))
	for i, c := range d.Choices {
		if c == "" {
			c = unsetLabel
		}
		out[i] = c
	}
	return out
}

func (p *tpeProposer) propose(obs []observation) (nccl.Config, error) {
	if len(obs) < p.startup {
		return p.space.Random(p.rng), nil
	}
	storage := goptuna.NewInMemoryStorage()
	study, err := goptuna.CreateStudy("nccltune",
		goptuna.StudyOptionStorage(storage),
		goptuna.StudyOptionSampler(tpe.NewSampler(
			tpe.SamplerOptionNumberOfStartupTrials(0),
			tpe.SamplerOptionSeed(p.seed))),
		goptuna.StudyOptionLogger(nil),
		goptuna.StudyOptionDirection(goptuna.StudyDirectionMinimize))
	if err != nil {
		return nil, fmt.Errorf("creating the TPE study: %w", err)
	}
	epoch := time.Unix(0, 0)
	for _, o := range tpeWindow(obs) {
		idx, ok := p.space.Index(o.config)
		if !ok {
			continue // measured outside this space (e.g. the space was narrowed on resume)
		}
		ft := goptuna.FrozenTrial{
			State:              goptuna.TrialStateComplete,
			Value:              o.value,
			DatetimeStart:      epoch,
			DatetimeComplete:   epoch,
			IntermediateValues: map[int]float64{},
			InternalParams:     map[string]float64{},
			Params:             map[string]interface{}{},
			Distributions:      map[string]interface{}{},
			UserAttrs:          map[string]string{},
			SystemAttrs:        map[string]string{},
		}
		for i, d := range p.space {
			choices := p.choices(d)
			ft.InternalParams[d.Knob] = float64(idx[i])
			ft.Params[d.Knob] = choices[idx[i]]
			ft.Distributions[d.Knob] = goptuna.CategoricalDistribution{Choices: choices}
		}
		if _, err := storage.CloneTrial(study.ID, ft); err != nil {
			return nil, fmt.Errorf("loading trial into TPE: %w", err)
		}
	}
	id, err := storage.CreateNewTrial(study.ID)
	if err != nil {
		return nil, fmt.Errorf("asking TPE for a trial: %w", err)
	}
	trial := goptuna.Trial{Study: study, ID: id}
	cfg := nccl.Config{}
	for _, d := range p.space {
		v, err := trial.SuggestCategorical(d.Knob, p.choices(d))
		if err != nil {
			return nil, fmt.Errorf("TPE suggesting %s: %w", d.Knob, err)
		}
		if v != unsetLabel {
			cfg[d.Knob] = v
		}
	}
	return cfg, nil
}

// tpeMaxObservations bounds what TPE is rebuilt from. TPE's cost grows
// with its trials; its good group is the best 10 % (≤25), the recent ones
// keep failures in view.
const tpeMaxObservations = 96

// tpeWindow keeps the best half of the window and the most recent rest, in
// their original order, when there are too many observations.
func tpeWindow(obs []observation) []observation {
	if len(obs) <= tpeMaxObservations {
		return obs
	}
	keep := make([]bool, len(obs))
	idx := make([]int, len(obs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return obs[idx[a]].value < obs[idx[b]].value })
	for _, i := range idx[:tpeMaxObservations/2] {
		keep[i] = true
	}
	n := tpeMaxObservations / 2
	for i := len(obs) - 1; i >= 0 && n > 0; i-- {
		if !keep[i] {
			keep[i] = true
			n--
		}
	}
	out := make([]observation, 0, tpeMaxObservations)
	for i, o := range obs {
		if keep[i] {
			out = append(out, o)
		}
	}
	return out
}

type randomProposer struct {
	space Space
	rng   *rand.Rand
}

func (p *randomProposer) propose([]observation) (nccl.Config, error) {
	return p.space.Random(p.rng), nil
}

// gridProposer walks the whole space once, in a seeded shuffled order.
type gridProposer struct {
	configs []nccl.Config
	next    int
}

func (p *gridProposer) propose([]observation) (nccl.Config, error) {
	if p.next >= len(p.configs) {
		return nil, errSpaceExhausted
	}
	c := p.configs[p.next]
	p.next++
	return c, nil
}

// neighbour returns an untried config one knob away from cfg, or nil. TPE
// is deterministic: once its favourite is measured enough it would keep
// proposing it.
func neighbour(space Space, cfg nccl.Config, tried func(nccl.Config) bool, rng *rand.Rand) nccl.Config {
	idx, ok := space.Index(cfg)
	if !ok {
		return nil
	}
	type move struct{ dim, choice int }
	var moves []move
	for d := range space {
		for c := range space[d].Choices {
			if c != idx[d] {
				moves = append(moves, move{d, c})
			}
		}
	}
	rng.Shuffle(len(moves), func(i, j int) { moves[i], moves[j] = moves[j], moves[i] })
	for _, m := range moves {
		next := append([]int(nil), idx...)
		next[m.dim] = m.choice
		c := space.Config(next)
		if !tried(c) && c.Validate() == nil {
			return c
		}
	}
	return nil
}

// failurePenalty is the value a failed config reports to the sampler (log
// 4 above the worst usable one): well above anything measured, so TPE
// leaves a broken region without drowning the good one.
func failurePenalty(worstOK float64) float64 {
	if math.IsInf(worstOK, -1) || math.IsNaN(worstOK) {
		return 1e6
	}
	return worstOK + math.Log(4)
}
