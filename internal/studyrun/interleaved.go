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
	// Collective is the collective measured ("all_reduce"; "" is all-reduce):
	// every launch of the comparison runs it, whatever the launch flags' --op.
	Collective string
	Base, Cand nccl.Config
	// Claim is what the verified study claimed of Cand against Base; nil
	// when it claimed nothing of this pair.
	Claim *runresult.Claim
	// CheckCand launches Cand once with NCCL's debug log before anything
	// else, unscored (once per op of a workload of several parts): a
	// candidate that fails there (a tuner plugin that crashes) ends the
	// comparison before any measurement, and the launch shows what NCCL
	// and a tuner plugin did (ABResult.Checks).
	CheckCand bool
	// Parts, when it has several, is the workload the comparison measures
	// as its study did: one launch per op for each measurement, scored
	// by the study's objective, and compared part by part. GuardOps are
	// the collectives outside it measured, GuardLaunches per arm each, for
	// a candidate the comparison recommends. Either makes the comparison
	// one of collectives (search.Reconfirm).
	Parts         nccl.Workload
	GuardOps      []nccl.Op
	GuardLaunches int
	// GuardOpsSkipped are the collectives left out of the default guarded
	// ops, each with why: stored with the comparison's study and reported
	// as search reports its own (SearchOptions.GuardOpsSkipped), so that
	// an op left unguarded is never dropped silently.
	GuardOpsSkipped []string
	// Stats are the statistics the comparison decides with (the verified
	// study's minimum effect and alpha); zero is model.DefaultOptions.
	Stats model.Options
	// Delivered are, per op of the comparison, the sizes the candidate as
	// deployed (a tuner CSV) must not make slower: judged one by one, Holm
	// across every op's sizes together (model.CompareGuards, the guards'
	// rule), and each significantly slower by more than the minimum
	// effect refuses the candidate (verify exits 1). Set by
	// GuardDelivered; every launch of an op sweeps its sizes (widen).
	Delivered []runresult.DeliveredSizes
	// EqualByRule are, per op, the sizes between its called ones where the
	// candidate as deployed keeps NCCL's own choice (SettleGaps): equal to
	// the baseline by rule, so not judged.
	EqualByRule []runresult.DeliveredSizes
	// TunerCSV is the tuner CSV Cand hands the plugin (verify
	// --tuner-plugin), stored with the study: the temporary file Cand's
	// NCCL_TUNER_CONFIG_FILE names is removed when the command ends.
	TunerCSV string
	// PluginRetunes: the study ran where NVIDIA's example tuner plugin
	// retunes NCCL at init whatever its CSV holds (Blackwell at 3+ nodes:
	// nccl.ExamplePluginRetunes). PluginAlone, set there, is the plugin
	// with an empty CSV: a third arm launched right after each measured
	// launch of Cand, of the same op and sizes, so that what loading the
	// plugin alone changes (PluginAlone against Base) is told from what
	// the CSV's rows change (Cand against PluginAlone) at Delivered's sizes.
	PluginRetunes bool
	PluginAlone   nccl.Config
	// Timed is the verified study's workload when it came from calls
	// (--calls, config calls:): GuardDelivered measures its calls off the
	// powers of two at their own sizes (Calls).
	Timed nccl.Workload
	// Calls are the launches that measure Timed's calls at their own
	// sizes, the search's own-size check's (search.CallLadders): after each measured launch of either arm of an op, one of
	// each of the op's ladders, and each call is judged with the op's
	// Delivered sizes (the guards' rule, one family). Set by
	// GuardDelivered.
	Calls []search.CallLadder
}

// GuardDelivered makes a comparison judge the candidate as it is
// delivered: for each op it measures, at every size the workload calls
// (a one-op study's band, a workload's parts, a timed workload's calls)
// and at the power of two just outside that op's sizes on each side,
// where a tuner row stretched past what was proven (a first row from 0
// bytes, a last one to the top) changes what NCCL runs though no part
// measures it; never below the smallest size nccl-tests runs of the op
// on nranks (nccl.Op.SmallestSafe), where nothing can be measured. A
// workload's parts are still judged as its study judged them; these
// sizes are judged besides, as one family.
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
			// A one-op comparison shows them as its guard sizes too. A
			// workload's guard sizes are every op's and judged by the
			// study's own rule, so its delivered sizes stay apart.
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
	// The process calls its own sizes, where a row of the CSV (an exact
	// one, or a bin's stretched over it) acts though no power of two
	// shows it.
	ab.Calls = search.Options{Workload: ab.Timed, Ranks: nranks}.CallLadders()
}

