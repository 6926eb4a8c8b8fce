package search

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/vocab"
)

// simLauncher evaluates the simulated fabric in process: the same samples
// the simulator process prints, without the process, so tests and
// benchmarks can run thousands of launches.
type simLauncher struct {
	name  string
	prof  *sim.Profile
	noise float64
	seed  int64
	iters int
	// noDebugLog: debug launches print no NCCL log (an NCCL without
	// TUNING lines, a fabric that hides them).
	noDebugLog bool
	// cancelAt cancels the study's context after that many launches (0: never).
	cancelAt int
	cancel   context.CancelFunc
	launches []Request
	// ranks, when set, is the profile's rank count (--ranks).
	ranks int
	// op is the study's own op, measured by a request that names none
	// (Request.Op ""), as the CLI builds its launcher for the study's
	// collective; "" is all_reduce. Left unset, a broadcast-only
	// workload's study measured all_reduce_perf while its truth was
	// judged on broadcast.
	op nccl.Op
	// batches are the batch launches made (LaunchBatch).
	batches []Batch
}

// withRanks is s on n ranks (the profile's shape for n, as --ranks).
func (s *simLauncher) withRanks(t testing.TB, n int) *simLauncher {
	t.Helper()
	p, err := s.prof.WithRanks(n)
	if err != nil {
		t.Fatal(err)
	}
	s.prof, s.ranks = p, n
	return s
}

func newSimLauncher(t testing.TB, profile string, noise float64, seed int64) *simLauncher {
	t.Helper()
	p, err := sim.LoadProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	return &simLauncher{name: profile, prof: p, noise: noise, seed: seed, iters: 20}
}

func (s *simLauncher) Launch(ctx context.Context, req Request) (*benchfmt.Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.launches = append(s.launches, req)
	if s.cancelAt > 0 && len(s.launches) == s.cancelAt {
		s.cancel()
		return &benchfmt.Launch{Outcome: benchfmt.Failed, Reason: "interrupted"}, context.Canceled
	}
	sizes := nccl.PowersOfTwo(req.MinBytes, req.MaxBytes)
	if req.Phase == vocab.PhaseExact {
		// A call's own size: nccl-tests' ladder from -b by -f 2, as the
		// simulator's child prints it (search.exactLadder).
		sizes = nil
		for b := req.MinBytes; b <= req.MaxBytes; b *= 2 {
			sizes = append(sizes, b)
		}
	}
	// The request's op is the profile's model of that op's *_perf.
	op := s.ownOp(req.Op)
	samples, err := s.prof.SampleLaunchOp(op, req.Config, sizes, s.iters, s.noise, s.seed*1_000_003+int64(req.Seq), req.Seq)
	// A launch of its own pays the start-up a batch pays once
	// (sim.BatchStartup), so that batches are judged as on a fabric (batchesPay).
	l := &benchfmt.Launch{Op: req.Op, Outcome: benchfmt.OK, Simulated: true, Duration: sim.BatchStartup}
	res := &benchfmt.Result{Collective: string(op), NRanks: 4, Simulated: true, Complete: true}
	for _, b := range sizes {
		ts, ok := samples[b]
		if !ok {
			continue
		}
		med := median(ts)
		zero := int64(0)
		res.Rows = append(res.Rows, benchfmt.Row{Bytes: b, Out: benchfmt.Measure{TimeUS: med, Wrong: &zero,
			Iter: &benchfmt.IterStats{TimesUS: ts}}})
	}
	l.Result = res
	if req.Debug && err == nil && !s.noDebugLog {
		// NCCL's debug log, as the simulator prints it: what a study reads
		// NCCL's plan from.
		res.Facts = s.debugFacts(req)
	}
	var fe *sim.FaultError
	var ue *sim.UsageError
	switch {
	case errors.As(err, &fe):
		switch fe.Kind {
		case sim.FaultHang, sim.FaultInitHang:
			l.Outcome, l.Reason = benchfmt.TimedOut, fe.Error()
		case sim.FaultWrong:
			l.Outcome, l.Reason = benchfmt.Invalid, fe.Error()
		default:
			l.Outcome, l.Reason = benchfmt.Failed, fe.Error()
		}
	case errors.As(err, &ue):
		l.Outcome, l.Reason = benchfmt.Failed, ue.Error()
	case err != nil:
		return nil, err
	}
	return l, nil
}

