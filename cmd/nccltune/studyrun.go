package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// specLauncher runs the study's launches with runner.Run.
type specLauncher struct {
	base runner.Spec
	seed int64
}

func (l *specLauncher) Launch(ctx context.Context, req search.Request) (*runner.Launch, error) {
	spec := l.base
	spec.Config = req.Config
	spec.MinBytes, spec.MaxBytes = req.MinBytes, req.MaxBytes
	spec.Debug = req.Debug
	if spec.Sim != nil {
		sim := *spec.Sim
		sim.Seed = launchSeed(l.seed, req.Seq)
		sim.Launch = req.Seq
		spec.Sim = &sim
	}
	return runner.Run(ctx, spec)
}

// launchSeed gives every launch of a study its own reproducible noise.
func launchSeed(seed int64, seq int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, seq)
	return int64(h.Sum64() >> 1)
}

// storeRecorder writes a study's trials and launches to the store, and
// learns the fabric's fingerprint from the first launch that shows it. A
// new trial is written with its first launch, in one transaction: each
// commit costs an fsync, and a study makes hundreds of launches.
type storeRecorder struct {
	st      *store.Store
	study   *store.Study
	sizes   []int64
	pending map[*search.Trial]*store.Trial
}

func (r *storeRecorder) SaveTrial(t *search.Trial) error {
	if t.ID != 0 {
		return r.SaveTrials([]*search.Trial{t})
	}
	if r.pending == nil {
		r.pending = map[*search.Trial]*store.Trial{}
	}
	r.pending[t] = &store.Trial{StudyID: r.study.ID, Number: t.Number, Config: t.Config, Key: t.Config.Key(),
		State: t.State, Reason: t.Reason, Role: t.Role}
	return nil
}

// SaveTrials writes the trials' states and scores in one transaction.
func (r *storeRecorder) SaveTrials(ts []*search.Trial) error {
	var recs []*store.Trial
	for _, t := range ts {
		if t.ID == 0 {
			continue // never launched: nothing of it is stored
		}
		rec := &store.Trial{ID: t.ID, Config: t.Config, State: t.State, Reason: t.Reason, Role: t.Role}
		if len(t.Explore) > 0 {
			rec.ScoreUS = t.Score(r.sizes)
		}
		recs = append(recs, rec)
	}
	if err := r.st.UpdateTrials(recs); err != nil {
		return fmt.Errorf("saving the trials of study %s: %w", r.study.Name, err)
	}
	return nil
}

func (r *storeRecorder) SaveLaunch(t *search.Trial, req search.Request, l *runner.Launch, scored bool) error {
	rec := launchRecord(l)
	rec.StudyID, rec.TrialID, rec.Seq, rec.Phase, rec.Scored = r.study.ID, t.ID, req.Seq, req.Phase, scored
	if scored {
		if ml := search.ModelLaunch(l.Result); len(ml.Times) > 0 {
			if s, err := model.LaunchScore(ml, r.sizes); err == nil {
				rec.ScoreUS = s
			}
		}
	}
	if nt := r.pending[t]; nt != nil {
		rec.NewTrial = nt
	}
	rec.TrialUpdate = &store.TrialUpdate{State: t.State, Reason: t.Reason}
	if len(t.Explore) > 0 {
		rec.TrialUpdate.ScoreUS = t.Score(r.sizes)
	}
	if err := r.st.AddLaunch(rec, &store.Raw{Stdout: l.Stdout, Stderr: l.Stderr, JSON: l.JSON}); err != nil {
		return fmt.Errorf("saving launch %d: %w", req.Seq, err)
	}
	if rec.NewTrial != nil {
		t.ID = rec.NewTrial.ID
		delete(r.pending, t)
	}
	changed := false
	if r.study.Fabric.NCCLVersion == "" && l.Result != nil {
		r.study.Fabric, changed = fabricOf(l.Result), true
	}
	// The timed launches run without NCCL's debug log; the explain
	// launches have it, and with it what carries data between the ranks.
	if l.Result != nil && r.study.Fabric.AddTransport(l.Result.Facts) {
		changed = true
	}
	if changed {
		if err := r.st.UpdateStudy(r.study); err != nil {
			return fmt.Errorf("saving the fabric of study %s: %w", r.study.Name, err)
		}
	}
	return nil
}

// launchRecord converts a runner launch into its stored form.
func launchRecord(l *runner.Launch) *store.Launch {
	rec := &store.Launch{Start: l.Start, Duration: l.Duration, Outcome: l.Outcome, Reason: l.Reason,
		ExitCode: l.ExitCode, Argv: l.Argv, Env: l.Env, Simulated: l.Simulated}
	if l.Result != nil {
		rec.Sizes = store.SizesFromResult(l.Result)
		rec.Facts = l.Result.Facts
		rec.Simulated = rec.Simulated || l.Result.Simulated
	}
	return rec
}

// openReview opens the database read-only for a command that reads named
// studies; a database that does not exist yet holds none of them (exit 2).
func openReview(path, query string) (*store.Store, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, usageErrorf("no study %q: %v — %s", query, err, strings.TrimPrefix(howToStart, "no studies yet — "))
	}
	return st, err
}