// atOwnSize are, per op, the sizes ab measures at the process's own
// calls (Calls).
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

// SettleGaps decides how the candidate as delivered is judged at the
// gaps between an op's called sizes (calls at 2M and 8M leave 4M, which
// no part measures): keeps says, per gap size, whether the candidate keeps
// NCCL's own choice there (a tuner CSV's rule: export.KeepsNCCL), which is
// equal to the baseline by rule and stated as such (EqualByRule); every
// other gap size is judged with the op's delivered sizes. After
// GuardDelivered.
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

// widen is the sweep [lo, hi] of a launch of op, widened to the sizes op
// is judged at as delivered (Delivered): the one rule that every launch
// of a comparison, a workload's included, measures them. op "" is the
// comparison's one op (search.Request's for a one-part study).
func (ab AB) widen(op nccl.Op, lo, hi int64) (int64, int64) {
	op = cmp.Or(op, ab.op())
	for _, d := range ab.Delivered {
		if d.Op == op.OrAllReduce() && len(d.Sizes) > 0 {
			lo, hi = min(lo, d.Sizes[0]), max(hi, d.Sizes[len(d.Sizes)-1])
		}
	}
	return lo, hi
}

// ofOps reports whether ab measures more than its one op
// (nccl.Workload.BeyondOnePart).
func (ab AB) ofOps() bool { return ab.Parts.BeyondOnePart(ab.GuardOps) }

// stats are the statistics ab decides with.
func (ab AB) stats() model.Options { return cmp.Or(ab.Stats, model.DefaultOptions()) }

// searchOptions are ab as the study options search.Reconfirm measures
// with: the workload (or the one band and op), guard sizes, guarded ops
// and statistics.
func (ab AB) searchOptions() search.Options {
	o := search.Options{Band: ab.Band, Op: ab.op(), Guard: ab.Guards, GuardOps: ab.GuardOps, GuardLaunches: ab.GuardLaunches, Stats: ab.stats()}
	if ab.Parts.ScoredByRounds() {
		o.Workload = ab.Parts
	}
	return o
}

// checkOps are the ops the candidate's debug check launches: the
// workload's that reach NCCL's tuner (one each; alltoall and sendrecv run
// as send/recv, and no tuner call of theirs could show anything), or the
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
	// Significant is the verdict's, as stored (rec.Significant), not the
	// band decision's (r.Comparison.Recommend): for a comparison of
	// collectives the band may gain while a part or guarded op refuses
	// the config, and the JSON must say what the text and show say.
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
	// A refusal fails verify of what the study recommended, or of what the
	// user named; of a candidate the study itself refused, it is what the
	// study found too. compare reports it.
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
	if several {
		// Which op's calls fell back is the point of a check per op.
		for i := range c.Warnings {
			c.Warnings[i].Message = string(op) + ": " + c.Warnings[i].Message
		}
	}
	return c
}

// TunerWarningsOf are the warnings a tuner plugin's debug launch shows
// (fabric's), never nil.
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
	Launch LaunchSettings
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
	Progress func(n, total int, phase string, cfg nccl.Config, l *benchfmt.Launch)
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
	// Checks are the candidate's debug launches when ab.CheckCand, one
	// per op.
	Checks []runresult.OpCheck
	// PluginAlone is the third arm's effects when ab.PluginAlone is set.
	PluginAlone *runresult.PluginAloneEffect
}

// pluginAloneArm is the third arm (AB.PluginAlone) as it runs: its trial,
// how it launches, its measured launches per op, and the candidate it
// follows.
type pluginAloneArm struct {
	trial, cand *search.Trial
	run         abLaunch
	byOp        map[nccl.Op][]model.Launch
}

