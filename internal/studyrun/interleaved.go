package studyrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// AB is one interleaved comparison of two configs: verify's (a study's
// recommendation against its baseline) or compare's.
type AB struct {
	Kind     string // vocab.KindVerify or vocab.KindCompare
	Verifies string // the study verified, for verify
	Band     nccl.Band
	BandText string
	Guards   []int64
	// Collective is the collective every launch runs ("" is all-reduce),
	// whatever the launch flags' --op.
	Collective string
	Base, Cand nccl.Config
	// Claim is what the verified study claimed of Cand against Base; nil
	// when it claimed nothing of this pair.
	Claim *runresult.Claim
	// CheckCand launches Cand once per op with NCCL's debug log first,
	// unscored: a candidate that fails there (a crashing tuner plugin)
	// ends the comparison before any measurement (ABResult.Checks).
	CheckCand bool
	// Parts, when it has several, is the workload measured as its study
	// did; GuardOps are the collectives outside it measured for a
	// recommended candidate. Either makes the comparison one of
	// collectives (search.Reconfirm).
	Parts         nccl.Workload
	GuardOps      []nccl.Op
	GuardLaunches int
	// GuardOpsSkipped are the default guarded ops left out, each with why,
	// so that none is dropped silently.
	GuardOpsSkipped []string
	// Stats are the verified study's statistics; zero is
	// model.DefaultOptions.
	Stats model.Options
	// Delivered are, per op, the sizes the candidate as deployed (a tuner
	// CSV) must not make slower: Holm across every op's sizes together
	// (model.CompareGuards); set by GuardDelivered, and every launch of an
	// op sweeps them (widen).
	Delivered []runresult.DeliveredSizes
	// EqualByRule are, per op, the gap sizes where the candidate keeps
	// NCCL's own choice (SettleGaps): equal by rule, not judged.
	EqualByRule []runresult.DeliveredSizes
	// TunerCSV is the tuner CSV Cand hands the plugin, stored with the
	// study: Cand's NCCL_TUNER_CONFIG_FILE is a temporary file.
	TunerCSV string
	// PluginRetunes: NVIDIA's example tuner plugin retunes NCCL at init
	// whatever its CSV holds (nccl.ExamplePluginRetunes). PluginAlone is
	// then the plugin with an empty CSV, a third arm launched after each
	// measured launch of Cand, which tells what loading the plugin changes
	// from what the CSV's rows change.
	PluginRetunes bool
	PluginAlone   nccl.Config
	// Timed is the verified study's workload when it came from calls.
	Timed nccl.Workload
	// Calls are the ladders that measure Timed's calls at their own sizes
	// after each measured launch of their op (search.CallLadders), judged
	// with the op's Delivered sizes. Set by GuardDelivered.
	Calls []search.CallLadder
}

// GuardDelivered makes a comparison judge the candidate as it is
// delivered: for each op, at every size the workload calls and at the
// power of two just outside them on each side, where a tuner row
// stretched past what was proven changes what NCCL runs; never below
// nccl.Op.SmallestSafe. These sizes are judged besides the parts, as one
// family.
func (ab *AB) GuardDelivered(nranks int) {
	parts := ab.searchOptions().Parts()
	ab.Delivered = nil
	for _, op := range parts.Ops() {
		sizes := parts.Sizes(op)
		if len(sizes) == 0 || sizes[0] <= 0 {
			continue
		}
		lo, hi := sizes[0], sizes[len(sizes)-1]
		outside := []int64{}
		if lo/2 >= op.SmallestSafe(nranks) {
			outside = append(outside, lo/2)
		}
		if hi <= math.MaxInt64/2 {
			outside = append(outside, hi*2)
		}
		if !parts.ScoredByRounds() {
			// A one-op comparison shows them as its guard sizes too (a
			// workload's guard sizes are judged by the study's own rule).
			for _, g := range outside {
				if !slices.Contains(ab.Guards, g) {
					ab.Guards = append(ab.Guards, g)
				}
			}
			slices.Sort(ab.Guards)
		}
		d := append(slices.Clone(sizes), outside...)
		slices.Sort(d)
		ab.Delivered = append(ab.Delivered, runresult.DeliveredSizes{Op: op, Sizes: slices.Compact(d)})
	}
	// A CSV row acts at the calls' own sizes though no power of two shows it.
	ab.Calls = search.Options{Workload: ab.Timed, Ranks: nranks}.CallLadders()
}

