package search

// Exploration in batches: several configs measured in one launch
// (docs/PERFORMANCE.md, "Exploration in batches").

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

// BatchLauncher is a Launcher that can also run a batch launch.
type BatchLauncher interface {
	Launcher
	// LaunchBatch runs b and returns one launch record per (member, op),
	// member by member in b.Members' order and, within a member, in
	// b.Ops' order. A member that failed has records that say so; the
	// error is for the batch as a whole. Each record carries its share of
	// the batch's wall time in Duration.
	LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error)
}

// Batch is one batch launch the study wants.
type Batch struct {
	// Seq numbers the study's batches from 0.
	Seq int
	// Members are the configs measured, one request each (Seq is its first
	// record's launch index).
	Members []Request
	// Ops are the ops every member measures, each over its sweep.
	Ops []BatchOp
	// CreationOrder indexes Members in the order their communicators are
	// created.
	CreationOrder []int
	// Rounds are the rounds that visit every member once, round 0 the
	// warm-up round; RoundSeed shuffles each round's visiting order.
	Rounds    int
	RoundSeed int64
}

// BatchOp is one op of a batch and its sweep.
type BatchOp struct {
	Op                 nccl.Op
	MinBytes, MaxBytes int64
}

// DefaultBatchSize is --batch's default: the baseline and seven configs.
const DefaultBatchSize = 8

// MinBatchSize is the fewest configs a batch launch holds (minBatch).
const MinBatchSize = minBatch

// BatchRounds are a batch's rounds, round 0 the warm-up: a median of 3
// visits is not moved by one 20–40 % slow visit (docs/PERFORMANCE.md).
const BatchRounds = 4

// BatchRows are one config's rows of a batch launch at one op: rounds[r]
// maps a size to round r's time; a size's time is the median over the
// rounds after round 0. None when only round 0 ran.
func BatchRows(rounds []map[int64]float64) []benchfmt.Row {
	if len(rounds) < 2 {
		return nil
	}
	rows := make([]benchfmt.Row, 0, len(rounds[1]))
	for _, b := range slices.Sorted(maps.Keys(rounds[1])) {
		var ts []float64
		for _, r := range rounds[1:] {
			if t, ok := r[b]; ok {
				ts = append(ts, t)
			}
		}
		m := benchfmt.Measure{TimeUS: model.Median(ts), Iter: &benchfmt.IterStats{TimesUS: ts}}
		rows = append(rows, benchfmt.Row{Bytes: b, Out: m})
	}
	return rows
}

// Batchable reports whether a launch of cfg may share a process with other
// configs.
func Batchable(cfg nccl.Config) bool {
	_, _, ok := nccl.CommSettingsOf(cfg)
	return ok
}

// batcher is the launcher's batch mode while batches pay, else nil.
func (s *loop) batcher() BatchLauncher {
	if s.opts.BatchSize < 2 || s.batchesCostly {
		return nil
	}
	b, _ := s.launcher.(BatchLauncher)
	return b
}

// blockRanked reports whether t's exploration results may rank it: a
// config measured in batches ranks once two batches created it at
// different positions, or a launch of its own measured it.
func (t *Trial) blockRanked() bool {
	if len(t.Explore) > len(t.blocks) {
		return true
	}
	for _, b := range t.blocks[min(1, len(t.blocks)):] {
		if b.Position != t.blocks[0].Position {
			return true
		}
	}
	return len(t.blocks) == 0
}

// addBlock notes the batch that measured t's newest exploration result.
func (t *Trial) addBlock(m *benchfmt.BatchMember) {
	if m != nil {
		t.blocks = append(t.blocks, *m)
	}
}

// batchesPay reports whether a batch of members configs that took took
// saved time against launches of their own (solo on average): a member
// must cost less than half a launch.
func batchesPay(took time.Duration, members int, solo time.Duration) bool {
	return solo <= 0 || 2*took < time.Duration(members)*solo
}

// batchTook is a batch's wall time: the sum of its records' shares.
func batchTook(launches []*benchfmt.Launch) time.Duration {
	var took time.Duration
	for _, l := range launches {
		if l.Batch != nil {
			took += l.Cost()
		}
	}
	return took
}

// minBatch is the fewest configs worth a batch launch: on the real
// loopback a batch of n takes about 3 + n s, n - 1 launches 3.3 s each.
const minBatch = 3