// debugLogs holds the simulator's debug log per command line and
// environment, shared by every study of the test binary: the log has no
// noise and no seed, so one run of each serves every study that asks
// (the package's studies made 2,648 requests for 476 distinct logs, and
// running the simulator for each was about a sixth of the package's CPU).
// Each request still parses its own copy, so no study shares another's
// Facts.
var debugLogs sync.Map // string → []byte

// debugFacts runs the simulator in process with NCCL_DEBUG=INFO and
// TUNING and reads its log (once per config: the log does not depend on
// noise).
func (s *simLauncher) debugFacts(req Request) *benchfmt.Facts {
	environ := []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING"}
	environ = append(environ, req.Config.Env()...)
	var out bytes.Buffer
	args := []string{"--profile", s.name, "--noise", "0", "-n", "1", "-w", "0",
		"-b", strconv.FormatInt(req.MinBytes, 10), "-e", strconv.FormatInt(req.MaxBytes, 10), "-f", "2",
		"--collective", string(s.ownOp(req.Op))}
	if s.ranks > 0 {
		args = append(args, "--ranks", strconv.Itoa(s.ranks))
	}
	key := strings.Join(args, "\x00") + "\x00\x00" + strings.Join(environ, "\x00")
	if log, ok := debugLogs.Load(key); ok {
		return benchfmt.ParseFacts(log.([]byte))
	}
	sim.Main(args, environ, &out, io.Discard)
	debugLogs.Store(key, out.Bytes())
	return benchfmt.ParseFacts(out.Bytes())
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// memRecorder keeps trials and launches in memory and checks the
// study's bookkeeping as it goes.
type memRecorder struct {
	t        testing.TB
	nextID   uint64
	trials   map[uint64]*Trial
	keys     map[string]uint64
	launches int
	phases   []string
	// scoredDebug counts debug launches saved as scored (never right).
	scoredDebug int
	// batched counts, per phase, the launch records a batch made.
	batched map[string]int
	// debugged counts each trial's debug launches that ran.
	debugged map[*Trial]int
}

func newMemRecorder(t testing.TB) *memRecorder {
	return &memRecorder{t: t, trials: map[uint64]*Trial{}, keys: map[string]uint64{}}
}

func (r *memRecorder) SaveTrial(t *Trial) error {
	if t.ID == 0 {
		if id, dup := r.keys[t.Config.Key()]; dup {
			r.t.Errorf("trial %d repeats the config of trial id %d: %s", t.Number, id, t.Config)
		}
		r.nextID++
		t.ID = r.nextID
		r.keys[t.Config.Key()] = t.ID
	}
	r.trials[t.ID] = t
	return nil
}

func (r *memRecorder) SaveTrials(ts []*Trial) error {
	for _, t := range ts {
		if err := r.SaveTrial(t); err != nil {
			return err
		}
	}
	return nil
}

func (r *memRecorder) SaveRefusal(Refusal) error { return nil }
func (r *memRecorder) SaveDesign(Planned) error  { return nil }

func (r *memRecorder) SaveLaunch(t *Trial, req Request, l *benchfmt.Launch, scored bool, scoreUS float64) error {
	r.launches++
	r.phases = append(r.phases, req.Phase)
	if req.Debug && scored {
		r.scoredDebug++
	}
	if req.Debug && l.Outcome == benchfmt.OK {
		if r.debugged == nil {
			r.debugged = map[*Trial]int{}
		}
		r.debugged[t]++
	}
	if l.Batch != nil {
		if r.batched == nil {
			r.batched = map[string]int{}
		}
		r.batched[req.Phase]++
	}
	return nil
}

// trueScore is a config's noiseless band score on the profile, +Inf if
// the config fails there.
func trueScore(t testing.TB, p *sim.Profile, cfg nccl.Config, sizes []int64) float64 {
	logSum := 0.0
	for _, b := range sizes {
		us, err := p.TrueTimeUS(cfg, b)
		if err != nil {
			return math.Inf(1)
		}
		logSum += math.Log(us)
	}
	if _, err := p.SampleLaunch(cfg, sizes, 1, 0, 1, 1); err != nil {
		return math.Inf(1) // faults: never a valid answer
	}
	return math.Exp(logSum / float64(len(sizes)))
}

// bestInSpace is the best true band score over the whole space.
func bestInSpace(t testing.TB, p *sim.Profile, space Space, sizes []int64) (float64, nccl.Config) {
	best, bestCfg := math.Inf(1), nccl.Config{}
	for _, c := range space.All() {
		if c.Validate() != nil {
			continue
		}
		if s := trueScore(t, p, c, sizes); s < best {
			best, bestCfg = s, c
		}
	}
	return best, bestCfg
}

// LaunchBatch is the simulated fabric's batch launch (sim.SampleBatch):
// what the simulator process prints for --batch, without the process.
func (s *simLauncher) LaunchBatch(ctx context.Context, b Batch) ([]*benchfmt.Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.batches = append(s.batches, b)
	var cfgs []nccl.Config
	for _, m := range b.Members {
		cfgs = append(cfgs, m.Config)
	}
	seq := b.Members[0].Seq
	d := s.prof.SampleBatch(simBatchOps(b, s.op), cfgs, b.Rounds, 3, s.iters, s.noise, s.seed*1_000_003+int64(seq), seq)
	return batchLaunches(b, d), nil
}

// simBatchOps are b's ops as the simulator measures them, an op ""
// being own (the study's own op; "" all_reduce).
func simBatchOps(b Batch, own nccl.Op) []sim.BatchOp {
	var ops []sim.BatchOp
	for _, op := range b.Ops {
		o := op.Op
		if o == "" {
			o = own
		}
		ops = append(ops, sim.BatchOp{Op: o.OrAllReduce(), Sizes: nccl.PowersOfTwo(op.MinBytes, op.MaxBytes)})
	}
	return ops
}

// ownOp is the op a request of op measures: op, or the study's own
// (s.op) for a request that names none.
func (s *simLauncher) ownOp(op nccl.Op) nccl.Op {
	if op == "" {
		op = s.op
	}
	return op.OrAllReduce()
}

// batchLaunches are a simulated batch's launch records, as a batch
// launcher returns them: one per member and op, each marked with the
// batch, its rows BatchRows of the member's rounds; a member
// the simulator failed has failed records.
func batchLaunches(b Batch, d *sim.BatchDraw) []*benchfmt.Launch {
	var out []*benchfmt.Launch
	share := d.Duration / time.Duration(len(b.Members)*len(b.Ops))
	for i := range b.Members {
		member := &benchfmt.BatchMember{Seq: b.Seq, Position: slices.Index(b.CreationOrder, i), Configs: len(b.Members)}
		for j, op := range b.Ops {
			l := &benchfmt.Launch{Op: op.Op, Simulated: true, Batch: member, Duration: share, Outcome: benchfmt.OK}
			if err := d.Errs[i]; err != nil {
				l.Outcome, l.Reason = benchfmt.Failed, err.Error()
			} else {
				l.Result = &benchfmt.Result{Collective: string(op.Op.OrAllReduce()), NRanks: 4, Simulated: true, Complete: true,
					Rows: BatchRows(d.Visits[i][j])}
			}
			out = append(out, l)
		}
	}
	return out
}