// atOwnSize are, per op, the sizes ab measures at the calls' own sizes.
func (ab AB) atOwnSize() []runresult.DeliveredSizes {
	out := []runresult.DeliveredSizes{}
	for _, l := range ab.Calls {
		i := slices.IndexFunc(out, func(d runresult.DeliveredSizes) bool { return d.Op == l.Op })
		if i < 0 {
			out, i = append(out, runresult.DeliveredSizes{Op: l.Op}), len(out)
		}
		out[i].Sizes = append(out[i].Sizes, l.Calls...)
	}
	for i := range out {
		slices.Sort(out[i].Sizes)
	}
	return out
}

// SettleGaps decides how the candidate is judged at the gaps between an
// op's called sizes (2M and 8M leave 4M): where keeps says it keeps
// NCCL's own choice (export.KeepsNCCL) it is equal by rule (EqualByRule),
// elsewhere judged with the op's delivered sizes. After GuardDelivered.
func (ab *AB) SettleGaps(keeps func(op nccl.Op, sizes []int64) ([]bool, error)) error {
	ab.EqualByRule = nil
	for i, d := range ab.Delivered {
		var gaps []int64
		for s := d.Sizes[0]; s < d.Sizes[len(d.Sizes)-1]; s *= 2 {
			if !slices.Contains(d.Sizes, s) {
				gaps = append(gaps, s)
			}
		}
		if len(gaps) == 0 {
			continue
		}
		kept, err := keeps(d.Op, gaps)
		if err != nil {
			return fmt.Errorf("%s between its called sizes: %w", d.Op, err)
		}
		equal := runresult.DeliveredSizes{Op: d.Op}
		for k, g := range gaps {
			if kept[k] {
				equal.Sizes = append(equal.Sizes, g)
			} else {
				ab.Delivered[i].Sizes = append(ab.Delivered[i].Sizes, g)
			}
		}
		slices.Sort(ab.Delivered[i].Sizes)
		if len(equal.Sizes) > 0 {
			ab.EqualByRule = append(ab.EqualByRule, equal)
		}
	}
	return nil
}

// widen is the sweep [lo, hi] of a launch of op ("" the comparison's one
// op), widened to op's Delivered sizes.
func (ab AB) widen(op nccl.Op, lo, hi int64) (int64, int64) {
	op = cmp.Or(op, ab.op())
	for _, d := range ab.Delivered {
		if d.Op == op.OrAllReduce() && len(d.Sizes) > 0 {
			lo, hi = min(lo, d.Sizes[0]), max(hi, d.Sizes[len(d.Sizes)-1])
		}
	}
	return lo, hi
}

// ofOps reports whether ab measures more than its one op.
func (ab AB) ofOps() bool { return ab.Parts.BeyondOnePart(ab.GuardOps) }

func (ab AB) stats() model.Options { return cmp.Or(ab.Stats, model.DefaultOptions()) }

// searchOptions are ab as the options search.Reconfirm measures with.
func (ab AB) searchOptions() search.Options {
	o := search.Options{Band: ab.Band, Op: ab.op(), Guard: ab.Guards, GuardOps: ab.GuardOps, GuardLaunches: ab.GuardLaunches, Stats: ab.stats()}
	if ab.Parts.ScoredByRounds() {
		o.Workload = ab.Parts
	}
	return o
}

