package studyrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
			l.Result = &benchfmt.Result{Collective: "all_reduce", NRanks: 4, Simulated: true, Complete: true, Rows: search.BatchRows(d.Visits[i][0])}
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
	t.Parallel() // its own store
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

// TestInstrumentBatches runs a batch through the production BatchRunner
// end to end: runner writes the plan, the simulated fabric's process runs
// it, benchfmt reads it. A config whose share was measured is a batch
// member with its rows, the batch's raw output kept once and the modelled
// wall time shared out among the measured; a config that failed in the batch (NCCL refuses
// NVLS here) is launched on its own in its place.
func TestInstrumentBatches(t *testing.T) {
	configs := []nccl.Config{{}, {"NCCL_PROTO": "LL"}, {"NCCL_MAX_NCHANNELS": "1"}, {"NCCL_ALGO": "NVLS"}}
	b := search.Batch{Seq: 2, Rounds: 3, RoundSeed: 5, Ops: []search.BatchOp{{MinBytes: 512 << 10, MaxBytes: 1 << 20}}}
	for i, c := range configs {
		b.Members = append(b.Members, search.Request{Config: c, Seq: 10 + i, Phase: vocab.PhaseExplore, Trial: i, MinBytes: 512 << 10, MaxBytes: 1 << 20})
		b.CreationOrder = append(b.CreationOrder, (i+1)%len(configs))
	}
	l := &batchLauncher{Launcher: &Launcher{Base: simLaunch(t, "spark4").Spec, Seed: 3}, run: InstrumentBatches{}}
	shares, err := l.LaunchBatch(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	var wall time.Duration
	for i, s := range shares {
		batched := slices.Contains(s.Argv, "--batch")
		if i == 3 {
			if s.Batch != nil || batched || s.Outcome != benchfmt.Failed {
				t.Errorf("config %s: batch %+v, %s (%s), argv %q: want a failed launch of its own", configs[i], s.Batch, s.Outcome, s.Reason, s.Argv)
			}
			continue
		}
		if s.Batch != nil {
			wall += s.Batch.Modelled
		}
		if s.Batch == nil || !batched || s.Outcome != benchfmt.OK || len(s.Result.Rows) != 2 || !s.Simulated ||
			*s.Batch != (benchfmt.BatchMember{Seq: 2, Position: slices.Index(b.CreationOrder, i), Configs: len(b.Members), Modelled: s.Batch.Modelled}) || s.Batch.Modelled <= 0 {
			t.Fatalf("config %s: batch %+v, %s (%s), argv %q: want batch 2's member, OK with 2 rows, simulated", configs[i], s.Batch, s.Outcome, s.Reason, s.Argv)
		}
		if (len(s.Stdout) > 0) != (i == 0) {
			t.Errorf("config %s keeps %d bytes of the batch's output: want it with the first share only", configs[i], len(s.Stdout))
		}
	}
	out, err := benchfmt.ParseBatch(shares[0].Stdout)
	if err != nil {
		t.Fatal(err)
	}
	// The three shares measured carry the batch's modelled wall time
	// between them: the NVLS config's launch of its own is not the batch's.
	if (wall - time.Duration(out.Seconds*1e9)).Abs() > time.Millisecond {
		t.Errorf("the shares' wall time adds up to a batch of %s: want the modelled %.3f s", wall, out.Seconds)
	}
}

// TestTorchStudyInBatches: a study of the torch instrument (one rank of the
// fake torch of scripts/nccltune_batch_test.py, whose NCCL logs as the real
// one does and cannot run LL128) explores in a batch launch; the config
// whose setting NCCL's log does not show is launched on its own in its
// share's place, and the batch's raw output is stored once.
func TestTorchStudyInBatches(t *testing.T) {
	t.Parallel() // its own store and log directory; its Python launches wait on the interpreter
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	st := openStore(t)
	so := search.DefaultOptions()
	// A small band: the fake torch reduces in pure Python, and what this
	// test checks (which launches are shares, which run alone, the raw
	// output stored once) does not depend on the sizes; 512K-1M took 30 s.
	so.Band = nccl.Band{Min: 8 << 10, Max: 16 << 10}
	so.Guard, so.Sampler, so.ConfirmLaunches, so.Budget, so.BatchSize = nil, "grid", 4, 15, 8
	so.AllowDisabled = true // LL128: NCCL's defaults do not use it here
	var err error
	if so.Space, err = search.ParseSpace([]string{"NCCL_PROTO=unset,LL,LL128,Simple"}, true); err != nil {
		t.Fatal(err)
	}
	spec := runner.Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: filepath.Join("..", "..", "scripts", "nccltune_batch_test.py"),
		Timeout: time.Minute, Iters: 3, Warmup: 1, BenchArgs: []string{"--as-fake-torch", "--device", "cpu", "--backend", "nccl", "--log-dir", t.TempDir(),
			"-b", "8K", "-e", "16K"}} // the debug launches' sweep cut to the band: the fake's all-reduce of 256M takes minutes
	run, err := PrepareSearch(st, SearchOptions{Study: so, Launch: LaunchSettings{Spec: spec}})
	if err != nil {
		t.Fatal(err)
	}
	run.Batch = InstrumentBatches{}
	if _, err := run.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(run.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := st.Trials(run.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	config := map[uint64]nccl.Config{}
	for _, tr := range trials {
		config[tr.ID] = tr.Config
	}
	shares, raws, ownLL128 := 0, 0, 0
	for _, l := range launches {
		raw, err := st.RawOutput(l.ID)
		if err != nil {
			t.Fatal(err)
		}
		batched := slices.Contains(l.Argv, "--batch")
		if batched && len(raw.Stdout) > 0 {
			raws++
		}
		switch {
		case l.Batch != nil:
			shares++
			if config[l.TrialID]["NCCL_PROTO"] == "LL128" || l.Outcome != benchfmt.OK {
				t.Errorf("launch %d of trial %s is a share of batch %+v, %s", l.Seq, config[l.TrialID], *l.Batch, l.Outcome)
			}
		case config[l.TrialID]["NCCL_PROTO"] == "LL128" && l.Phase == vocab.PhaseExplore && !batched:
			ownLL128++
		}
	}
	if shares < 3 || ownLL128 != 1 || raws != 1 {
		t.Errorf("%d batch shares, LL128 launched on its own %d times, the batch's output stored %d times: want 3 or more, once, once", shares, ownLL128, raws)
	}
}

// TestBatchSharesEscapeWhy: a share the batch did not measure says why in
// the instrument's words (NCCL's log, a config's failure), escaped as every
// launch's reason is: an escape sequence or a line break in them stays data.
func TestBatchSharesEscapeWhy(t *testing.T) {
	rows := &benchfmt.Result{Collective: "all_reduce", Rows: []benchfmt.Row{{Bytes: 1024, Cycle: 1, Out: benchfmt.Measure{TimeUS: 10}}}}
	out := &benchfmt.Batch{Configs: []benchfmt.BatchConfig{
		{Name: "trial0", Created: true, TookEffect: true, Ops: []*benchfmt.Result{rows}},
		{Name: "trial1", Created: true, Why: "rank 0: \x1b[2J\nNCCL chose proto LL", Ops: []*benchfmt.Result{rows}},
		{Name: "trial2", Created: true, TookEffect: true, Failed: "rank 1: \u2028boom\r", FailedRound: 2, Ops: []*benchfmt.Result{rows}},
	}}
	b := search.Batch{Members: []search.Request{{Trial: 0}, {Trial: 1}, {Trial: 2}}, Ops: []search.BatchOp{{}}, CreationOrder: []int{0, 1, 2}}
	shares, err := batchShares(&benchfmt.Launch{BatchOutput: out, Outcome: benchfmt.OK}, b, nccl.AllReduce)
	if err != nil || len(shares) != 3 || shares[0].Outcome != benchfmt.OK {
		t.Fatalf("batchShares: %v, %d shares", err, len(shares))
	}
	for i, want := range []string{
		`not measured in batch launch 0: NCCL's log does not show its settings in its communicator: rank 0: \x1b[2J\nNCCL chose proto LL`,
		`not measured in batch launch 0: it failed in round 2: rank 1: \u2028boom\r`,
	} {
		if s := shares[i+1]; s.Outcome != benchfmt.Failed || s.Reason != want {
			t.Errorf("share %d: %s %q, want failed %q", i+1, s.Outcome, s.Reason, want)
		}
	}
}

// TestBatchCutShort: a batch cut short before its first timed round (the
// instrument's watchdog or the runner's timeout stopped a hung
// communicator) fails each share, the batch's output kept with the first,
// so that LaunchBatch launches every member on its own; only a launch
// without the batch mode's output or with no communicator is an error.
func TestBatchCutShort(t *testing.T) {
	partial, err := os.ReadFile(filepath.Join("..", "benchfmt", "testdata", "batch", "partial.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*benchfmt.Batch) *benchfmt.Batch
		err  string // "" when the shares come back, each failed
	}{
		{"stopped by the watchdog in round 0", func(b *benchfmt.Batch) *benchfmt.Batch { return b }, ""},
		{"no output of the batch mode", func(*benchfmt.Batch) *benchfmt.Batch { return nil }, "it measured no config: failed (the batch was cut short"},
		{"no communicator created", func(b *benchfmt.Batch) *benchfmt.Batch {
			for i := range b.Configs {
				b.Configs[i].Created = false
			}
			return b
		}, "--batch 0 launches every config on its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, perr := benchfmt.ParseBatch(partial)
			if out == nil || out.Rounds != 1 {
				t.Fatalf("partial.jsonl: %v", perr)
			}
			b := search.Batch{Seq: 4, CreationOrder: out.CreationOrder, Ops: []search.BatchOp{{Op: nccl.AllReduce}, {Op: nccl.AllGather}}}
			for i := range out.Configs {
				out.Configs[i].Name = batchName(search.Request{Trial: i})
				b.Members = append(b.Members, search.Request{Trial: i})
			}
			l := &benchfmt.Launch{BatchOutput: tc.edit(out), Outcome: benchfmt.Failed, Reason: perr.Error(), Stdout: partial}
			shares, err := batchShares(l, b, nccl.AllReduce)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || len(shares) != 2*len(b.Members) {
				t.Fatalf("batchShares: %v, %d shares", err, len(shares))
			}
			for i, s := range shares {
				if s.Outcome != benchfmt.Failed || !strings.HasPrefix(s.Reason, "not measured in batch launch 4: ") {
					t.Errorf("share %d: %s %q, want failed, not measured", i, s.Outcome, s.Reason)
				}
				if (len(s.Stdout) > 0) != (i == 0) {
					t.Errorf("share %d keeps %d bytes of the batch's output: want it with the first share only", i, len(s.Stdout))
				}
			}
			if want := "the batch ended before its first timed round: the batch was cut short by the instrument's watchdog"; !strings.Contains(shares[0].Reason, want) {
				t.Errorf("share 0: %q, want it saying %q", shares[0].Reason, want)
			}
		})
	}
}

// TestBatchSharesAddUp: the shares a batch measured carry its wall time
// between them (search.batchTook adds them back up), whichever of its
// configs it did not measure: LaunchBatch launches those on their own.
func TestBatchSharesAddUp(t *testing.T) {
	rows := &benchfmt.Result{Collective: "all_reduce", Rows: []benchfmt.Row{{Bytes: 1024, Cycle: 1, Out: benchfmt.Measure{TimeUS: 10}}}}
	for _, tc := range []struct {
		name   string
		failed []bool // per config
	}{
		{"every config measured", []bool{false, false, false, false}},
		{"one config failed", []bool{false, true, false, false}},
		{"three of four failed", []bool{false, true, true, true}},
	} {
		out := &benchfmt.Batch{Seconds: 12}
		b := search.Batch{Ops: []search.BatchOp{{}, {Op: nccl.AllGather}}}
		for i, failed := range tc.failed {
			c := benchfmt.BatchConfig{Name: batchName(search.Request{Trial: i}), Created: true, TookEffect: true, Ops: []*benchfmt.Result{rows, rows}}
			if failed {
				c.Failed, c.FailedRound = "boom", 1
			}
			out.Configs = append(out.Configs, c)
			b.Members, b.CreationOrder = append(b.Members, search.Request{Trial: i}), append(b.CreationOrder, i)
		}
		shares, err := batchShares(&benchfmt.Launch{BatchOutput: out, Outcome: benchfmt.OK, Duration: 12 * time.Second, Simulated: true}, b, nccl.AllReduce)
		if err != nil {
			t.Fatal(err)
		}
		var took, modelled time.Duration
		for _, s := range shares {
			if s.Outcome != benchfmt.Failed {
				took, modelled = took+s.Duration, modelled+s.Batch.Modelled
			}
		}
		if (took-12*time.Second).Abs() > time.Microsecond || (modelled-12*time.Second).Abs() > time.Microsecond {
			t.Errorf("%s: the measured shares add up to %s (modelled %s): want the batch's 12s", tc.name, took, modelled)
		}
	}
}
