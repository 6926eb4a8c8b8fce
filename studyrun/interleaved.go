package studyrun

import (
	"context"
	"fmt"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// AB is one interleaved comparison of two configs: verify's (a study's
// recommendation against its baseline) or compare's.
type AB struct {
	Kind     string // vocab.KindVerify or vocab.KindCompare
	Verifies string // the study verified, for verify
	Band     nccl.Band
	BandText string
	Guards   []int64
	// Collective is the collective measured ("all_reduce"; "" is all-reduce):
	// every launch of the comparison runs it, whatever the launch flags' --op.
	Collective string
	Base, Cand nccl.Config
	// Claim is what the verified study claimed of Cand against Base; nil
	// when it claimed nothing of this pair.
	Claim *Claim
	// CheckCand launches Cand once with NCCL's debug log before anything
	// else, unscored: a candidate that fails there (a tuner plugin that
	// crashes) ends the comparison before any measurement, and the launch
	// shows what NCCL and a tuner plugin did (ABResult.Check).
	CheckCand bool
}

// Claim is a search's claimed speedup, which verify checks.
type Claim struct {
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci"`
}

// VerifyResult is the verdict of a verify (or interleaved compare) run,
// its --json document.
type VerifyResult struct {
	Study    string `json:"study"`
	Verifies string `json:"verifies,omitempty"`
	// BaselineEnv is what the config was compared with ({} for NCCL's
	// defaults).
	BaselineEnv map[string]string `json:"baseline_env"`
	Simulated   bool              `json:"simulated"`
	Env         map[string]string `json:"env"`
	Launches    int               `json:"launches_per_arm"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	PValue      float64           `json:"p_value"`
	Significant bool              `json:"significant"`
	Reason      string            `json:"reason"`
	Claimed     *Claim            `json:"claimed"`
	Consistent  bool              `json:"consistent"`
	// TunerPlugin is what verify --tuner-plugin saw of the plugin.
	TunerPlugin *TunerVerify `json:"tuner_plugin,omitempty"`
}

// TunerVerify is a tuner CSV measured through a plugin: the plugin, what
// its debug launch showed, the warnings, and whether the CSV reproduced
// the study's gain.
type TunerVerify struct {
	Plugin string `json:"plugin"`
	// Check is the plugin as the debug launch logged it (nil without
	// NCCL's lines).
	Check    *benchfmt.TunerPlugin `json:"check"`
	Warnings []fabric.Warning      `json:"warnings"`
	// Reproduces: the CSV's speedup agrees with the study's claim.
	Reproduces bool `json:"reproduces"`
}

// VerifyResultOf is the result of ab's interleaved comparison r, with
// launches per arm.
func VerifyResultOf(ab AB, r *ABResult, launches int) VerifyResult {
	study, rec := r.Study, r.Study.Recommendation
	v := VerifyResult{Study: study.Name, Verifies: ab.Verifies, BaselineEnv: ab.Base.Clone(), Simulated: study.Simulated, Env: ab.Cand.Clone(),
		Launches: launches, Speedup: rec.Speedup, SpeedupCI: rec.SpeedupCI, PValue: rec.PValue,
		Significant: r.Comparison.Recommend, Reason: r.Comparison.Reason, Claimed: ab.Claim, Consistent: r.Consistent}
	if plugin := ab.Cand[nccl.TunerPluginVar]; plugin != "" {
		v.TunerPlugin = &TunerVerify{Plugin: plugin, Warnings: TunerWarningsOf(r.Check), Reproduces: ab.Claim != nil && r.Consistent}
		if r.Check != nil && r.Check.Result != nil && r.Check.Result.Facts != nil {
			v.TunerPlugin.Check = r.Check.Result.Facts.Tuner
		}
	}
	return v
}

// TunerWarningsOf are the warnings a tuner plugin's debug launch shows
// (fabric's), never nil.
func TunerWarningsOf(l *benchfmt.Launch) []fabric.Warning {
	out := []fabric.Warning{}
	if l == nil || l.Result == nil || l.Result.Facts == nil {
		return out
	}
	return append(out, fabric.TunerWarnings(l.Result.Facts.Tuner, l.Result.NCCLVersion)...)
}

// TunerCheck judges verify --tuner-plugin's debug launch: NCCL must have
// loaded the plugin, or the CSV would never be used.
func TunerCheck(l *benchfmt.Launch) error {
	for _, w := range TunerWarningsOf(l) {
		if w.Code == fabric.CodeTunerNotLoaded {
			return fmt.Errorf("%s; fix: %s", w.Message, w.Fix)
		}
	}
	if l != nil && l.Result != nil && (l.Result.Facts == nil || l.Result.Facts.Tuner == nil) {
		return fmt.Errorf("the tuner plugin's debug launch logged no TUNER line: NCCL did not read NCCL_TUNER_PLUGIN (an NCCL older than 2.19, or a launcher that does not pass the environment to the ranks)")
	}
	return nil
}

// ABOptions are how an AB comparison runs.
type ABOptions struct {
	Launch Launch
	// Launches per arm.
	Launches int
	// Name, if set, names the new study (--name, --label).
	Name func(*store.Study)
	// Started, if set, hears of the study once it is stored.
	Started func(*store.Study)
	// CheckOK, if set, judges ab.CheckCand's launch: its error ends the
	// comparison there (vocab.ErrFabric), before any measurement.
	CheckOK func(*benchfmt.Launch) error
	// Progress, if set, hears of each launch as it ends: n of total.
	Progress func(n, total int, phase string, t *search.Trial, l *benchfmt.Launch)
}

// ABResult is what an AB comparison measured.
type ABResult struct {
	// Study is the stored study, its Recommendation the comparison's.
	Study *store.Study
	// Comparison is the candidate against the baseline over the band.
	Comparison model.Comparison
	// Consistent is set when ab had a claim: the fresh measurement and
	// the claim agree (each one's estimate lies inside the other's
	// interval, or their intervals overlap).
	Consistent bool
	// Check is the candidate's debug launch when ab.CheckCand.
	Check *benchfmt.Launch
}

// RunAB measures ab.Base and ab.Cand alternately (B C B C …, after one
// uncounted warm-up of B), with search's confirmation at a design of one
// look (a fixed-size test at alpha), and stores the launches and the
// comparison as a study of ab.Kind. A launch that fails is vocab.ErrFabric;
// stopped by the user, vocab.ErrInterrupted.
func RunAB(ctx context.Context, st *store.Store, ab AB, o ABOptions) (*ABResult, error) {
	study, err := ab.create(st, o)
	if err != nil {
		return nil, err
	}
	sizes := study.Sizes
	rec := NewRecorder(st, study, sizes)
	base := &search.Trial{Number: 0, Config: ab.Base.Clone(), Role: vocab.RoleBaseline, State: vocab.TrialRunning}
	cand := &search.Trial{Number: 1, Config: ab.Cand, Role: vocab.RoleCandidate, State: vocab.TrialRunning}
	for _, t := range []*search.Trial{base, cand} {
		if err := rec.SaveTrial(t); err != nil {
			return nil, err
		}
	}
	if o.Started != nil {
		o.Started(study)
	}
	var last *benchfmt.Launch
	run := ab.launcher(study, rec, o, &last)
	finish := func(status, reason string) {
		study.Status, study.Reason = status, reason
		_ = st.UpdateStudy(study)
	}
	// stopped stores why the run ended early: the user, or a failure.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			finish(vocab.StatusInterrupted, "interrupted by the user")
			return vocab.ErrInterrupted
		}
		finish(vocab.StatusFailed, err.Error())
		return err
	}
	var check *benchfmt.Launch
	if ab.CheckCand {
		err := run(ctx, cand, vocab.PhasePlan, false)
		check = last
		if err == nil && o.CheckOK != nil {
			if err = o.CheckOK(check); err != nil {
				err = vocab.Mark(vocab.ErrFabric, err)
			}
		}
		if err != nil {
			return &ABResult{Study: study, Check: check}, stopped(err)
		}
	}
	if err := run(ctx, base, vocab.PhaseWarmup, false); err != nil {
		return nil, stopped(err)
	}
	opt := model.DefaultOptions()
	// A fixed number of launches per arm is a design of one look at alpha:
	// its decision is model.Compare's at opt.
	design := model.PlanConfirm(o.Launches, o.Launches, opt.Alpha)
	out, err := search.Confirm(ctx, search.Confirmation{Baseline: base, Candidate: cand, Design: design, Sizes: sizes, Stats: opt,
		Launch: func(ctx context.Context, t *search.Trial) error { return run(ctx, t, vocab.PhaseConfirm, true) }})
	if err != nil {
		return nil, stopped(err)
	}
	res := ab.conclude(study, base, cand, out.Look.Comparison, opt)
	res.Check = check
	base.State, cand.State = vocab.TrialComplete, vocab.TrialComplete
	_ = rec.SaveTrials([]*search.Trial{base, cand})
	finish(vocab.StatusDone, ab.reason())
	return res, nil
}

// op is the collective the comparison measures.
func (ab AB) op() nccl.Op { return nccl.Op(ab.Collective).OrAllReduce() }

// create stores the comparison's study.
func (ab AB) create(st *store.Store, o ABOptions) (*store.Study, error) {
	band := ab.Band
	study := &store.Study{Kind: ab.Kind, Band: ab.BandText, BandMin: band.Min, BandMax: band.Max,
		Sizes: band.Sizes(), GuardSizes: ab.Guards, Collective: string(ab.op()), BaseEnv: o.Launch.Spec.BaseEnv,
		BaselineEnv: ab.Base.Clone(),
		Launch:      LaunchSettings(o.Launch.Spec, o.Launch.Seed), Simulated: o.Launch.Simulated, Seed: o.Launch.Seed,
		Budget: store.Budget{Launches: ab.launches(o)}, Status: vocab.StatusRunning,
		Reason: ab.reason()}
	if o.Name != nil {
		o.Name(study)
	}
	if err := CreateStudy(st, study); err != nil {
		return nil, err
	}
	return study, nil
}

// launches is how many launches the comparison makes: the check, one
// warm-up and o.Launches per arm.
func (ab AB) launches(o ABOptions) int {
	n := 2*o.Launches + 1
	if ab.CheckCand {
		n++
	}
	return n
}

// launcher makes and records the comparison's launches, in order, over
// the band and the guard sizes, keeping the latest in *last; a plan-phase
// launch has NCCL's debug log. A launch that does not end OK marks its
// trial failed and is vocab.ErrFabric, naming a crash in a tuner plugin
// and its fix.
func (ab AB) launcher(study *store.Study, rec *Recorder, o ABOptions, last **benchfmt.Launch) func(ctx context.Context, t *search.Trial, phase string, scored bool) error {
	lo, hi := ab.Band.Sweep() // its powers of two, what it scores
	for _, g := range ab.Guards {
		lo, hi = min(lo, g), max(hi, g)
	}
	launcher := &Launcher{Base: o.Launch.Spec, Seed: o.Launch.Seed + 7919} // fresh noise, not the search's
	seq := 0
	return func(ctx context.Context, t *search.Trial, phase string, scored bool) error {
		req := search.Request{Op: ab.op(), Config: t.Config, MinBytes: lo, MaxBytes: hi, Seq: seq, Phase: phase, Trial: t.Number,
			Debug: phase == vocab.PhasePlan}
		l, err := launcher.Launch(ctx, req)
		seq++
		*last = l
		if err != nil {
			if l != nil {
				_ = rec.SaveLaunch(t, req, l, false, 0)
			}
			return err
		}
		ok := l.Outcome == benchfmt.OK
		var score float64
		if ok && scored {
			var ml model.Launch
			ml, score, _ = search.Measure(l, study.Sizes) // 0 when it lacks a size: stored unscored
			t.Confirm = append(t.Confirm, ml)
		}
		if !ok {
			t.State, t.Reason = vocab.TrialFailed, l.Reason
		}
		if err := rec.SaveLaunch(t, req, l, ok && scored, score); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress(seq, ab.launches(o), phase, t, l)
		}
		if !ok {
			return vocab.Mark(vocab.ErrFabric, fmt.Errorf("%s launch of %s %s: %s%s", phase, t.Config, l.Outcome, l.Reason, tunerCrash(l, o.Launch.Spec.BaseEnv, t.Config)))
		}
		return nil
	}
}

// tunerCrash names a crash inside the tuner plugin a config runs, and its
// fix, as doctor does (fabric's diagnosis); "" for any other failure.
func tunerCrash(l *benchfmt.Launch, base map[string]string, cfg nccl.Config) string {
	if cfg[nccl.TunerPluginVar] == "" {
		return ""
	}
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	for k, v := range cfg {
		env[k] = v
	}
	for _, w := range fabric.Diagnose(l.Result, nil, fabric.Context{BaseEnv: env, Outcome: l.Outcome, Reason: l.Reason}).Warnings {
		if w.Code == fabric.CodeTunerPluginCrash {
			return ". " + w.Message + ". Fix: " + w.Fix
		}
	}
	return ""
}

// conclude stores the comparison as the study's recommendation and says
// whether it agrees with ab's claim.
func (ab AB) conclude(study *store.Study, base, cand *search.Trial, cmp model.Comparison, opt model.Options) *ABResult {
	res := &ABResult{Study: study, Comparison: cmp}
	speedupCI := [2]float64{finiteOr(cmp.Lo, cmp.Speedup), finiteOr(cmp.Hi, cmp.Speedup)}
	if ab.Claim != nil {
		res.Consistent = ab.Claim.SpeedupCI[0] <= speedupCI[1] && speedupCI[0] <= ab.Claim.SpeedupCI[1]
	}
	study.Recommendation = &store.Recommendation{Env: ab.Cand.Clone(), Speedup: cmp.Speedup, SpeedupCI: speedupCI,
		Significant: cmp.Recommend, PValue: finiteOr(cmp.P, 1), Reason: cmp.Reason, MinEffect: opt.MinEffect,
		BaselineScoreUS: cmp.Baseline.ScoreUS, ScoreUS: cmp.Candidate.ScoreUS,
		BaselineLaunches: len(base.Confirm), CandidateLaunches: len(cand.Confirm),
		PerSize: SizeComparisons(base.Confirm, cand.Confirm, study.Sizes, opt),
		Guards:  SizeComparisons(base.Confirm, cand.Confirm, ab.Guards, opt)}
	study.Recommendation.CandidateTrialID = cand.ID
	if cmp.Recommend {
		study.Recommendation.TrialID = cand.ID
	}
	return res
}

// reason is the stored note of what the comparison was for.
func (ab AB) reason() string {
	if ab.Verifies != "" {
		return "verifies " + ab.Verifies
	}
	return "compares " + ab.Cand.String() + " with " + ab.Base.String()
}