// checkOps are the ops the candidate's debug check launches: the
// workload's that reach NCCL's tuner (not alltoall or sendrecv), or the
// comparison's one op.
func (ab AB) checkOps() []nccl.Op {
	if !ab.Parts.ScoredByRounds() {
		return []nccl.Op{ab.op()}
	}
	var out []nccl.Op
	for _, op := range ab.Parts.Ops() {
		if _, tuned := op.PerFunction(); tuned {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		return ab.Parts.Ops()[:1]
	}
	return out
}

// VerifyResultOf is the result of ab's interleaved comparison r, with
// launches per arm.
func VerifyResultOf(ab AB, r *ABResult, launches int) runresult.VerifyResult {
	study, rec := r.Study, r.Study.Recommendation
	// Significant is the stored verdict's, not the band decision's: a
	// part or guarded op may refuse a config that gains over the band.
	v := runresult.VerifyResult{Study: study.Name, Verifies: ab.Verifies, BaselineEnv: ab.Base.Clone(), Simulated: study.Simulated, Env: ab.Cand.Clone(),
		Launches: launches, Speedup: rec.Speedup, SpeedupCI: rec.SpeedupCI, CILevel: rec.CILevel, PValue: rec.PValue,
		Significant: rec.Significant, Reason: rec.Reason, Claimed: ab.Claim, Consistent: r.Consistent,
		Ending: rec.Ending, Parts: []runresult.VerifyPart{}, Guards: []runresult.VerifyGuard{}, GuardOpsSkipped: append([]string{}, study.GuardOpsSkipped...)}
	c := stored.ConclusionOf(study)
	v.Verdict, _, _ = c.Headline()
	v.Refused = c.Refused
	verdicts := stored.OpVerdicts(rec)
	for i, p := range rec.Parts {
		v.Parts = append(v.Parts, runresult.VerifyPart{PartComparison: p, Verdict: verdicts[i].Verdict})
	}
	for i, g := range rec.OpGuards {
		v.Guards = append(v.Guards, runresult.VerifyGuard{OpGuard: g, Verdict: verdicts[len(rec.Parts)+i].Verdict})
	}
	// A refusal fails verify of what the study recommended or the user
	// named, not of a candidate the study refused itself.
	v.Failed = ab.Claim != nil && !r.Consistent || ab.Kind == vocab.KindVerify && v.Refused != "" && (ab.Claim == nil || ab.Claim.Recommended)
	if plugin := ab.Cand[nccl.TunerPluginVar]; plugin != "" {
		v.TunerPlugin = &runresult.TunerVerify{Plugin: plugin, Warnings: []fabric.Warning{}, Reproduces: ab.Claim != nil && r.Consistent}
		for _, oc := range r.Checks {
			v.TunerPlugin.Warnings = append(v.TunerPlugin.Warnings, oc.Warnings...)
		}
		if len(r.Checks) > 0 {
			v.TunerPlugin.Check = r.Checks[0].Plugin
		}
		if len(r.Checks) > 1 {
			v.TunerPlugin.PerOp = r.Checks
		}
		v.TunerPlugin.PluginAlone, v.TunerPlugin.EqualByRule = r.PluginAlone, append([]runresult.DeliveredSizes{}, ab.EqualByRule...)
		v.TunerPlugin.AtOwnSize = ab.atOwnSize()
	}
	return v
}

// opCheckOf is op's check launch l.
func opCheckOf(op nccl.Op, l *benchfmt.Launch, several bool) runresult.OpCheck {
	c := runresult.OpCheck{Op: op, Warnings: TunerWarningsOf(l)}
	if l != nil && l.Result != nil && l.Result.Facts != nil {
		c.Plugin = l.Result.Facts.Tuner
	}
	if several { // which op's calls fell back
		for i := range c.Warnings {
			c.Warnings[i].Message = string(op) + ": " + c.Warnings[i].Message
		}
	}
	return c
}

// TunerWarningsOf are the warnings a tuner plugin's debug launch shows,
// never nil.
func TunerWarningsOf(l *benchfmt.Launch) []fabric.Warning {
	out := []fabric.Warning{}
	if l == nil || l.Result == nil || l.Result.Facts == nil {
		return out
	}
	return append(out, fabric.TunerWarnings(l.Result.Facts.Tuner, fabric.TunerRunOf(l.Result))...)
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
	Launch   LaunchSettings
	Launches int // per arm
	// Name, if set, names the new study (--name, --label); Started hears
	// of it once stored.
	Name    func(*store.Study)
	Started func(*store.Study)
	// CheckOK, if set, judges ab.CheckCand's launch: its error ends the
	// comparison (vocab.ErrFabric).
	CheckOK func(*benchfmt.Launch) error
	// Progress, if set, hears of each launch as it ends: n of total.
	Progress func(n, total int, phase string, cfg nccl.Config, l *benchfmt.Launch)
}

// ABResult is what an AB comparison measured.
type ABResult struct {
	// Study is the stored study, its Recommendation the comparison's.
	Study *store.Study
	// Comparison is the candidate against the baseline over the band.
	Comparison model.Comparison
	// Consistent: ab had a claim, and the fresh intervals overlap it.
	Consistent  bool
	Checks      []runresult.OpCheck // ab.CheckCand's launches, one per op
	PluginAlone *runresult.PluginAloneEffect
}

// pluginAloneArm is the third arm (AB.PluginAlone) as it runs.
type pluginAloneArm struct {
	trial, cand *search.Trial
	run         abLaunch
	byOp        map[nccl.Op][]model.Launch
}

// follow launches the arm after a measured launch of the candidate.
func (a *pluginAloneArm) follow(ctx context.Context, t *search.Trial, op nccl.Op) error {
	if a == nil || t != a.cand {
		return nil
	}
	if err := a.run(ctx, a.trial, op, vocab.PhaseConfirm, true); err != nil {
		return err
	}
	a.byOp[op.OrAllReduce()] = append(a.byOp[op.OrAllReduce()], a.trial.Confirm[len(a.trial.Confirm)-1])
	return nil
}

// effect is, per op and size of ab.Delivered, the empty CSV against the
// baseline and the CSV against the empty CSV.
func (a *pluginAloneArm) effect(ab AB, base, cand *search.Trial) *runresult.PluginAloneEffect {
	if a == nil {
		return nil
	}
	opt := ab.stats()
	out := &runresult.PluginAloneEffect{Sizes: []runresult.PluginAloneSize{}}
	effects := func(from, to []model.Launch, sizes []int64) map[int64]runresult.Effect {
		es := map[int64]runresult.Effect{}
		for _, c := range launchstats.SizeComparisons(from, to, sizes, opt) {
			es[c.Bytes] = runresult.Effect{Speedup: c.Speedup, PValue: c.PValue, Significant: c.Significant, Verdict: stored.ChangeWords(c.Significant, c.Speedup)}
		}
		return es
	}
	for _, d := range ab.Delivered {
		alone := a.byOp[d.Op]
		out.Launches = max(out.Launches, len(alone))
		plugin, rows := effects(base.ConfirmOf(d.Op), alone, d.Sizes), effects(alone, cand.ConfirmOf(d.Op), d.Sizes)
		for _, b := range d.Sizes {
			p, okP := plugin[b]
			r, okR := rows[b]
			if okP && okR {
				out.Sizes = append(out.Sizes, runresult.PluginAloneSize{Op: d.Op, Bytes: b, Plugin: p, Rows: r})
			}
		}
	}
	return out
}

// callsArm measures the calls at their own sizes (AB.Calls): after each
// measured launch of either arm of an op, one launch of that arm over
// each of the op's ladders.
type callsArm struct {
	ladders []search.CallLadder
	run     abRequest
	last    *benchfmt.Launch
	// byTrial are each trial's ladder launches, per ladder, the k-th after
	// the trial's k-th measured launch.
	byTrial map[*search.Trial][][]model.Launch
}

// follow launches t over each ladder of op after a measured launch.
func (a *callsArm) follow(ctx context.Context, t *search.Trial, op nccl.Op) error {
	if a == nil {
		return nil
	}
	for i, l := range a.ladders {
		if l.Op != op.OrAllReduce() {
			continue
		}
		if err := a.run(ctx, t, l.Request(t.Config, 0, t.Number, false), false); err != nil {
			return err
		}
		if a.byTrial[t] == nil {
			a.byTrial[t] = make([][]model.Launch, len(a.ladders))
		}
		a.byTrial[t][i] = append(a.byTrial[t][i], model.LaunchOf(benchfmt.SizesOf(a.last.Result)))
	}
	return nil
}

// withCalls are t's measured launches ls of op, each with the times of
// the ladder launches that followed it keyed by the size called
// (nccl.LadderSize), and those sizes.
func (a *callsArm) withCalls(t *search.Trial, op nccl.Op, ls []model.Launch) ([]model.Launch, []int64) {
	if a == nil {
		return ls, nil
	}
	out := make([]model.Launch, len(ls))
	for k, l := range ls {
		out[k] = model.Launch{Times: map[int64][]float64{}}
		maps.Copy(out[k].Times, l.Times)
	}
	var sizes []int64
	for i, lad := range a.ladders {
		if lad.Op != op.OrAllReduce() {
			continue
		}
		sizes = append(sizes, lad.Calls...)
		var runs []model.Launch
		if a.byTrial[t] != nil {
			runs = a.byTrial[t][i]
		}
		for k, ml := range runs[:min(len(runs), len(out))] {
			ran := slices.Collect(maps.Keys(ml.Times))
			for _, b := range lad.Calls {
				if x, ok := nccl.LadderSize(ran, b); ok {
					out[k].Times[b] = ml.Times[x]
				}
			}
		}
	}
	slices.Sort(sizes)
	return out, sizes
}

// RunAB measures ab.Base and ab.Cand alternately (after one uncounted
// warm-up of B) at a design of one look, and stores the launches and the
// comparison as a study of ab.Kind; a comparison of collectives is
// search.Reconfirm's. A launch that fails is vocab.ErrFabric; stopped by
// the user, vocab.ErrInterrupted.
func RunAB(ctx context.Context, st *store.Store, ab AB, o ABOptions) (*ABResult, error) {
	study, err := ab.create(st, o)
	if err != nil {
		return nil, err
	}
	sizes := study.Sizes
	if ab.ofOps() {
		sizes = ab.searchOptions().ScoredKeys()
	}
	rec := NewRecorder(st, study, sizes)
	base := &search.Trial{Number: 0, Config: ab.Base.Clone(), Role: vocab.RoleBaseline, State: vocab.TrialRunning}
	cand := &search.Trial{Number: 1, Config: ab.Cand, Role: vocab.RoleCandidate, State: vocab.TrialRunning}
	trials := []*search.Trial{base, cand}
	var alone *pluginAloneArm
	if len(ab.PluginAlone) > 0 {
		alone = &pluginAloneArm{trial: &search.Trial{Number: 2, Config: ab.PluginAlone, Role: vocab.RolePluginAlone, State: vocab.TrialRunning},
			cand: cand, byOp: map[nccl.Op][]model.Launch{}}
		trials = append(trials, alone.trial)
	}
	for _, t := range trials {
		if err := rec.SaveTrial(t); err != nil {
			return nil, err
		}
	}
	if o.Started != nil {
		o.Started(study)
	}
	var last *benchfmt.Launch
	request := ab.requester(study, rec, o, &last, 0)
	run := ab.sweeper(request)
	var calls *callsArm
	if len(ab.Calls) > 0 {
		calls = &callsArm{ladders: ab.Calls, byTrial: map[*search.Trial][][]model.Launch{}}
	}
	finish := func(status, reason string) {
		study.Status, study.Reason = status, reason
		_ = st.UpdateStudy(study)
	}
	stopped := func(err error) error {
		if ctx.Err() != nil {
			finish(vocab.StatusInterrupted, "interrupted by the user")
			return vocab.ErrInterrupted
		}
		finish(vocab.StatusFailed, err.Error())
		return err
	}
	var checks []runresult.OpCheck
	if ab.CheckCand {
		ops := ab.checkOps()
		for _, op := range ops {
			err := run(ctx, cand, op, vocab.PhasePlan, false)
			checks = append(checks, opCheckOf(op, last, len(ops) > 1))
			if err == nil && o.CheckOK != nil {
				if err = o.CheckOK(last); err != nil {
					err = vocab.Mark(vocab.ErrFabric, fmt.Errorf("%s: %w", op, err))
				}
			}
			if err != nil {
				return &ABResult{Study: study, Checks: checks}, stopped(err)
			}
		}
	}
	var res *ABResult
	if ab.ofOps() {
		quiet := o
		quiet.Progress = nil
		// Counted past the comparison's launches: their simulated noise
		// is their own.
		if alone != nil {
			alone.run = ab.sweeper(ab.requester(study, rec, quiet, &last, 1<<20))
		}
		if calls != nil {
			calls.run = ab.requester(study, rec, quiet, &calls.last, 2<<20)
		}
		res, err = ab.reconfirm(ctx, study, rec, o, base, cand, len(checks), alone, calls)
	} else {
		if alone != nil {
			alone.run = run
		}
		if calls != nil {
			calls.run = func(ctx context.Context, t *search.Trial, req search.Request, scored bool) error {
				err := request(ctx, t, req, scored)
				calls.last = last
				return err
			}
		}
		res, err = ab.confirm(ctx, study, run, base, cand, o, alone, calls)
	}
	if err != nil {
		return nil, stopped(err)
	}
	if len(checks) > 0 {
		res.Checks = checks
	}
	res.PluginAlone = alone.effect(ab, base, cand)
	for _, t := range trials {
		t.State = vocab.TrialComplete
	}
	_ = rec.SaveTrials(trials)
	finish(vocab.StatusDone, ab.reason())
	return res, nil
}

// confirm is the comparison of one op: a warm-up, then o.Launches of
// each arm, interleaved (search.Confirm).
func (ab AB) confirm(ctx context.Context, study *store.Study, run abLaunch, base, cand *search.Trial, o ABOptions, alone *pluginAloneArm, calls *callsArm) (*ABResult, error) {
	if err := run(ctx, base, ab.op(), vocab.PhaseWarmup, false); err != nil {
		return nil, err
	}
	opt := ab.stats()
	design := model.PlanConfirm(o.Launches, o.Launches, opt.Alpha) // one look at alpha
	out, err := search.Confirm(ctx, search.Confirmation{Baseline: base, Candidate: cand, Design: design, Sizes: study.Sizes, Stats: opt,
		Launch: func(ctx context.Context, t *search.Trial) error {
			if err := run(ctx, t, ab.op(), vocab.PhaseConfirm, true); err != nil {
				return err
			}
			if err := alone.follow(ctx, t, ab.op()); err != nil {
				return err
			}
			return calls.follow(ctx, t, ab.op())
		}})
	if err != nil {
		return nil, err
	}
	return ab.conclude(study, base, cand, out.Look.Comparison, opt, calls), nil
}

// reconfirm is the comparison of collectives (search.Reconfirm), stored
// as the search stores its confirmation (RecommendationOf).
func (ab AB) reconfirm(ctx context.Context, study *store.Study, rec *Recorder, o ABOptions, base, cand *search.Trial, made int, alone *pluginAloneArm, calls *callsArm) (*ABResult, error) {
	launcher := &lastLauncher{Launcher: &Launcher{Base: o.Launch.Spec, Seed: freshNoise(o)}, widen: ab.widen}
	var recorder search.Recorder = rec
	if alone != nil || calls != nil {
		// The arms' launches follow a measured launch in the store too.
		recorder = followRecorder{Recorder: rec, follow: func(t *search.Trial, req search.Request, scored bool) error {
			if req.Phase != vocab.PhaseConfirm || !scored {
				return nil
			}
			op := cmp.Or(req.Op, ab.op())
			if err := alone.follow(ctx, t, op); err != nil {
				return err
			}
			return calls.follow(ctx, t, op)
		}}
	}
	r := search.Reconfirmation{Options: ab.searchOptions(), Baseline: base, Candidate: cand, Launches: o.Launches, Seq: made,
		Launcher: launcher, Recorder: recorder}
	if o.Progress != nil {
		total := ab.launches(o)
		r.OnEvent = func(ev search.Event) { o.Progress(ev.Seq+1, total, ev.Phase, ev.Trial.Config, ev.Launch) }
	}
	res, err := search.Reconfirm(ctx, r)
	if err != nil {
		if errors.Is(err, vocab.ErrFabric) && launcher.last != nil {
			err = fmt.Errorf("%w%s", err, tunerCrash(launcher.last, o.Launch.Spec.BaseEnv, cand.Config))
		}
		return nil, err
	}
	sr := RecommendationOf(res, r.Options)
	sr.Env, sr.CandidateTrialID = ab.Cand.Clone(), cand.ID
	sr.SpeedupCI = [2]float64{store.FiniteOr(sr.SpeedupCI[0], sr.Speedup), store.FiniteOr(sr.SpeedupCI[1], sr.Speedup)}
	sr.PValue = store.FiniteOr(sr.PValue, 1)
	study.Recommendation = sr
	ab.judgeDelivered(sr, base, cand, ab.stats(), calls)
	return &ABResult{Study: study, Comparison: *res.Decision, Consistent: ab.agrees(sr.SpeedupCI)}, nil
}

// lastLauncher keeps the latest launch, for the message of one that
// failed, and widens each launch's sweep (AB.widen).
type lastLauncher struct {
	search.Launcher
	last  *benchfmt.Launch
	widen func(op nccl.Op, lo, hi int64) (int64, int64)
}

// followRecorder is a Recorder that, once a launch is stored, has follow
// launch what comes after it.
type followRecorder struct {
	*Recorder
	follow func(t *search.Trial, req search.Request, scored bool) error
}

func (r followRecorder) SaveLaunch(t *search.Trial, req search.Request, l *benchfmt.Launch, scored bool, scoreUS float64) error {
	if err := r.Recorder.SaveLaunch(t, req, l, scored, scoreUS); err != nil {
		return err
	}
	return r.follow(t, req, scored)
}

func (l *lastLauncher) Launch(ctx context.Context, req search.Request) (*benchfmt.Launch, error) {
	if l.widen != nil && req.MinBytes > 0 {
		req.MinBytes, req.MaxBytes = l.widen(req.Op, req.MinBytes, req.MaxBytes)
	}
	out, err := l.Launcher.Launch(ctx, req)
	l.last = out
	return out, err
}

func (ab AB) op() nccl.Op { return nccl.Op(ab.Collective).OrAllReduce() }

// create stores the comparison's study with its decision settings (so a
// verify of it decides at them too).
func (ab AB) create(st *store.Store, o ABOptions) (*store.Study, error) {
	band := ab.Band
	opt := ab.stats()
	study := &store.Study{Kind: ab.Kind, Band: ab.BandText, BandMin: band.Min, BandMax: band.Max,
		Sizes: band.Sizes(), GuardSizes: ab.Guards, Collective: string(ab.op()), BaseEnv: o.Launch.Spec.BaseEnv,
		BaselineEnv: ab.Base.Clone(), GuardOpsSkipped: ab.GuardOpsSkipped, TunerCSV: ab.TunerCSV,
		Launch: StoredLaunchSettings(o.Launch.Spec, o.Launch.Seed), Simulated: o.Launch.Simulated, Seed: o.Launch.Seed,
		Budget: store.Budget{Launches: ab.launches(o)}, Status: vocab.StatusRunning,
		Reason: ab.reason(), Search: &store.SearchSettings{MinEffect: opt.MinEffect, Alpha: opt.Alpha}}
	if ab.ofOps() {
		study.GuardOps = ab.GuardOps
		study.Search.GuardLaunches = guardLaunchesOf(ab.searchOptions())
		if ab.Parts.ScoredByRounds() {
			for _, p := range ab.Parts {
				study.Workload = append(study.Workload, store.PartOf(p))
			}
		}
	}
	if err := createStudy(st, study, o.Name); err != nil {
		return nil, err
	}
	return study, nil
}

// launches is how many launches the comparison makes at most.
func (ab AB) launches(o ABOptions) int {
	n := 2*o.Launches + 1
	if ab.ofOps() {
		n = search.Reconfirmation{Options: ab.searchOptions(), Launches: o.Launches}.ReconfirmLaunches()
	}
	if len(ab.PluginAlone) > 0 {
		n += (n - 1) / 2
	}
	n += 2 * o.Launches * len(ab.Calls)
	if ab.CheckCand {
		n += len(ab.checkOps())
	}
	return n
}

// abLaunch makes and records one launch of t measuring op.
type abLaunch func(ctx context.Context, t *search.Trial, op nccl.Op, phase string, scored bool) error

// sweeper makes each launch of op over its sweep, with request; a
// plan-phase launch has NCCL's debug log.
func (ab AB) sweeper(request abRequest) abLaunch {
	return func(ctx context.Context, t *search.Trial, op nccl.Op, phase string, scored bool) error {
		lo, hi := ab.sweep(op)
		return request(ctx, t, search.Request{Op: op, Config: t.Config, MinBytes: lo, MaxBytes: hi, Phase: phase, Trial: t.Number,
			Debug: phase == vocab.PhasePlan}, scored)
	}
}

// abRequest makes and records one launch of t as req asks.
type abRequest func(ctx context.Context, t *search.Trial, req search.Request, scored bool) error

// requester launches and records each request, the latest kept in *last.
// A launch that does not end OK fails its trial and is vocab.ErrFabric,
// naming a crash in a tuner plugin. seq is the first launch's index (a
// simulated launch's noise stream).
func (ab AB) requester(study *store.Study, rec *Recorder, o ABOptions, last **benchfmt.Launch, seq int) abRequest {
	launcher := &Launcher{Base: o.Launch.Spec, Seed: freshNoise(o)}
	return func(ctx context.Context, t *search.Trial, req search.Request, scored bool) error {
		phase := req.Phase
		req.Seq = seq
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
			o.Progress(seq, ab.launches(o), phase, t.Config, l)
		}
		if !ok {
			return vocab.Mark(vocab.ErrFabric, fmt.Errorf("%s launch of %s %s: %s%s", phase, t.Config, l.Outcome, l.Reason, tunerCrash(l, o.Launch.Spec.BaseEnv, t.Config)))
		}
		return nil
	}
}

