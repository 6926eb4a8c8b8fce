package studyrun

import (
	"context"
	"fmt"
	"sort"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// LaunchSettings is how a study's launches run: the spec (filled in per
// launch), whether it is the simulated fabric, and the simulator's seed.
type LaunchSettings struct {
	Spec      runner.Spec
	Simulated bool
	Seed      int64
}

// SearchOptions are what a search study runs with.
type SearchOptions struct {
	// Study is the search's settings; a resumed study's own replace most.
	Study  search.Options
	Launch LaunchSettings
	// Resume names the interrupted study to continue; empty starts one.
	Resume string
	// Name, if set, names a new study (--name, --label).
	Name func(*store.Study)
	// CheckResume, if set, is asked before a stored study resumes: its
	// error refuses (e.g. launch settings other than the study's).
	CheckResume func(*store.Study) error
	// GuardOpsSkipped are the default guarded ops left out, each with why.
	GuardOpsSkipped []string
	LoggedChoices   []nccl.LoggedChoice // --chose
}

// guardLaunchesOf is what the study stores of GuardLaunches.
func guardLaunchesOf(so search.Options) int {
	if len(so.GuardOps) == 0 {
		return 0
	}
	return so.GuardLaunches
}

// SearchRun is a search study ready to run: created, or loaded with its
// trials to resume.
type SearchRun struct {
	Store *store.Store
	Study *store.Study
	// Options are the search's settings, a resumed study's own.
	Options search.Options
	launch  LaunchSettings
	prior   search.Resume // what a resumed study made before
	// Batch, when set, runs the instrument's batch launches
	// (search.Options.BatchSize); nil, every launch is its own.
	Batch BatchRunner
}

// PrepareSearch creates the study, or loads it and its trials to resume.
// A study that cannot resume is refused with vocab.ErrUsage.
func PrepareSearch(st *store.Store, o SearchOptions) (*SearchRun, error) {
	r := &SearchRun{Store: st, Options: o.Study, launch: o.Launch}
	r.Options.Ranks = o.Launch.Spec.NP // for the smallest size the benchmark measures
	var err error
	if o.Resume == "" {
		r.Study, err = newSearchStudy(st, o)
	} else {
		err = r.resume(o)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// newSearchStudy stores a new search study of o.
func newSearchStudy(st *store.Store, o SearchOptions) (*store.Study, error) {
	so := o.Study
	study := &store.Study{
		Kind: vocab.KindSearch, Band: so.Band.String(), BandMin: so.Band.Min, BandMax: so.Band.Max,
		Sizes: so.Band.Sizes(), GuardSizes: so.Guard, Collective: string(so.Parts()[0].Op.OrAllReduce()),
		GuardOps: so.GuardOps, GuardOpsSkipped: o.GuardOpsSkipped,
		Space: SpaceMap(so.Space), BaseEnv: o.Launch.Spec.BaseEnv, Launch: StoredLaunchSettings(o.Launch.Spec, o.Launch.Seed),
		BaselineEnv: so.Baseline.Clone(),
		Simulated:   o.Launch.Simulated, Seed: so.Seed,
		Budget: store.Budget{Launches: so.Budget, Time: so.Time},
		Search: &store.SearchSettings{Sampler: so.Sampler, ConfirmLaunches: so.ConfirmLaunches,
			MinEffect: so.Stats.MinEffect, Alpha: so.Stats.Alpha, AllowDisabled: so.AllowDisabled,
			GuardLaunches: guardLaunchesOf(so), ScopeLists: so.ScopeLists, BatchSize: so.BatchSize},
		Status: vocab.StatusRunning,
	}
	if so.Workload.ScoredByRounds() || so.Workload.Timed() { // a timed one even of one call
		for _, p := range so.Workload {
			study.Workload = append(study.Workload, store.PartOf(p))
		}
		for _, ch := range o.LoggedChoices {
			study.LoggedChoices = append(study.LoggedChoices, ch.String())
		}
	}
	if err := createStudy(st, study, o.Name); err != nil {
		return nil, err
	}
	return study, nil
}

// resume loads the study o.Resume names, with its settings and trials,
// and marks it running again.
func (r *SearchRun) resume(o SearchOptions) error {
	st := r.Store
	study, err := st.Study(o.Resume)
	if err != nil {
		return vocab.Mark(vocab.ErrUsage, err)
	}
	if study.Kind != vocab.KindSearch {
		return vocab.UsageErrorf("study %s is %s, not a search; only searches resume", study.Name, aKind(study.Kind))
	}
	if study.Status == vocab.StatusDone {
		return vocab.UsageErrorf("study %s is finished; see nccltune show %s", study.Name, study.Name)
	}
	if study.Simulated != o.Launch.Simulated {
		ran, how := "real hardware", "without --sim"
		if study.Simulated {
			ran, how = "the simulated fabric", "--sim "+study.Launch.SimProfile
		}
		return vocab.UsageErrorf("study %s ran on %s; resume it the same way (%s)", study.Name, ran, how)
	}
	if o.CheckResume != nil {
		if err := o.CheckResume(study); err != nil {
			return err
		}
	}
	so := &r.Options
	so.Band = nccl.Band{Min: study.BandMin, Max: study.BandMax}
	so.Guard = study.GuardSizes
	so.Space = SpaceFromMap(study.Space)
	so.Baseline = nccl.Config(study.BaselineEnv).Clone()
	so.Seed = study.Seed
	if study.Budget.Launches > 0 {
		so.Budget = study.Budget.Launches
	}
	so.Time = study.Budget.Time
	so.Op, so.Workload, so.GuardOps = study.Op(), nil, study.GuardOps
	if study.Parts().ScoredByRounds() || study.Parts().Timed() {
		so.Workload = study.Parts()
	}
	so.ScopeLists, so.BatchSize = false, 0
	// The study decides, samples and confirms as it was set up to,
	// whatever the defaults now.
	so.Stats = launchstats.OptionsOf(study)
	if ss := study.Search; ss != nil {
		so.Sampler, so.ConfirmLaunches = ss.Sampler, ss.ConfirmLaunches
		so.AllowDisabled, so.ScopeLists, so.BatchSize = ss.AllowDisabled, ss.ScopeLists, ss.BatchSize
		if ss.GuardLaunches > 0 {
			so.GuardLaunches = ss.GuardLaunches
		}
	}
	prior, err := LoadTrials(st, study, *so)
	if err != nil {
		return err
	}
	// Validated against what the stored launches already made.
	*so = so.Resumed(prior.Trials)
	if err := so.Validate(); err != nil {
		return err
	}
	study.Status, study.Reason = vocab.StatusRunning, ""
	if err := st.UpdateStudy(study); err != nil {
		return err
	}
	r.Study, r.prior = study, prior
	return nil
}

// Run runs the search (search.Run) with its launches stored as they end,
// and stores how it ended. Interrupted, it returns what is known with
// vocab.ErrInterrupted; a failed baseline or a missing benchmark is
// vocab.ErrFabric.
func (r *SearchRun) Run(ctx context.Context, onEvent func(search.Event)) (*search.Result, error) {
	st, study := r.Store, r.Study
	sizes := r.Options.ScoredKeys()
	rec := NewRecorder(st, study, sizes)
	var launcher search.Launcher = &Launcher{Base: r.launch.Spec, Seed: r.Options.Seed}
	if r.Batch != nil {
		launcher = &batchLauncher{Launcher: launcher.(*Launcher), run: r.Batch}
	}
	res, runErr := search.RunResume(ctx, r.Options, launcher, rec, r.prior, onEvent)
	switch {
	case runErr != nil && res != nil && ctx.Err() != nil:
		study.Status, study.Reason = vocab.StatusInterrupted, "interrupted by the user"
		if err := st.UpdateStudy(study); err != nil {
			return nil, err
		}
		return res, vocab.ErrInterrupted
	case runErr != nil:
		study.Status, study.Reason = vocab.StatusFailed, runErr.Error()
		_ = st.UpdateStudy(study)
		return nil, runErr // a failed baseline, a missing benchmark or launcher: vocab.ErrFabric
	}
	study.Recommendation = RecommendationOf(res, r.Options)
	study.Refusals, study.Confirming = nil, nil // the recommendation holds them
	study.Plans = res.Plan
	if p := study.Plans; p != nil && p.Merged == nil {
		p.Merged = []store.MergeCount{} // stored as [], never null
	}
	study.Status, study.Reason = vocab.StatusDone, ""
	if err := st.UpdateStudy(study); err != nil {
		return nil, err
	}
	return res, nil
}

// LoadTrials rebuilds what the search made from the store for --resume:
// each trial's measurements (search.Regroup) and debug launches, the
// launches made, and the refusals so far.
func LoadTrials(st *store.Store, study *store.Study, so search.Options) (search.Resume, error) {
	recs, launches, err := st.TrialsAndLaunches(study.ID)
	if err != nil {
		return search.Resume{}, err
	}
	byID := map[uint64]*search.Trial{}
	byTrial := map[*search.Trial][]search.StoredLaunch{}
	var out []*search.Trial
	for _, r := range recs {
		t := &search.Trial{ID: r.ID, Number: r.Number, Config: r.Config, Role: r.Role,
			State: vocab.TrialState(r.State), Reason: r.Reason}
		if t.State == vocab.TrialComplete {
			t.State = vocab.TrialRunning
		}
		byID[r.ID] = t
		out = append(out, t)
	}
	sort.SliceStable(launches, func(i, j int) bool { return launches[i].Seq < launches[j].Seq })
	// The baseline's confirmation launches before the confirmation under
	// way were paired with candidates refused since.
	since, _ := stored.ConfirmationSpan(study, len(launches))
	for _, l := range launches {
		t := byID[l.TrialID]
		if t == nil {
			continue
		}
		t.Launches++
		if l.Phase == vocab.PhasePlan || l.Phase == vocab.PhaseExplain || l.Phase == vocab.PhaseExact && l.Debug {
			// The search reads NCCL's plan back from these.
			rl := &benchfmt.Launch{Op: l.Op, Outcome: l.Outcome, Reason: l.Reason, Simulated: l.Simulated,
				Result: &benchfmt.Result{Facts: l.Facts}}
			t.Debug = append(t.Debug, search.DebugLaunch{Phase: l.Phase, Launch: rl, MinBytes: l.MinBytes, MaxBytes: l.MaxBytes})
		}
		if l.Phase == vocab.PhaseConfirm && l.Seq < since && t.Role == vocab.RoleBaseline {
			continue // as nextAfterRefusal restarted the baseline's confirmation
		}
		byTrial[t] = append(byTrial[t], launchstats.SearchLaunch(l))
	}
	refused, err := refusalsOf(study, byID)
	if err != nil {
		return search.Resume{}, err
	}
	for _, t := range out {
		so.Regroup(t, byTrial[t])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	prior := search.Resume{Trials: out, Launches: len(launches), Refused: refused}
	if c := study.Confirming; c != nil {
		prior.Design = &search.Planned{Candidate: nccl.Config(c.Env).Clone(), Seq: c.Seq, First: c.FirstLaunches, Last: c.MaxLaunches}
	}
	return prior, nil
}

func SpaceMap(s search.Space) map[string][]string {
	m := map[string][]string{}
	for _, d := range s {
		m[d.Knob] = d.Choices
	}
	return m
}

// SpaceFromMap orders dimensions as nccl.Knobs does.
func SpaceFromMap(m map[string][]string) search.Space {
	var s search.Space
	for _, name := range nccl.KnobNames() {
		if ch, ok := m[name]; ok {
			s = append(s, search.Dimension{Knob: name, Choices: ch})
		}
	}
	return s
}

// StoredLaunchSettings are the launch settings a study stores, so that
// resume and verify launch the same way; seed is the simulator's.
func StoredLaunchSettings(s runner.Spec, seed int64) store.LaunchSettings {
	ls := store.LaunchSettings{Launcher: s.Launcher, NP: s.NP, Hosts: s.Hosts, MPIArgs: s.MPIArgs,
		Bench: s.Bench, BenchArgs: s.BenchArgs, Timeout: s.Timeout, Instrument: s.Instrument, Prefix: s.Prefix,
		Run: &store.RunSettings{Iters: s.Iters, Warmup: s.Warmup, MPIFlavor: s.MPIFlavor, MPIRun: s.MPIRun, TorchScript: s.TorchScript}}
	if s.Sim != nil {
		ls.Launcher = "sim"
		ls.SimProfile, ls.SimNoise, ls.SimSeed = s.Sim.Profile, s.Sim.Noise, seed
	}
	return ls
}

// RecommendationOf turns the study's result into its stored conclusion.
func RecommendationOf(res *search.Result, so search.Options) *store.Recommendation {
	sizes := so.ScoredKeys()
	rec := &store.Recommendation{Env: map[string]string{}, Speedup: 1, SpeedupCI: [2]float64{1, 1},
		Reason: res.Reason, Ending: res.Ending, MinEffect: so.Stats.MinEffect, Dropped: []nccl.Drop{}}
	for _, f := range res.Refused {
		rec.Refusals = append(rec.Refusals, RefusalOf(f))
	}
	base := res.Baseline
	if res.Recommend {
		rec.Env = res.Winner.Config.Clone()
		rec.TrialID = res.Winner.ID
		rec.Dropped = append(rec.Dropped, res.Dropped...)
		rec.Scoped = append(rec.Scoped, res.Scoped...)
		if res.ScopedFrom != nil {
			rec.ScopedFromTrialID = res.ScopedFrom.ID
		}
	}
	if res.Decision == nil || res.Winner == nil {
		if base != nil && len(base.Explore) > 0 {
			rec.BaselineScoreUS = base.Score(sizes)
			rec.ScoreUS = rec.BaselineScoreUS
		}
		return rec
	}
	rec.CandidateTrialID = res.Winner.ID
	d := res.Decision
	rec.Speedup, rec.SpeedupCI, rec.Significant, rec.PValue = d.Speedup, [2]float64{d.Lo, d.Hi}, d.Significant && res.Recommend, d.P
	rec.CILevel = store.CILevel(d.CILevel) // the deciding look's own level
	rec.BaselineLaunches, rec.CandidateLaunches = len(base.Confirm), len(res.Winner.Confirm)
	bs := model.Summarize(base.Confirm, sizes, so.Stats)
	cs := model.Summarize(res.Winner.Confirm, sizes, so.Stats)
	rec.BaselineScoreUS, rec.ScoreUS = bs.ScoreUS, cs.ScoreUS
	if !so.Workload.ScoredByRounds() {
		rec.PerSize = launchstats.SizeComparisons(base.Confirm, res.Winner.Confirm, sizes, so.Stats)
		rec.Guards = launchstats.SizeComparisons(base.Confirm, res.Winner.Confirm, so.Guard, so.Stats)
	} else {
		for _, op := range so.Workload.Ops() {
			rec.Guards = append(rec.Guards, opComparisons(op, base.ConfirmOf(op), res.Winner.ConfirmOf(op), so.Guard, so.Stats)...)
		}
	}
	for _, p := range res.Parts {
		rec.Parts = append(rec.Parts, partComparison(p, base, res.Winner, so.Stats))
	}
	for _, g := range res.OpGuards {
		rec.OpGuards = append(rec.OpGuards, opGuardOf(g))
	}
	return rec
}

// RefusalOf is a refusal as the store keeps it (refusalsOf reads it back).
func RefusalOf(f search.Refusal) store.Refusal {
	// A candidate that failed before a look has no interval: SpeedupCI
	// stays zero, which every printer shows as none.
	r := store.Refusal{TrialID: f.Trial.ID, Env: f.Trial.Config.Clone(), Ending: f.Ending, Reason: f.Reason, Speedup: 1}
	if d := f.Decision; d != nil {
		r.Speedup = store.FiniteOr(d.Speedup, 1)
		r.SpeedupCI = [2]float64{store.FiniteOr(d.Lo, r.Speedup), store.FiniteOr(d.Hi, r.Speedup)}
		r.CILevel = store.CILevel(d.CILevel)
	}
	if f.ScopedFrom != nil {
		r.ScopedFromTrialID = f.ScopedFrom.ID
	}
	r.SlowerAt = append(r.SlowerAt, f.SlowerAt...)
	if x := f.Restart; x != nil {
		r.Restart = &store.Restart{Seq: x.Seq, NextEnv: x.Next.Clone(), ExploreStopped: x.Stopped, ExactDone: x.ExactDone}
		if len(x.Next) == 0 {
			r.Restart.NextEnv = nil
		}
	}
	return r
}

// refusalsOf are a study's stored refusals so far as the search restores
// them, their trials among byID.
func refusalsOf(study *store.Study, byID map[uint64]*search.Trial) ([]search.Refusal, error) {
	var out []search.Refusal
	for _, r := range study.Refusals {
		t := byID[r.TrialID]
		if t == nil {
			return nil, fmt.Errorf("study %s: its stored refusal of trial id %d names no trial of the study; the store is damaged: start the study again", study.Name, r.TrialID)
		}
		f := search.Refusal{Trial: t, Ending: r.Ending, Reason: r.Reason,
			Decision: &model.Comparison{Speedup: r.Speedup, Lo: r.SpeedupCI[0], Hi: r.SpeedupCI[1], CILevel: float64(r.CILevel)}, ScopedFrom: byID[r.ScopedFromTrialID]}
		f.SlowerAt = append(f.SlowerAt, r.SlowerAt...)
		if x := r.Restart; x != nil {
			f.Restart = &search.Restart{Seq: x.Seq, Stopped: x.ExploreStopped, ExactDone: x.ExactDone}
			if len(x.NextEnv) > 0 {
				f.Restart.Next = nccl.Config(x.NextEnv).Clone()
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// partComparison is what the confirmation measured of one part.
func partComparison(p search.PartResult, base, cand *search.Trial, stats model.Options) store.PartComparison {
	c := p.Comparison
	b, w := base.ConfirmOf(p.Part.Op), cand.ConfirmOf(p.Part.Op)
	sizes := p.Part.Band.Sizes()
	bs, cs := model.Summarize(b, sizes, stats), model.Summarize(w, sizes, stats)
	return store.PartComparison{Op: p.Part.Op.OrAllReduce(), Band: p.Part.Band.String(), Weight: p.Weight,
		Calls: p.Part.Calls, Logged: p.Part.Logged, LoggedCalls: p.Part.LoggedCalls,
		Speedup: store.FiniteOr(c.Speedup, 1), SpeedupCI: [2]float64{store.FiniteOr(c.Lo, store.FiniteOr(c.Speedup, 1)), store.FiniteOr(c.Hi, store.FiniteOr(c.Speedup, 1))},
		CILevel:     store.CILevel(c.CILevel),
		Significant: c.Significant, Slower: c.Slower, Refused: p.Refused, NotShownSafe: p.NotShownSafe, RefusedAt: p.RefusedAt, PValue: store.FiniteOr(c.P, 1),
		BaselineScoreUS: store.FiniteOr(bs.ScoreUS, 0), ScoreUS: store.FiniteOr(cs.ScoreUS, 0),
		PerSize: opComparisons(p.Part.Op, b, w, sizes, stats)}
}

// opComparisons are launchstats.SizeComparisons of one op, naming it.
func opComparisons(op nccl.Op, base, cand []model.Launch, sizes []int64, stats model.Options) []store.SizeComparison {
	out := launchstats.SizeComparisons(base, cand, sizes, stats)
	for i := range out {
		out[i].Op = op.OrAllReduce()
	}
	return out
}

// opGuardOf is a guarded op's verdict as the store keeps it: what no
// launch measured stays NaN (null in JSON).
func opGuardOf(g search.OpGuard) store.OpGuard {
	r := g.Result
	type f = store.JSONFloat
	out := store.OpGuard{Op: g.Op, Sizes: g.Sizes, Speedup: f(r.Speedup), SpeedupCI: [2]f{f(r.Lo), f(r.Hi)}, CILevel: store.CILevel(r.CILevel),
		Slower: r.Slower, Refused: g.Refused, WorstBytes: r.Worst, WorstSpeedup: f(r.WorstSpeedup),
		PValue: store.FiniteOr(r.P, 1), Level: store.FiniteOr(r.Level, 0), BaselineLaunches: r.BaselineN, CandidateLaunches: r.CandidateN,
		Failed: g.Failed, PerSize: []store.GuardSize{}}
	for _, s := range r.Sizes {
		out.PerSize = append(out.PerSize, store.GuardSize{Bytes: s.Bytes, Speedup: f(s.Speedup), PValue: store.FiniteOr(s.P, 1),
			Level: store.FiniteOr(s.Level, 0), Significant: s.Significant, Slower: s.Slower})
	}
	return out
}
