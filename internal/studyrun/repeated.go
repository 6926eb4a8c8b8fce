package studyrun

import (
	"context"
	"errors"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// Repeated measures one config repeatedly, as sweep and gate do: the
// study with its one trial, an uncounted warm-up launch (unless
// disabled), then the counted ones, each stored as it ends.
type Repeated struct {
	Store    *store.Store
	Study    *store.Study
	Launcher *Launcher
	RepeatOptions
	Role     string
	Phase    string // the phase of the counted launches
	Min, Max int64

	trial    *search.Trial
	rec      *Recorder
	FailedAt int // the number (from 1) of the launch that failed
}

// Run makes the launches. It returns the counted launches as the model
// sees them and the last one as run. A launch that failed ends the run:
// it comes back as failed (trial and study marked failed) and err nil,
// so the caller can explain it.
func (r *Repeated) Run(ctx context.Context) (launches []model.Launch, last, failed *benchfmt.Launch, err error) {
	total := r.Repeats
	if r.Warmup {
		total++
	}
	for seq := 0; seq < total; seq++ {
		phase, scored := r.Phase, true
		if r.Warmup && seq == 0 {
			phase, scored = vocab.PhaseWarmup, false
		}
		req := search.Request{Config: r.Config, MinBytes: r.Min, MaxBytes: r.Max, Seq: seq, Phase: phase}
		l, err := r.Launcher.Launch(ctx, req)
		if err != nil {
			if l != nil {
				_ = r.rec.SaveLaunch(r.trial, req, l, false, 0)
			}
			r.Study.Status = vocab.StatusInterrupted
			if ctx.Err() == nil {
				r.Study.Status, r.Study.Reason = vocab.StatusFailed, err.Error()
			}
			_ = r.Store.UpdateStudy(r.Study)
			if ctx.Err() != nil && !errors.Is(err, vocab.ErrFabric) {
				return nil, nil, nil, vocab.ErrInterrupted
			}
			return nil, nil, nil, err
		}
		counted := scored && l.Outcome == benchfmt.OK
		var ml model.Launch
		var score float64
		if counted {
			ml, score, _ = search.Measure(l, r.Study.Sizes) // 0 when it lacks a size: stored unscored
		}
		if err := r.rec.SaveLaunch(r.trial, req, l, counted, score); err != nil {
			// Say why it ended, if the store still takes a small write.
			r.Study.Status, r.Study.Reason = vocab.StatusFailed, err.Error()
			_ = r.Store.UpdateStudy(r.Study)
			return nil, nil, nil, err
		}
		if r.Progress != nil {
			r.Progress(seq+1, total, phase, l)
		}
		if l.Outcome != benchfmt.OK {
			r.trial.State, r.trial.Reason = vocab.TrialFailed, l.Reason
			_ = r.rec.SaveTrial(r.trial)
			r.Study.Status, r.Study.Reason = vocab.StatusFailed, l.Reason
			_ = r.Store.UpdateStudy(r.Study)
			r.FailedAt = seq + 1
			return launches, last, l, nil
		}
		if scored {
			launches = append(launches, ml)
			last = l
		}
	}
	return launches, last, nil, nil
}

// Finish marks the trial complete and the study done, with reason.
func (r *Repeated) Finish(reason string) error {
	r.trial.State = vocab.TrialComplete
	_ = r.rec.SaveTrial(r.trial)
	r.Study.Status, r.Study.Reason = vocab.StatusDone, reason
	return r.Store.UpdateStudy(r.Study)
}

// RepeatOptions are how sweep and gate measure one config repeatedly.
type RepeatOptions struct {
	Config nccl.Config
	// Repeats are the counted launches; Warmup adds an uncounted one first.
	Repeats int
	Warmup  bool
	Launch  LaunchSettings
	// Name, Started and Progress are ABOptions'.
	Name     func(*store.Study)
	Started  func(*store.Study)
	Progress func(n, total int, phase string, l *benchfmt.Launch)
}

// repeat creates a study of kind over min to max, scored at sizes, and
// measures o.Config in it.
func repeat(ctx context.Context, st *store.Store, kind, role, phase string, min, max int64, sizes []int64, o RepeatOptions) (*Repeated, []model.Launch, *benchfmt.Launch, *benchfmt.Launch, error) {
	band := nccl.Band{Min: min, Max: max}
	r := &Repeated{Store: st, Launcher: &Launcher{Base: o.Launch.Spec, Seed: o.Launch.Seed},
		RepeatOptions: o, Role: role, Phase: phase, Min: min, Max: max,
		Study: &store.Study{Kind: kind, Band: band.String(), BandMin: min, BandMax: max,
			Sizes: sizes, Collective: string(o.Launch.Spec.Op.OrAllReduce()), BaseEnv: o.Launch.Spec.BaseEnv,
			Launch: StoredLaunchSettings(o.Launch.Spec, o.Launch.Seed), Simulated: o.Launch.Simulated, Seed: o.Launch.Seed,
			Budget: store.Budget{Launches: o.Repeats}, Status: vocab.StatusRunning}}
	if err := createStudy(st, r.Study, o.Name); err != nil {
		return nil, nil, nil, nil, err
	}
	// The study's one trial.
	r.rec = NewRecorder(st, r.Study, r.Study.Sizes)
	r.trial = &search.Trial{Config: o.Config, Role: role, State: vocab.TrialRunning}
	if err := r.rec.SaveTrial(r.trial); err != nil {
		return nil, nil, nil, nil, err
	}
	if o.Started != nil {
		o.Started(r.Study)
	}
	launches, last, failed, err := r.Run(ctx)
	return r, launches, last, failed, err
}