// sweep is the sizes a launch of op covers: what the study swept
// (search.SweepRange), widened.
func (ab AB) sweep(op nccl.Op) (lo, hi int64) {
	lo, hi = search.SweepRange(ab.searchOptions(), op)
	if lo <= 0 {
		return lo, hi
	}
	return ab.widen(op, lo, hi)
}

// tunerCrash names a crash inside the tuner plugin a config runs, and its
// fix, as doctor does; "" for any other failure.
func tunerCrash(l *benchfmt.Launch, base map[string]string, cfg nccl.Config) string {
	if l == nil || cfg[nccl.TunerPluginVar] == "" {
		return ""
	}
	env := map[string]string{}
	maps.Copy(env, base)
	maps.Copy(env, cfg)
	for _, w := range fabric.Diagnose(l.Result, nil, fabric.Context{BaseEnv: env, Outcome: l.Outcome, Reason: l.Reason}).Warnings {
		if w.Code == fabric.CodeTunerPluginCrash {
			return ". " + w.Message + ". Fix: " + w.Fix
		}
	}
	return ""
}

// agrees reports whether a fresh speedup interval overlaps ab's claim.
func (ab AB) agrees(ci [2]float64) bool {
	return ab.Claim != nil && ab.Claim.SpeedupCI[0] <= ci[1] && ci[0] <= ab.Claim.SpeedupCI[1]
}

