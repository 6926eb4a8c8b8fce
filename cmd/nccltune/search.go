package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find the NCCL settings that make a band of message sizes fastest, and prove the gain",
		ArgsUsage: " ",
		Description: `search measures NCCL's defaults, proposes NCCL_* settings with a TPE sampler
(one launch each, more for the leaders), then measures the best candidate
against the defaults interleaved (B C B C …) and recommends it only when the
gain is significant (Mann-Whitney U, alpha 0.05) and at least --min-effect.
Exploration numbers are never reported as the gain: they favour lucky launches.
Every launch is stored; Ctrl-C stops cleanly and --resume STUDY continues.

Examples:
  nccltune search --sim spark4 --band 512K-4M
  nccltune search --band 512K-4M --launcher mpirun --np 4 --hosts spark5,spark6,spark7,spark8 \
      --base-env NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1 --base-env NCCL_SOCKET_IFNAME=enP7s7 \
      --bench ~/nccl-tests/build/all_reduce_perf
  nccltune search --resume s3-512K-4M --sim spark4`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "band", Usage: "message sizes to tune, inclusive, e.g. 512K-4M (the powers of two inside)"},
			&cli.IntFlag{Name: "budget", Value: 60, Usage: "launches in all, warm-up and confirmation included"},
			&cli.DurationFlag{Name: "time", Usage: "wall-time limit, e.g. 30m or 2h; exploration stops early enough to confirm; 0, the default, means no limit (--budget alone ends the study)"},
			&cli.StringSliceFlag{Name: "guard", Usage: "size where the winner must not be significantly slower (repeatable; default: twice the band's top; 'none' for none)"},
			&cli.StringSliceFlag{Name: "space", Usage: "add a knob to search, with its default values (NCCL_NTHREADS) or yours (NCCL_MAX_NCHANNELS=unset,2,4,8; use | between values holding commas)"},
			&cli.BoolFlag{Name: "space-only", Usage: "search only the --space knobs, not the default five"},
			&cli.StringFlag{Name: "sampler", Value: "tpe", Usage: "proposal strategy: tpe, random or grid"},
			&cli.IntFlag{Name: "confirm", Value: 6, Usage: "interleaved confirmation launches per arm at the first look; the confirmation goes on (group-sequential, up to 20% of --budget) while the measured spread leaves the decision open"},
			&cli.Float64Flag{Name: "min-effect", Value: 0.03, Usage: "smallest gain worth recommending (0.03 = 3%)"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level of the decision"},
			&cli.BoolFlag{Name: "allow-disabled-protocols", Usage: "also try and recommend protocols and algorithms NCCL's defaults disabled on this fabric (e.g. LL128 through NCCL_PROTO=^LL): they may give wrong results, which is why NCCL disabled them here"},
			&cli.StringFlag{Name: "resume", Usage: "continue an interrupted or killed `STUDY` (its band, space, guard sizes, seed, budget, sampler, --confirm, --min-effect and --alpha are reused; give the launch flags again). It stays within --budget: its warm-up counts, NCCL's plan is read back from the store, and with the budget spent it decides from the stored confirmation launches and makes only the explain launch the budget held back"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout (progress stays on stderr)"},
		}, append(append(namingFlags(), baselineFlags()...), launchFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("search takes no arguments (got %q); did you mean --band %s?", c.Args().First(), c.Args().First())
			}
			opts, err := readSearchFlags(c)
			if err != nil {
				return err
			}
			return runSearch(c.Context, opts)
		},
	}
}

// searchOptions is everything `nccltune search` needs.
type searchOptions struct {
	study   search.Options
	launch  launchOptions
	resume  string
	json    bool
	db      string
	stdout  io.Writer
	stderr  io.Writer
	bandArg string
	naming  studyNaming
}

