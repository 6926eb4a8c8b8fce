package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
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
		State: string(t.State), Reason: t.Reason, Role: t.Role}
	return nil
}

// SaveTrials writes the trials' states and scores in one transaction.
func (r *storeRecorder) SaveTrials(ts []*search.Trial) error {
	var recs []*store.Trial
	for _, t := range ts {
		if t.ID == 0 {
			continue // never launched: nothing of it is stored
		}
		rec := &store.Trial{ID: t.ID, Config: t.Config, State: string(t.State), Reason: t.Reason, Role: t.Role}
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
	rec.TrialUpdate = &store.TrialUpdate{State: string(t.State), Reason: t.Reason}
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
	if r.study.Fabric.NCCLVersion == "" && l.Result != nil {
		r.study.Fabric = fabricOf(l.Result)
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

// openWriteStore opens the database for a command that records launches.
func openWriteStore(c *cli.Context) (*store.Store, error) {
	path, err := dbPath(c)
	if err != nil {
		return nil, err
	}
	return store.Open(path, store.Options{})
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

// isTerminal reports whether w is a terminal (progress bars only then).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// simLabel is the mark every simulated result carries in text output.
func simLabel(simulated bool, profile string) string {
	if !simulated {
		return ""
	}
	if profile == "" {
		return "SIMULATED fabric"
	}
	return "SIMULATED fabric: " + profile
}

// shortDuration prints a duration to the tenth of a second, or ms below 1 s.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return strings.TrimSuffix(d.Round(100*time.Millisecond).String(), "0s")
}