// freshNoise is the simulated launches' seed of a comparison: another
// stream than the search's.
func freshNoise(o ABOptions) int64 { return o.Launch.Seed + 7919 }

// conclude stores the comparison as the study's recommendation.
func (ab AB) conclude(study *store.Study, base, cand *search.Trial, cmp model.Comparison, opt model.Options, calls *callsArm) *ABResult {
	speedupCI := [2]float64{store.FiniteOr(cmp.Lo, cmp.Speedup), store.FiniteOr(cmp.Hi, cmp.Speedup)}
	ending := cmp.Verdict
	if cmp.Recommend {
		ending = vocab.EndingRecommended
	}
	study.Recommendation = &store.Recommendation{Env: ab.Cand.Clone(), Speedup: cmp.Speedup, SpeedupCI: speedupCI, CILevel: store.CILevel(cmp.CILevel),
		Significant: cmp.Recommend, PValue: store.FiniteOr(cmp.P, 1), Reason: cmp.Reason, Ending: ending, MinEffect: opt.MinEffect,
		BaselineScoreUS: cmp.Baseline.ScoreUS, ScoreUS: cmp.Candidate.ScoreUS,
		BaselineLaunches: len(base.Confirm), CandidateLaunches: len(cand.Confirm), CandidateTrialID: cand.ID,
		PerSize: launchstats.SizeComparisons(base.Confirm, cand.Confirm, study.Sizes, opt),
		Guards:  launchstats.SizeComparisons(base.Confirm, cand.Confirm, ab.Guards, opt)}
	if cmp.Recommend {
		study.Recommendation.TrialID = cand.ID
	}
	ab.judgeDelivered(study.Recommendation, base, cand, opt, calls)
	return &ABResult{Study: study, Comparison: cmp, Consistent: ab.agrees(speedupCI)}
}