// follow launches the arm after a measured launch of t of op when t is
// the candidate; nothing when there is no third arm.
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

// effect is the arm's account: per op and size of ab.Delivered, the empty
// CSV against the baseline and the CSV against the empty CSV.
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

// callsArm measures the process's calls at their own sizes (AB.Calls)
// as the comparison runs: after each measured launch of either arm of an
// op, one launch of that arm over each of the op's ladders (the search's
// own-size request, search.CallLadder.Request), so that every
// measurement of the op has its calls' times beside it.
type callsArm struct {
	ladders []search.CallLadder
	run     abRequest
	last    *benchfmt.Launch
	// byTrial are each trial's measured ladder launches, per ladder in
	// ladders' order, the k-th after the trial's k-th measured launch.
	byTrial map[*search.Trial][][]model.Launch
}

// follow launches t over each ladder of op after a measured launch of t
// of op; nothing when there is no such arm.
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
// the ladder launches that followed it at the sizes the process calls
// (keyed by the size called; measured at the size nccl-tests ran for it,
// nccl.LadderSize), and those sizes: what judgeDelivered judges beside the
// op's delivered sizes.
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

// RunAB measures ab.Base and ab.Cand alternately (B C B C …, after one
// uncounted warm-up of B), with search's confirmation at a design of one
// look (a fixed-size test at alpha), and stores the launches and the
// comparison as a study of ab.Kind. A comparison of collectives (several
// parts, or guarded ops) is search.Reconfirm's: each measurement one
// launch per op, the parts and guarded ops judged as the study judged
// them. A launch that fails is vocab.ErrFabric; stopped by the user,
// vocab.ErrInterrupted.
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
	var calls *callsArm // the arm of ab.Calls; nil when there are none
	if len(ab.Calls) > 0 {
		calls = &callsArm{ladders: ab.Calls, byTrial: map[*search.Trial][][]model.Launch{}}
	}
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
		if alone != nil {
			// Its launches are counted past the comparison's, so that a
			// simulated launch's noise is its own.
			alone.run = ab.sweeper(ab.requester(study, rec, quiet, &last, 1<<20))
		}
		if calls != nil {
			// Counted past the third arm's, for their own noise too.
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
// each arm, interleaved (search.Confirm), decided over the band.
func (ab AB) confirm(ctx context.Context, study *store.Study, run abLaunch, base, cand *search.Trial, o ABOptions, alone *pluginAloneArm, calls *callsArm) (*ABResult, error) {
	if err := run(ctx, base, ab.op(), vocab.PhaseWarmup, false); err != nil {
		return nil, err
	}
	opt := ab.stats()
	// A fixed number of launches per arm is a design of one look at alpha:
	// its decision is model.Compare's at opt.
	design := model.PlanConfirm(o.Launches, o.Launches, opt.Alpha)
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

// reconfirm is the comparison of collectives (search.Reconfirm), its
// launches after the check launches made before, stored and concluded as
// the search stores its confirmation (RecommendationOf).
func (ab AB) reconfirm(ctx context.Context, study *store.Study, rec *Recorder, o ABOptions, base, cand *search.Trial, made int, alone *pluginAloneArm, calls *callsArm) (*ABResult, error) {
	launcher := &lastLauncher{Launcher: &Launcher{Base: o.Launch.Spec, Seed: freshNoise(o)}, widen: ab.widen}
	var recorder search.Recorder = rec
	if alone != nil || calls != nil {
		// After a measured launch is stored: the third arm's (of the
		// candidate) and the calls' (of either arm) follow it in the
		// store too.
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
// failed, and widens each launch's sweep (AB.widen) to the sizes its op
// is judged at as delivered.
type lastLauncher struct {
	search.Launcher
	last  *benchfmt.Launch
	widen func(op nccl.Op, lo, hi int64) (int64, int64)
}

// followRecorder is a Recorder that, once a launch is stored, has follow
// launch what comes after it (the third arm: pluginAloneArm).
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

// op is the collective the comparison measures.
func (ab AB) op() nccl.Op { return nccl.Op(ab.Collective).OrAllReduce() }

// create stores the comparison's study with the decision settings it
// decides at (so a verify of it decides at them too), and, for a
// comparison of collectives, its parts and guarded ops.
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

// launches is how many launches the comparison makes at most: the checks,
// one warm-up and o.Launches per arm (a round of one per op for a
// workload), the guarded ops', and the third arm's, one after each of the
// candidate's.
func (ab AB) launches(o ABOptions) int {
	n := 2*o.Launches + 1
	if ab.ofOps() {
		n = search.Reconfirmation{Options: ab.searchOptions(), Launches: o.Launches}.ReconfirmLaunches()
	}
	if len(ab.PluginAlone) > 0 {
		n += (n - 1) / 2
	}
	// One launch of each ladder after each measured launch of its op.
	n += 2 * o.Launches * len(ab.Calls)
	if ab.CheckCand {
		n += len(ab.checkOps())
	}
	return n
}

// abLaunch makes and records one launch of t measuring op.
type abLaunch func(ctx context.Context, t *search.Trial, op nccl.Op, phase string, scored bool) error

// sweeper makes each launch of op over the comparison's sweep of op
// (sweep), with request; a plan-phase launch has NCCL's debug log.
func (ab AB) sweeper(request abRequest) abLaunch {
	return func(ctx context.Context, t *search.Trial, op nccl.Op, phase string, scored bool) error {
		lo, hi := ab.sweep(op)
		return request(ctx, t, search.Request{Op: op, Config: t.Config, MinBytes: lo, MaxBytes: hi, Phase: phase, Trial: t.Number,
			Debug: phase == vocab.PhasePlan}, scored)
	}
}

// abRequest makes and records one launch of t as req asks (its Seq is
// the launcher's own count).
type abRequest func(ctx context.Context, t *search.Trial, req search.Request, scored bool) error

// requester launches any request: the comparison's launches in order,
// each recorded, the latest kept in *last. A launch that does not end OK
// marks its trial failed and is vocab.ErrFabric, naming a crash in a
// tuner plugin and its fix. seq is the first launch's index (a simulated
// launch's noise stream).
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

// sweep is the sizes a launch of op covers: the search's rule
// (search.SweepRange) for the study ab re-measures, so that a fresh
// comparison sweeps what the study swept.
func (ab AB) sweep(op nccl.Op) (lo, hi int64) {
	lo, hi = search.SweepRange(ab.searchOptions(), op)
	if lo <= 0 {
		return lo, hi
	}
	return ab.widen(op, lo, hi)
}

// tunerCrash names a crash inside the tuner plugin a config runs, and its
// fix, as doctor does (fabric's diagnosis); "" for any other failure.
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

// agrees reports whether a fresh speedup interval overlaps ab's claim
// (false without one: nothing was claimed).
func (ab AB) agrees(ci [2]float64) bool {
	return ab.Claim != nil && ab.Claim.SpeedupCI[0] <= ci[1] && ci[0] <= ab.Claim.SpeedupCI[1]
}

// freshNoise is the simulated launches' seed of a comparison: another
// stream than the search's.
func freshNoise(o ABOptions) int64 { return o.Launch.Seed + 7919 }

// conclude stores the comparison as the study's recommendation and says
// whether it agrees with ab's claim.
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

// judgeDelivered judges ab.Delivered (the guards' rule,
// model.CompareGuards: one family, Holm across every op's sizes) and
// stores each op's verdict as a guard of that op: a size significantly
// slower by more than the minimum effect refuses the candidate, and the
// reason names each such (op, size).
func (ab AB) judgeDelivered(rec *store.Recommendation, base, cand *search.Trial, opt model.Options, calls *callsArm) {
	if len(ab.Delivered) == 0 {
		return
	}
	in := make([]model.GuardInput, len(ab.Delivered))
	for i, d := range ab.Delivered {
		// The op's calls at their own sizes (calls.withCalls) beside its
		// delivered sizes, in one family.
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

// reason is the stored note of what the comparison was for.
func (ab AB) reason() string {
	if ab.Verifies != "" {
		return "verifies " + ab.Verifies
	}
	return "compares " + ab.Cand.String() + " with " + ab.Base.String()
}