func readSearchFlags(c *cli.Context) (searchOptions, error) {
	lo, err := readLaunchFlags(c)
	if err != nil {
		return searchOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return searchOptions{}, err
	}
	o := searchOptions{launch: lo, resume: c.String("resume"), json: c.Bool("json"), db: path,
		stdout: c.App.Writer, stderr: c.App.ErrWriter, bandArg: c.String("band")}
	if o.naming, err = readNaming(c); err != nil {
		return o, err
	}
	if o.resume != "" && (c.IsSet("baseline-env") || c.IsSet("baseline-env-file")) {
		return o, usageErrorf("--resume continues study %s against its own baseline; drop --baseline-env", o.resume)
	}
	if o.resume != "" && (c.IsSet("name") || c.IsSet("label")) {
		return o, usageErrorf("--resume continues study %s; --name and --label name a new study (nccltune rename renames one)", o.resume)
	}
	so := search.DefaultOptions()
	so.Budget, so.Time, so.Seed = c.Int("budget"), c.Duration("time"), lo.seed
	so.Sampler, so.ConfirmLaunches = c.String("sampler"), c.Int("confirm")
	so.AllowDisabled = c.Bool("allow-disabled-protocols")
	so.Stats.MinEffect, so.Stats.Alpha = c.Float64("min-effect"), c.Float64("alpha")
	if err := checkFinite("alpha", so.Stats.Alpha); err != nil {
		return o, err
	}
	if err := checkFinite("min-effect", so.Stats.MinEffect); err != nil {
		return o, err
	}
	if so.Stats.Alpha <= 0 || so.Stats.Alpha >= 0.5 {
		return o, usageErrorf("--alpha %g: use a significance level between 0 and 0.5 (0.05 is usual)", so.Stats.Alpha)
	}
	if so.Stats.MinEffect < 0 || so.Stats.MinEffect >= 1 {
		return o, usageErrorf("--min-effect %g: use a fraction such as 0.03 for 3%%", so.Stats.MinEffect)
	}
	if o.resume != "" {
		for _, f := range []string{"band", "space", "space-only", "guard", "sampler", "confirm", "min-effect", "alpha", "allow-disabled-protocols", "budget", "time", "seed"} {
			if c.IsSet(f) {
				return o, usageErrorf("--resume continues the study as it was defined; drop --%s (the band, space, guard sizes, sampler, confirmation launches, minimum effect, alpha, budget, time limit and seed are the study's)", f)
			}
		}
		o.study = so
		return o, nil
	}
	if o.bandArg == "" {
		return o, usageErrorf("search needs --band, the message sizes to tune, e.g. --band 512K-4M")
	}
	band, err := nccl.ParseBand(o.bandArg)
	if err != nil {
		return o, usageError(fmt.Errorf("--band: %w", err))
	}
	if err := checkElementSize("band", band.Min); err != nil {
		return o, err
	}
	so.Band = band
	so.Guard = search.DefaultGuard(band)
	if g := c.StringSlice("guard"); len(g) > 0 {
		so.Guard = nil
		for _, s := range g {
			if strings.EqualFold(s, "none") {
				continue
			}
			size, err := nccl.ParseSize(s)
			if err != nil {
				return o, usageError(fmt.Errorf("--guard: %w", err))
			}
			if err := checkElementSize("guard", size); err != nil {
				return o, err
			}
			so.Guard = append(so.Guard, size)
		}
	}
	if items := c.StringSlice("space"); len(items) > 0 || c.Bool("space-only") {
		if err := checkNoRepeats("space", items); err != nil {
			return o, err
		}
		so.Space, err = search.ParseSpace(items, c.Bool("space-only"))
		if err != nil {
			return o, usageError(err)
		}
		if err := checkSpaceHasCandidates(so.Space, lo.spec.BaseEnv); err != nil {
			return o, err
		}
	}
	if so.Baseline, err = readBaselineEnv(c, lo.spec.BaseEnv); err != nil {
		return o, err
	}
	// The baseline is a config of the space, so the search starts from it.
	so.Space = so.Space.WithBaseline(so.Baseline)
	if err := so.Space.CheckBase(lo.spec.BaseEnv); err != nil {
		return o, usageError(err)
	}
	if err := so.Validate(); err != nil {
		return o, usageError(err)
	}
	o.study = so
	return o, nil
}