// judgeDelivered judges ab.Delivered (model.CompareGuards: Holm across
// every op's sizes) and stores each op's verdict as a guard of that op:
// a size significantly slower by more than the minimum effect refuses
// the candidate.
func (ab AB) judgeDelivered(rec *store.Recommendation, base, cand *search.Trial, opt model.Options, calls *callsArm) {
	if len(ab.Delivered) == 0 {
		return
	}
	in := make([]model.GuardInput, len(ab.Delivered))
	for i, d := range ab.Delivered {
		b, called := calls.withCalls(base, d.Op, base.ConfirmOf(d.Op))
		c, _ := calls.withCalls(cand, d.Op, cand.ConfirmOf(d.Op))
		sizes := append(slices.Clone(d.Sizes), called...)
		slices.Sort(sizes)
		in[i] = model.GuardInput{Name: string(d.Op), Baseline: b, Candidate: c, Sizes: slices.Compact(sizes)}
	}
	var slower []string // one entry per op: "all_gather significantly slower at 2M (…), 4M (…)"
	for i, r := range model.CompareGuards(in, opt) {
		d := ab.Delivered[i]
		rec.OpGuards = append(rec.OpGuards, opGuardOf(search.OpGuard{Op: d.Op, Result: r, Sizes: in[i].Sizes, Refused: r.Slower}))
		var at []string
		for _, s := range r.Sizes {
			if s.Slower {
				at = append(at, fmt.Sprintf("%s (%+.1f%% time, p=%.2g at Holm's level %.2g)", nccl.FormatSize(s.Bytes), 100*(1/s.Speedup-1), s.P, s.Level))
			}
		}
		if len(at) > 0 {
			slower = append(slower, fmt.Sprintf("%s significantly slower at %s", d.Op, strings.Join(at, ", ")))
		}
	}
	if len(slower) == 0 {
		return
	}
	reason := fmt.Sprintf("%s makes %s, sizes it delivers to outside what was measured or inside it; do not deploy it: export the study again, or keep the env export",
		ab.Cand, strings.Join(slower, "; "))
	if !rec.Significant && rec.Ending == vocab.EndingOpRegression && rec.Reason != "" {
		// The study's own rule refused it already: both reasons stand.
		reason = rec.Reason + "; and " + reason
	}
	rec.Significant, rec.TrialID, rec.Ending, rec.Reason = false, 0, vocab.EndingOpRegression, reason
}

func (ab AB) reason() string {
	if ab.Verifies != "" {
		return "verifies " + ab.Verifies
	}
	return "compares " + ab.Cand.String() + " with " + ab.Base.String()
}
