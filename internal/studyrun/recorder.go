package studyrun

import (
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// Recorder writes a study's trials and launches to the store as it is
// handed them, and learns the fabric's fingerprint from the first launch
// that shows it. A new trial is written with its first launch, in one
// transaction: each commit costs an fsync.
type Recorder struct {
	st      *store.Store
	study   *store.Study
	sizes   []int64
	pending map[*search.Trial]*store.Trial
}

// NewRecorder records into study; a trial's score is over sizes.
func NewRecorder(st *store.Store, study *store.Study, sizes []int64) *Recorder {
	return &Recorder{st: st, study: study, sizes: sizes, pending: map[*search.Trial]*store.Trial{}}
}

// SaveTrial writes a trial's state; a trial not yet stored is held back
// until its first launch is saved.
func (r *Recorder) SaveTrial(t *search.Trial) error {
	if t.ID != 0 {
		return r.SaveTrials([]*search.Trial{t})
	}
	r.pending[t] = &store.Trial{StudyID: r.study.ID, Number: t.Number, Config: t.Config, Key: t.Config.Key(),
		State: t.State, Reason: t.Reason, Role: t.Role}
	return nil
}

// SaveTrials writes the trials' states and scores in one transaction.
func (r *Recorder) SaveTrials(ts []*search.Trial) error {
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

// SaveRefusal keeps the study's refusal (store.Study.Refusals), for a
// study resumed after it.
func (r *Recorder) SaveRefusal(f search.Refusal) error {
	r.study.Refusals = append(r.study.Refusals, RefusalOf(f))
	return r.saveStudy("a refusal")
}

// SaveDesign keeps the design of the confirmation that begins
// (store.Study.Confirming), for a study resumed during it.
func (r *Recorder) SaveDesign(p search.Planned) error {
	r.study.Confirming = &store.ConfirmDesign{Env: p.Candidate.Clone(), Seq: p.Seq, FirstLaunches: p.First, MaxLaunches: p.Last}
	return r.saveStudy("the confirmation design")
}

func (r *Recorder) saveStudy(what string) error {
	if err := r.st.UpdateStudy(r.study); err != nil {
		return fmt.Errorf("saving %s of study %s: %w", what, r.study.Name, err)
	}
	return nil
}

// SaveLaunch writes one launch with its raw output, the trial's new state
// and, the first time a launch shows them, the fabric's fingerprint and
// transport.
func (r *Recorder) SaveLaunch(t *search.Trial, req search.Request, l *benchfmt.Launch, scored bool, scoreUS float64) error {
	rec := LaunchRecord(l)
	rec.StudyID, rec.TrialID, rec.Phase, rec.Scored = r.study.ID, t.ID, req.Phase, scored
	rec.MinBytes, rec.MaxBytes, rec.Debug = req.MinBytes, req.MaxBytes, req.Debug
	if scored {
		rec.ScoreUS = scoreUS
	}
	u := store.TrialUpdate{State: t.State, Reason: t.Reason}
	if len(t.Explore) > 0 {
		u.ScoreUS = t.Score(r.sizes)
	}
	storedJSON, _ := benchfmt.RedactJSONEnv(l.JSON) // rank 0's environment stays out
	raw := &store.Raw{Stdout: l.Stdout, Stderr: l.Stderr, JSON: storedJSON}
	var err error
	if nt := r.pending[t]; nt != nil {
		if err = r.st.AddTrialWithLaunch(nt, rec, raw, u); err == nil {
			t.ID = nt.ID
			delete(r.pending, t)
		}
	} else {
		err = r.st.AddLaunchUpdatingTrial(rec, raw, u)
	}
	if err != nil {
		return fmt.Errorf("saving launch %d: %w", req.Seq, err)
	}
	changed := false
	if r.study.Platform.NCCLVersion == "" && l.Result != nil {
		r.study.Platform, changed = store.PlatformOf(l.Result), true
	}
	// Only the debug launches log what carries data between the ranks.
	if l.Result != nil && r.study.Platform.AddTransport(l.Result.Facts) {
		changed = true
	}
	if changed {
		return r.saveStudy("the fabric")
	}
	return nil
}

// LaunchRecord is a runner launch's stored form.
func LaunchRecord(l *benchfmt.Launch) *store.Launch {
	rec := &store.Launch{Op: l.Op, Start: l.Start, Duration: l.Duration, Outcome: l.Outcome, Reason: l.Reason,
		ExitCode: l.ExitCode, Argv: l.Argv, Env: l.Env, Simulated: l.Simulated, Batch: l.Batch}
	if l.Result != nil {
		rec.Sizes = benchfmt.SizesOf(l.Result)
		rec.Facts = l.Result.Facts
		rec.Simulated = rec.Simulated || l.Result.Simulated
	}
	return rec
}