func runSearch(ctx context.Context, o searchOptions) error {
	// Nothing is stored for a launch that cannot start (a resumed study
	// is there already: the database says first whether it can resume).
	if o.resume == "" {
		if err := preflight(o.launch); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(o.db)
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()

	study, prior, priorLaunches, err := prepareStudy(st, &o)
	if err != nil {
		return err
	}
	sizes := o.study.Band.Sizes()
	rec := studyrun.NewRecorder(st, study, sizes)
	launcher := &studyrun.Launcher{Base: o.launch.spec, Seed: o.study.Seed}

	progress := ui.NewSearchProgress(o.stderr, study, o.study.Budget)
	fmt.Fprintf(o.stderr, "study %s: band %s (%d sizes), %d configs in the space, budget %d launches%s\n",
		study.Name, o.study.Band, len(sizes), o.study.Space.Size(), o.study.Budget, labelSuffix(study))
	fmt.Fprintln(o.stderr, whereStored(o.db, os.IsNotExist(statErr)))
	started := time.Now()
	res, runErr := search.Run(ctx, o.study, launcher, rec, prior, priorLaunches, progress.Event)
	progress.Finish()

	switch {
	case runErr != nil && res != nil && ctx.Err() != nil:
		study.Status, study.Reason = vocab.StatusInterrupted, "interrupted by the user"
		if err := st.UpdateStudy(study); err != nil {
			return err
		}
		fmt.Fprintf(o.stderr, "\nstopped: %d launches of study %s are saved. Continue with:\n  %s\n",
			res.Launches, study.Name, resumeCommand(study, o.db))
		return vocab.ErrInterrupted
	case runErr != nil:
		study.Status, study.Reason = vocab.StatusFailed, runErr.Error()
		_ = st.UpdateStudy(study)
		if errors.Is(runErr, search.ErrBaselineFailed) && len(study.BaselineEnv) > 0 {
			runErr = fmt.Errorf("%w — %s", runErr, "the baseline here is "+ui.BaselineName(study.BaselineEnv)+", not NCCL's defaults")
		}
		return runErr // a failed baseline, a missing benchmark or launcher: vocab.ErrFabric
	}
	study.Recommendation = recommendationOf(res, sizes, o.study)
	study.Plans = planSummaryOf(res.Plan)
	study.Status, study.Reason = vocab.StatusDone, ""
	if err := st.UpdateStudy(study); err != nil {
		return err
	}
	return ui.PrintSearch(o.stdout, o.json, study, res, time.Since(started))
}

// resumeCommand is the command that continues study: its launch
// settings, as stored, and the database when it is not the default one.
func resumeCommand(study *store.Study, db string) string {
	cmd := "nccltune search --resume " + shellQuote(study.Name) + " " + strings.Join(launchArgs(study), " ")
	if def, err := store.DefaultPath(); err != nil || def != db {
		cmd += " --db " + shellQuote(db)
	}
	return cmd
}

// prepareStudy creates the study, or loads it and its trials for --resume.
func prepareStudy(st *store.Store, o *searchOptions) (*store.Study, []*search.Trial, int, error) {
	if o.resume == "" {
		study := &store.Study{
			Kind: vocab.KindSearch, Band: o.study.Band.String(), BandMin: o.study.Band.Min, BandMax: o.study.Band.Max,
			Sizes: o.study.Band.Sizes(), GuardSizes: o.study.Guard, Collective: "all_reduce",
			Space: spaceMap(o.study.Space), BaseEnv: o.launch.spec.BaseEnv, Launch: launchSettings(o.launch),
			BaselineEnv: o.study.Baseline.Clone(),
			Simulated:   o.launch.simulated, Seed: o.study.Seed,
			Budget: store.Budget{Launches: o.study.Budget, Time: o.study.Time},
			Search: &store.SearchSettings{Sampler: o.study.Sampler, ConfirmLaunches: o.study.ConfirmLaunches,
				MinEffect: o.study.Stats.MinEffect, Alpha: o.study.Stats.Alpha, AllowDisabled: o.study.AllowDisabled},
			Status: vocab.StatusRunning,
		}
		o.naming.apply(study)
		if err := createStudy(st, study); err != nil {
			return nil, nil, 0, err
		}
		return study, nil, 0, nil
	}
	study, err := st.Study(o.resume)
	if err != nil {
		return nil, nil, 0, usageError(err)
	}
	if study.Kind != vocab.KindSearch {
		return nil, nil, 0, usageErrorf("study %s is %s, not a search; only searches resume", study.Name, ui.AKind(study.Kind))
	}
	if study.Status == vocab.StatusDone {
		return nil, nil, 0, usageErrorf("study %s is finished; see nccltune show %s", study.Name, study.Name)
	}
	if study.Simulated != o.launch.simulated {
		return nil, nil, 0, usageErrorf("study %s ran on %s; resume it the same way (%s)", study.Name,
			map[bool]string{true: "the simulated fabric", false: "real hardware"}[study.Simulated],
			map[bool]string{true: "--sim " + study.Launch.SimProfile, false: "without --sim"}[study.Simulated])
	}
	if diffs := launchDifferences(study, launchSettings(o.launch), o.launch.spec.BaseEnv); len(diffs) > 0 {
		return nil, nil, 0, launchDifferenceError(study, "resume", diffs)
	}
	if note := unrecordedNote(study); note != "" {
		fmt.Fprintln(o.stderr, note)
	}
	o.study.Band = nccl.Band{Min: study.BandMin, Max: study.BandMax}
	o.study.Guard = study.GuardSizes
	o.study.Space = spaceFromMap(study.Space)
	o.study.Baseline = nccl.Config(study.BaselineEnv).Clone()
	o.study.Seed = study.Seed
	if study.Budget.Launches > 0 {
		o.study.Budget = study.Budget.Launches
	}
	o.study.Time = study.Budget.Time
	if ss := study.Search; ss != nil {
		// The study decides as it was set up to, whatever the defaults now.
		o.study.Sampler, o.study.ConfirmLaunches = ss.Sampler, ss.ConfirmLaunches
		o.study.Stats.MinEffect, o.study.Stats.Alpha = ss.MinEffect, ss.Alpha
		o.study.AllowDisabled = ss.AllowDisabled
	}
	if err := o.study.Validate(); err != nil {
		return nil, nil, 0, err
	}
	trials, launches, err := loadTrials(st, study, o.study.Band.Sizes())
	if err != nil {
		return nil, nil, 0, err
	}
	study.Status, study.Reason = vocab.StatusRunning, ""
	if err := st.UpdateStudy(study); err != nil {
		return nil, nil, 0, err
	}
	return study, trials, launches, nil
}

// loadTrials rebuilds the search's trials from the store for --resume.
func loadTrials(st *store.Store, study *store.Study, sizes []int64) ([]*search.Trial, int, error) {
	recs, err := st.Trials(study.ID)
	if err != nil {
		return nil, 0, err
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		return nil, 0, err
	}
	byID := map[uint64]*search.Trial{}
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
	for _, l := range launches {
		t := byID[l.TrialID]
		if t == nil {
			continue
		}
		t.Launches++
		if l.Phase == vocab.PhasePlan || l.Phase == vocab.PhaseExplain {
			// The search reads NCCL's plan back from these instead of
			// launching again (the stored facts are the log's).
			rl := &runner.Launch{Outcome: l.Outcome, Reason: l.Reason, Simulated: l.Simulated,
				Result: &runner.Result{Facts: l.Facts}}
			t.Debug = append(t.Debug, search.DebugLaunch{Phase: l.Phase, Launch: rl})
		}
		if l.Outcome != runner.OK || !l.Scored {
			continue
		}
		ml := benchfmt.ModelLaunch(l.Sizes)
		if l.Phase == vocab.PhaseConfirm {
			t.Confirm = append(t.Confirm, ml)
		} else {
			t.Explore = append(t.Explore, ml)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, len(launches), nil
}

func spaceMap(s search.Space) map[string][]string {
	m := map[string][]string{}
	for _, d := range s {
		m[d.Knob] = d.Choices
	}
	return m
}

// spaceFromMap orders dimensions as nccl.Knobs does, so a stored space
// comes back as it was built.
func spaceFromMap(m map[string][]string) search.Space {
	var s search.Space
	for _, name := range nccl.KnobNames() {
		if ch, ok := m[name]; ok {
			s = append(s, search.Dimension{Knob: name, Choices: ch})
		}
	}
	return s
}

func launchSettings(lo launchOptions) store.LaunchSettings {
	s := lo.spec
	ls := store.LaunchSettings{Launcher: s.Launcher, NP: s.NP, Hosts: s.Hosts, MPIArgs: s.MPIArgs,
		Bench: s.Bench, BenchArgs: s.BenchArgs, Timeout: s.Timeout, Instrument: s.Instrument, Prefix: s.Prefix,
		Run: &store.RunSettings{Iters: s.Iters, Warmup: s.Warmup, MPIFlavor: s.MPIFlavor, MPIRun: s.MPIRun, TorchScript: s.TorchScript}}
	if s.Sim != nil {
		ls.Launcher = "sim"
		ls.SimProfile, ls.SimNoise, ls.SimSeed = s.Sim.Profile, s.Sim.Noise, lo.seed
	}
	return ls
}

// recommendationOf turns the study's result into its stored conclusion.
func recommendationOf(res *search.Result, sizes []int64, so search.Options) *store.Recommendation {
	rec := &store.Recommendation{Env: map[string]string{}, Speedup: 1, SpeedupCI: [2]float64{1, 1},
		Reason: res.Reason, Ending: res.Ending, MinEffect: so.Stats.MinEffect, Dropped: []nccl.Drop{}}
	base := res.Baseline
	if res.Recommend {
		rec.Env = res.Winner.Config.Clone()
		rec.TrialID = res.Winner.ID
		rec.Dropped = append(rec.Dropped, res.Dropped...)
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
	rec.BaselineLaunches, rec.CandidateLaunches = len(base.Confirm), len(res.Winner.Confirm)
	bs := model.Summarize(base.Confirm, sizes, so.Stats)
	cs := model.Summarize(res.Winner.Confirm, sizes, so.Stats)
	rec.BaselineScoreUS, rec.ScoreUS = bs.ScoreUS, cs.ScoreUS
	rec.PerSize = sizeComparisons(base.Confirm, res.Winner.Confirm, sizes, so.Stats)
	rec.Guards = sizeComparisons(base.Confirm, res.Winner.Confirm, so.Guard, so.Stats)
	return rec
}

// sizeComparisons compares baseline and candidate launches size by size.
func sizeComparisons(base, cand []model.Launch, sizes []int64, opt model.Options) []store.SizeComparison {
	var out []store.SizeComparison
	for _, b := range sizes {
		one := []int64{b}
		bs, cs := model.Summarize(base, one, opt), model.Summarize(cand, one, opt)
		if len(bs.Sizes) == 0 || len(cs.Sizes) == 0 {
			continue
		}
		cmp := model.Compare(base, cand, one, opt)
		b0, c0 := bs.Sizes[0], cs.Sizes[0]
		out = append(out, store.SizeComparison{Bytes: b,
			BaselineUS: b0.Median, BaselineLo: ui.FiniteOr(b0.Lo, b0.Median), BaselineHi: ui.FiniteOr(b0.Hi, b0.Median),
			CandidateUS: c0.Median, CandidateLo: ui.FiniteOr(c0.Lo, c0.Median), CandidateHi: ui.FiniteOr(c0.Hi, c0.Median),
			Speedup: cmp.Speedup, Significant: cmp.Significant, PValue: ui.FiniteOr(cmp.P, 1)})
	}
	return out
}

// planSummaryOf converts the search's account of NCCL's plan for the store.
func planSummaryOf(p *search.PlanSummary) *store.PlanSummary {
	if p == nil {
		return nil
	}
	out := &store.PlanSummary{Read: p.Read, Note: p.Note, SpaceConfigs: p.SpaceConfigs,
		ConfigsExplored: p.ConfigsExplored, PlansExplored: p.PlansExplored, Merged: []store.MergeCount{},
		Refused: p.Refused, Checks: p.Checks, MergedConfigs: p.MergedConfigs}
	for _, m := range p.Merged {
		out.Merged = append(out.Merged, store.MergeCount{Reason: m.Reason, Count: m.Count})
	}
	return out
}