// preflight refuses a launch that cannot start (no benchmark, no mpirun,
// a bad spec) before a command opens the database, so no study is stored
// for it.
func preflight(lo launchOptions) error {
	err := runner.Preflight(lo.spec)
	if err == nil || errors.Is(err, vocab.ErrFabric) {
		return err
	}
	return usageError(err)
}

// whereStored tells the user which file holds the study: on a first run
// the database did not exist, and nothing else says where it went.
func whereStored(path string, created bool) string {
	if created {
		return fmt.Sprintf("  stored in %s (a new database; --db FILE or NCCLTUNE_DB chooses another)", path)
	}
	return "  stored in " + path
}

// dbPath is --db (or NCCLTUNE_DB), else the default under the user's data dir.
func dbPath(c *cli.Context) (string, error) {
	if p := c.String("db"); p != "" {
		return p, nil
	}
	p, err := store.DefaultPath()
	if err != nil {
		return "", fmt.Errorf("finding the default database location: %w; pass --db FILE", err)
	}
	return p, nil
}

// repeatedConfig measures one config repeatedly, as sweep and gate do:
// the study with its one trial, an uncounted warm-up launch (unless
// disabled), then the counted ones, each stored as it ends.
type repeatedConfig struct {
	st       *store.Store
	study    *store.Study
	launch   launchOptions
	config   nccl.Config
	role     string
	phase    string // the phase of the counted launches
	min, max int64
	repeats  int
	warmup   bool
	stderr   io.Writer

	trial *search.Trial
	rec   *storeRecorder
	// failedAt is the number (from 1) of the launch that failed, if one did.
	failedAt int
}

// start creates the study and its trial.
func (r *repeatedConfig) start() error {
	if err := createStudy(r.st, r.study); err != nil {
		return err
	}
	r.rec = &storeRecorder{st: r.st, study: r.study, sizes: r.study.Sizes}
	r.trial = &search.Trial{Config: r.config, Role: r.role, State: vocab.TrialRunning}
	return r.rec.SaveTrial(r.trial)
}

// run makes the launches. It returns the counted launches as the model
// sees them and the last one as run. A launch that failed, hung or
// returned wrong results ends the run: it comes back as failed (with the
// trial and study marked failed) and err nil, so the caller can explain
// it. err is for what stopped the run otherwise (interrupted, nothing to
// launch, the store), already mapped to its exit code.
func (r *repeatedConfig) run(ctx context.Context) (launches []model.Launch, last, failed *runner.Launch, err error) {
	launcher := &specLauncher{base: r.launch.spec, seed: r.launch.seed}
	total := r.repeats
	if r.warmup {
		total++
	}
	for seq := 0; seq < total; seq++ {
		phase, scored := r.phase, true
		if r.warmup && seq == 0 {
			phase, scored = vocab.PhaseWarmup, false
		}
		req := search.Request{Config: r.config, MinBytes: r.min, MaxBytes: r.max, Seq: seq, Phase: phase}
		l, err := launcher.Launch(ctx, req)
		if err != nil {
			if l != nil {
				_ = r.rec.SaveLaunch(r.trial, req, l, false)
			}
			r.study.Status = vocab.StatusInterrupted
			if ctx.Err() == nil {
				r.study.Status, r.study.Reason = vocab.StatusFailed, err.Error()
			}
			_ = r.st.UpdateStudy(r.study)
			if ctx.Err() != nil && !errors.Is(err, vocab.ErrFabric) {
				return nil, nil, nil, vocab.ErrInterrupted
			}
			return nil, nil, nil, err
		}
		if err := r.rec.SaveLaunch(r.trial, req, l, scored && l.Outcome == runner.OK); err != nil {
			// Say why it ended, if the store still takes a small write (on
			// a full disk it may not: readers then tell it was cut short).
			r.study.Status, r.study.Reason = vocab.StatusFailed, err.Error()
			_ = r.st.UpdateStudy(r.study)
			return nil, nil, nil, err
		}
		fmt.Fprintf(r.stderr, "launch %d/%d %s: %s (%s)\n", seq+1, total, phase, outcomeText(l), l.Duration.Round(time.Millisecond))
		if l.Outcome != runner.OK {
			r.trial.State, r.trial.Reason = vocab.TrialFailed, l.Reason
			_ = r.rec.SaveTrial(r.trial)
			r.study.Status, r.study.Reason = vocab.StatusFailed, l.Reason
			_ = r.st.UpdateStudy(r.study)
			r.failedAt = seq + 1
			return launches, last, l, nil
		}
		if scored {
			launches = append(launches, search.ModelLaunch(l.Result))
			last = l
		}
	}
	return launches, last, nil, nil
}

// finish marks the trial complete and the study done, with reason.
func (r *repeatedConfig) finish(reason string) error {
	r.trial.State = vocab.TrialComplete
	_ = r.rec.SaveTrial(r.trial)
	r.study.Status, r.study.Reason = vocab.StatusDone, reason
	return r.st.UpdateStudy(r.study)
}
