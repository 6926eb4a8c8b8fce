package studyrun

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
)

// InstrumentBatches is the production BatchRunner: the study's instrument
// in its batch mode (the torch instrument's --batch PLAN.json, or the
// simulated fabric's) started by runner.Run.
type InstrumentBatches struct{}

// Iterations of a batch's visit of a size when the study gives none, as
// docs/PERFORMANCE.md measured a batch and sim's batch model prices them.
const (
	batchWarmup = 3
	batchIters  = 20
)

// RunBatch runs b as one launch and returns one record per (member, op)
// in search.BatchLauncher's order (batchShares).
func (InstrumentBatches) RunBatch(ctx context.Context, spec runner.Spec, b search.Batch) ([]*benchfmt.Launch, error) {
	plan, err := batchPlan(spec, b)
	if err != nil {
		return nil, err
	}
	spec.Batch = plan
	l, err := runner.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	return batchShares(l, b, spec.Op)
}

// batchPlan is the instrument's plan of b, with a max_seconds well inside
// the launch's timeout (the instrument's own watchdog fires at 1.5 × it).
func batchPlan(spec runner.Spec, b search.Batch) (*runner.BatchPlan, error) {
	p := &runner.BatchPlan{Version: runner.BatchPlanVersion, CreationOrder: b.CreationOrder, Rounds: b.Rounds, RoundSeed: b.RoundSeed,
		WarmupIters: cmp.Or(spec.Warmup, batchWarmup), Iters: cmp.Or(spec.Iters, batchIters), MaxSeconds: time.Hour.Seconds()}
	if spec.Timeout > 0 {
		p.MaxSeconds = spec.Timeout.Seconds() / 2
	}
	for _, m := range b.Members {
		s, perProcess, ok := nccl.CommSettingsOf(m.Config)
		if !ok {
			return nil, fmt.Errorf("trial %d (%s) sets %v, which NCCL reads once per process: the search must launch it on its own", m.Trial, m.Config, perProcess)
		}
		p.Configs = append(p.Configs, runner.BatchConfig{Name: batchName(m), CommSettings: s})
	}
	for _, o := range b.Ops {
		p.Ops = append(p.Ops, runner.BatchOp{Op: cmp.Or(o.Op, spec.Op).OrAllReduce(), Sizes: nccl.PowersOfTwo(o.MinBytes, o.MaxBytes)})
	}
	return p, nil
}

func batchName(m search.Request) string { return fmt.Sprintf("trial%d", m.Trial) }

// batchShares turns a batch launch into one record per (member, op), each
// with its share of the wall time. A share the batch did not measure is
// Failed with why: LaunchBatch then launches the config on its own. The
// batch's raw output is kept once, with its first measured share (else
// the first). A batch with no output of its mode or no communicator is an
// error: its instrument cannot batch.
func batchShares(l *benchfmt.Launch, b search.Batch, launchOp nccl.Op) ([]*benchfmt.Launch, error) {
	out := l.BatchOutput
	var shares []*benchfmt.Launch
	measured := 0
	for i, m := range b.Members {
		var c *benchfmt.BatchConfig
		if out != nil {
			if k := slices.IndexFunc(out.Configs, func(c benchfmt.BatchConfig) bool { return c.Name == batchName(m) }); k >= 0 {
				c = &out.Configs[k]
			}
		}
		for j, o := range b.Ops {
			s := &benchfmt.Launch{Op: cmp.Or(o.Op, launchOp).OrAllReduce(), Argv: l.Argv, Env: l.Env, Start: l.Start,
				ExitCode: l.ExitCode, Simulated: l.Simulated, Outcome: benchfmt.Failed,
				Batch: &benchfmt.BatchMember{Seq: b.Seq, Position: slices.Index(b.CreationOrder, i), Configs: len(b.Members)}}
			shareOf(s, c, j, b.Seq, l.Reason)
			if s.Outcome != benchfmt.Failed {
				if measured == 0 {
					s.Stdout, s.Stderr = l.Stdout, l.Stderr
				}
				measured++
			}
			shares = append(shares, s)
		}
	}
	if out == nil || !slices.ContainsFunc(out.Configs, func(c benchfmt.BatchConfig) bool { return c.Created }) {
		return nil, fmt.Errorf("it measured no config: %s (%s); --batch 0 launches every config on its own", l.Outcome, l.Reason)
	}
	if measured == 0 { // cut short before a timed round
		shares[0].Stdout, shares[0].Stderr = l.Stdout, l.Stderr
		return shares, nil
	}
	// The wall time is shared by the shares measured (LaunchBatch replaces
	// the others), so the records still add up to the batch.
	for _, s := range shares {
		s.Duration = l.Duration / time.Duration(measured)
		if l.Simulated && out.Seconds > 0 {
			s.Batch.Modelled = time.Duration(out.Seconds * float64(time.Second) / float64(measured))
		}
	}
	return shares, nil
}

// shareOf sets s, the share of config c (nil: the output has none of it)
// at op j of batch seq, from c's rows.
func shareOf(s *benchfmt.Launch, c *benchfmt.BatchConfig, j, seq int, reason string) {
	why := "the output has no line of it"
	if c != nil {
		why = c.Excluded()
	}
	switch {
	case why != "":
	case c.Failed != "":
		why = fmt.Sprintf("it failed in round %d: %s", c.FailedRound, c.Failed)
	case c.Ops[j].Invalid() != "":
		s.Outcome, s.Reason = benchfmt.Invalid, c.Ops[j].Invalid()
		return
	default:
		rounds := make([]map[int64]float64, 0, 8)
		for _, row := range c.Ops[j].Rows {
			for len(rounds) <= row.Cycle {
				rounds = append(rounds, map[int64]float64{})
			}
			rounds[row.Cycle][row.Bytes] = row.Out.TimeUS
		}
		if rows := search.BatchRows(rounds); len(rows) > 0 {
			res := *c.Ops[j]
			res.Rows, s.Result, s.Outcome = rows, &res, benchfmt.OK
			return
		}
		why = "the batch ended before its first timed round: " + reason
	}
	// why holds the instrument's words: escaped as runner escapes every
	// launch's reason.
	s.Reason = safetext.Escape(fmt.Sprintf("not measured in batch launch %d: %s", seq, why))
}
