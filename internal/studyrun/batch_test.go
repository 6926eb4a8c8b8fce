package studyrun

import (
	"context"
	"slices"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
)

// simBatches stands in for the instrument's batch mode: the simulated
// fabric's batch (sim.SampleBatch), one record per config, as the torch
// instrument's parser returns them.
type simBatches struct {
	specs   []runner.Spec
	batches []search.Batch
}

func (f *simBatches) RunBatch(ctx context.Context, spec runner.Spec, b search.Batch) ([]*benchfmt.Launch, error) {
	f.specs, f.batches = append(f.specs, spec), append(f.batches, b)
	p, err := sim.LoadProfile(spec.Sim.Profile)
	if err != nil {
		return nil, err
	}
	var cfgs []nccl.Config
	for _, m := range b.Members {
		cfgs = append(cfgs, m.Config)
	}
	ops := []sim.BatchOp{{Op: nccl.AllReduce, Sizes: nccl.PowersOfTwo(b.Ops[0].MinBytes, b.Ops[0].MaxBytes)}}
	d := p.SampleBatch(ops, cfgs, b.Rounds, 3, 20, 1, spec.Sim.Seed, spec.Sim.Launch)
	var out []*benchfmt.Launch
	for i := range b.Members {
		l := &benchfmt.Launch{Simulated: true, Duration: d.Duration, Outcome: benchfmt.OK,
			Batch: &benchfmt.BatchMember{Seq: b.Seq, Position: slices.Index(b.CreationOrder, i), Configs: len(b.Members)}}
		if d.Errs[i] != nil {
			l.Outcome, l.Reason = benchfmt.Failed, d.Errs[i].Error()
		} else {
			l.Result = &benchfmt.Result{Collective: "all_reduce", NRanks: 4, Simulated: true, Complete: true, Rows: benchfmt.BatchRows(d.Visits[i][0])}
		}
		out = append(out, l)
	}
	return out, nil
}

// TestSearchRunInBatches: with a batch runner, a study hands it the
// study's launch (its simulated fabric, a seed per batch) and stores each
// config's share of a batch as a launch that says which batch measured it;
// the other launches are their own.
func TestSearchRunInBatches(t *testing.T) {
	st := openStore(t)
	so := search.DefaultOptions()
	so.Band = nccl.Band{Min: 512 << 10, Max: 4 << 20}
	so.Guard = search.DefaultGuard(so.Band)
	so.Budget, so.BatchSize = 30, 6
	run, err := PrepareSearch(st, SearchOptions{Study: so, Launch: simLaunch(t, "spark4")})
	if err != nil {
		t.Fatal(err)
	}
	batches := &simBatches{}
	run.Batch = batches
	if _, err := run.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(batches.batches) == 0 {
		t.Fatal("no batch launch")
	}
	seeds := map[int64]bool{}
	for _, s := range batches.specs {
		if s.Sim == nil || s.Sim.Profile != "spark4" {
			t.Fatalf("batch spec %+v: want the study's simulated fabric", s)
		}
		seeds[s.Sim.Seed] = true
	}
	if len(seeds) != len(batches.specs) {
		t.Errorf("%d batches drew %d seeds: want one each", len(batches.specs), len(seeds))
	}
	launches, err := st.Launches(run.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	inBatches := 0
	for _, l := range launches {
		if l.Batch == nil {
			continue
		}
		inBatches++
		if l.Phase != vocab.PhaseExplore && l.Phase != vocab.PhaseRefine || !l.Simulated || l.Batch.Configs < 2 {
			t.Errorf("launch %d of batch %+v: phase %s, simulated %v: want exploration, simulated, of 2 or more configs", l.Seq, *l.Batch, l.Phase, l.Simulated)
		}
	}
	want := 0
	for _, b := range batches.batches {
		want += len(b.Members)
	}
	if inBatches != want || inBatches == len(launches) {
		t.Errorf("%d of %d stored launches from batches, want %d (and the confirmation's launches on their own)", inBatches, len(launches), want)
	}
}
