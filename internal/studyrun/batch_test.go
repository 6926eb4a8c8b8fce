package studyrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// TestInstrumentBatches runs batches through the production BatchRunner end
// to end: runner writes the plan, the simulated fabric's process (or one
// rank of the fake torch of scripts/nccltune_batch_test.py, whose NCCL
// logs as the real one does) runs it, benchfmt reads it. A config whose
// share was measured is a batch member with its rows, the batch's raw
// output kept once and the wall time shared out (the modelled one,
// simulated); a config whose setting did not show in NCCL's log, or that
// failed in the batch, is launched on its own in its place.
func TestInstrumentBatches(t *testing.T) {
	work := t.TempDir()
	fake := filepath.Join("..", "..", "scripts", "nccltune_batch_test.py")
	torch := runner.Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: fake, WorkDir: work, Timeout: time.Minute, Iters: 3, Warmup: 1,
		BenchArgs: []string{"--as-fake-torch", "--device", "cpu", "--backend", "nccl", "--log-dir", t.TempDir()}}
	tests := []struct {
		name    string
		spec    runner.Spec
		configs []nccl.Config
		own     map[int]benchfmt.Outcome // members launched on their own, and how their launch ended
	}{
		{"simulated fabric", simLaunch(t, "spark4").Spec,
			[]nccl.Config{{}, {"NCCL_PROTO": "LL"}, {"NCCL_MAX_NCHANNELS": "1"}, {"NCCL_ALGO": "NVLS"}},
			map[int]benchfmt.Outcome{3: benchfmt.Failed}},
		{"fake torch", torch, []nccl.Config{{}, {"NCCL_PROTO": "LL"}, {"NCCL_MAX_CTAS": "1"}, {"NCCL_PROTO": "LL128"}},
			map[int]benchfmt.Outcome{3: benchfmt.OK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.Sim == nil {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3 on PATH")
				}
			}
			b := search.Batch{Seq: 2, Rounds: 3, RoundSeed: 5, Ops: []search.BatchOp{{MinBytes: 512 << 10, MaxBytes: 1 << 20}}}
			for i, c := range tt.configs {
				b.Members = append(b.Members, search.Request{Config: c, Seq: 10 + i, Phase: vocab.PhaseExplore, Trial: i, MinBytes: 512 << 10, MaxBytes: 1 << 20})
				b.CreationOrder = append(b.CreationOrder, (i+1)%len(tt.configs))
			}
			l := &batchLauncher{Launcher: &Launcher{Base: tt.spec, Seed: 3}, run: InstrumentBatches{}}
			shares, err := l.LaunchBatch(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			var wall time.Duration
			for i, s := range shares {
				batched := slices.Contains(s.Argv, "--batch")
				if want, own := tt.own[i]; own {
					if s.Batch != nil || batched || s.Outcome != want {
						t.Errorf("config %s: batch %+v, %s (%s), argv %q: want a launch of its own, %s", tt.configs[i], s.Batch, s.Outcome, s.Reason, s.Argv, want)
					}
					continue
				}
				wall += s.Duration
				if s.Batch == nil || !batched || s.Outcome != benchfmt.OK || len(s.Result.Rows) != 2 || s.Simulated != (tt.spec.Sim != nil) ||
					*s.Batch != (benchfmt.BatchMember{Seq: 2, Position: slices.Index(b.CreationOrder, i), Configs: len(b.Members)}) {
					t.Fatalf("config %s: batch %+v, %s (%s), argv %q: want batch 2's member, OK with 2 rows", tt.configs[i], s.Batch, s.Outcome, s.Reason, s.Argv)
				}
				if (len(s.Stdout) > 0) != (i == 0) {
					t.Errorf("config %s keeps %d bytes of the batch's output: want it with the first share only", tt.configs[i], len(s.Stdout))
				}
			}
			out, err := benchfmt.ParseBatch(shares[0].Stdout)
			if err != nil {
				t.Fatal(err)
			}
			// Each share is 1/n of the batch: the modelled wall time when simulated.
			if batch := wall * time.Duration(len(shares)) / time.Duration(len(shares)-len(tt.own)); tt.spec.Sim != nil &&
				(batch-time.Duration(out.Seconds*1e9)).Abs() > time.Millisecond {
				t.Errorf("the shares' wall time adds up to a batch of %s: want the modelled %.3f s", batch, out.Seconds)
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Errorf("the work dir keeps %v", left)
			}
		})
	}
}