// exploreBatch makes one batch launch of exploration; ok is false when
// nothing was launched.
func (s *loop) exploreBatch(ctx context.Context, b BatchLauncher) (ok bool, err error) {
	// room is asked again on each pass: a debug launch spends budget too.
	room := func() int { return min(s.opts.BatchSize, s.exploreLeft()/s.cost()) }
	if room() < 2 {
		return false, nil
	}
	base := s.baseline()
	members, phases := []*Trial{base}, []string{vocab.PhaseExplore}
	for _, t := range s.trials {
		if len(members) < room() && t != base && t.State.Usable() && !t.blockRanked() && s.plausible(t) {
			members, phases = append(members, t), append(phases, vocab.PhaseRefine)
		}
	}
	// The leaders, each a visit more, until the planner's limit.
	for _, t := range s.rank.leaders(s.opts.TopConfigs) {
		if _, ok := s.batchConfig(t); ok && len(members) < room() && t != base && !slices.Contains(members, t) && len(t.Explore) < s.opts.MaxLaunchesPerTrial {
			members, phases = append(members, t), append(phases, vocab.PhaseRefine)
		}
	}
	// What a batch cannot take, launched on its own after it.
	var after []*Trial
	var afterPhases []string
	// Once next repeats a member (a refinement waits for the batch's
	// results), the sampler alone proposes the rest.
	propose := s.next
	defer func() { s.filling = nil }()
	for range 3 * s.opts.BatchSize {
		if len(members)+len(after) >= room() {
			break
		}
		s.filling = members
		t, phase, err := propose()
		if errors.Is(err, errAwaitsBatch) {
			// A second spelling of a member: the sampler proposes the rest.
			propose = s.nextProposal
			continue
		}
		if errors.Is(err, errSpaceExhausted) && len(members) > 1 {
			break
		}
		if err != nil {
			return true, err
		}
		if slices.Contains(members, t) || slices.Contains(after, t) {
			propose = s.nextProposal
			continue
		}
		if phase == vocab.PhasePlan {
			// A debug launch proves configs alike: made at once.
			if err := s.launch(ctx, t, phase, true); err != nil {
				return true, err
			}
			propose = s.next
			continue
		}
		if _, ok := s.batchConfig(t); ok {
			members, phases = append(members, t), append(phases, phase)
		} else {
			after, afterPhases = append(after, t), append(afterPhases, phase)
		}
	}
	if len(members) == 1 && after == nil {
		return false, nil
	}
	if len(members) < minBatch {
		// Too few for a batch: each launched on its own, as without one.
		for i, t := range members[1:] {
			if err := s.launch(ctx, t, phases[i+1], true); err != nil {
				return true, err
			}
		}
	} else {
		if err := s.launchBatch(ctx, b, members, phases); err != nil {
			return true, err
		}
		if !base.State.Usable() {
			return true, fmt.Errorf("%w: %s", ErrBaselineFailed, base.Reason)
		}
	}
	for i, t := range after {
		if err := s.launch(ctx, t, afterPhases[i], true); err != nil {
			return true, err
		}
	}
	return true, nil
}

// launchBatch runs one batch and records each member's share.
func (s *loop) launchBatch(ctx context.Context, b BatchLauncher, members []*Trial, phases []string) error {
	ops := s.measuredOps()
	batch := Batch{Seq: s.batches, Rounds: BatchRounds, RoundSeed: s.opts.Seed*1_000_003 + int64(s.batches)}
	for _, op := range ops {
		bo := BatchOp{Op: s.requestOp(op)}
		bo.MinBytes, bo.MaxBytes = SweepRange(s.opts, op)
		batch.Ops = append(batch.Ops, bo)
	}
	for i, t := range members {
		cfg, _ := s.batchConfig(t)
		batch.Members = append(batch.Members, Request{Config: cfg, Seq: s.seq + i*len(ops), Phase: phases[i], Trial: t.Number,
			Op: batch.Ops[0].Op, MinBytes: batch.Ops[0].MinBytes, MaxBytes: batch.Ops[0].MaxBytes})
	}
	batch.CreationOrder = creationOrder(members, s.batches)
	s.batches++
	launches, err := b.LaunchBatch(ctx, batch)
	if err != nil {
		return fmt.Errorf("batch launch %d of %d configs: %w", batch.Seq, len(members), err)
	}
	// A batch cut short before it measured any member saved nothing.
	measured := slices.ContainsFunc(launches, func(l *benchfmt.Launch) bool { return l.Batch != nil })
	if len(launches) > 0 && (!measured || !batchesPay(batchTook(launches), len(members), s.meanLaunchCost())) {
		s.batchesCostly = true
	}
	if len(launches) != len(members)*len(ops) {
		return fmt.Errorf("batch launch %d returned %d launch records for %d configs × %d ops: the batch launcher is broken", batch.Seq, len(launches), len(members), len(ops))
	}
	for i, t := range members {
		s.batched = map[nccl.Op]*benchfmt.Launch{}
		for j, bo := range batch.Ops {
			s.batched[bo.Op] = launches[i*len(ops)+j]
		}
		err := s.launch(ctx, t, phases[i], true)
		s.batched = nil
		if err != nil {
			return err
		}
	}
	return nil
}

// batchConfig is what a batch measures of t: its config, or its core;
// ok is false when neither can share a process.
func (s *loop) batchConfig(t *Trial) (cfg nccl.Config, ok bool) {
	if Batchable(t.Config) {
		return t.Config, true
	}
	core := s.plan.core(t.Config)
	return core, Batchable(core)
}

// creationOrder is the order a batch creates its members' communicators.
func creationOrder(members []*Trial, seq int) []int {
	n := len(members)
	clashes := func(rot int) bool {
		for i, t := range members {
			for _, b := range t.blocks {
				if !t.blockRanked() && b.Position == (i+rot)%n {
					return true
				}
			}
		}
		return false
	}
	rot := seq % n
	for k := range n {
		if !clashes((seq + k) % n) {
			rot = (seq + k) % n
			break
		}
	}
	order := make([]int, n)
	for i := range members {
		order[(i+rot)%n] = i
	}
	return order
}

// measuredOps are the ops one measurement launches.
func (s *loop) measuredOps() []nccl.Op {
	if s.work == nil {
		return []nccl.Op{s.opts.Parts()[0].Op}
	}
	return s.work.ops
}

// launchOrBatched makes req's launch, or hands back the batch's.
func (s *loop) launchOrBatched(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	if l, ok := s.batched[req.Op]; ok {
		return l, nil
	}
	return s.launcher.Launch(ctx, req)
}
