package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find the NCCL settings that make a band of message sizes fastest, and prove the gain",
		ArgsUsage: " ",
		Description: `search measures NCCL's defaults, proposes NCCL_* settings with a TPE sampler
(one launch each, more for the leaders), then measures the best candidate
against the defaults interleaved (B C B C …) and recommends it only when the
gain is significant (Mann-Whitney U at --alpha, 0.05 by default) and at
least --min-effect.
Exploration numbers are never reported as the gain: they favour lucky launches.
Every launch is stored; Ctrl-C stops cleanly and --resume STUDY continues.

Examples:
  nccltune search --sim spark4 --band 512K-4M
  nccltune search --band 512K-4M --launcher mpirun --np 4 --hosts spark5,spark6,spark7,spark8 \
      --base-env NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1 --base-env NCCL_SOCKET_IFNAME=enP7s7 \
      --bench ~/nccl-tests/build/all_reduce_perf
  nccltune search --resume s3-512K-4M --sim spark4`,
		Flags: append([]cli.Flag{
			flagvalue.Band("message sizes to tune, inclusive, e.g. 512K-4M: the powers of two inside are measured and scored (3M-5M: 4M), of the --op collective"),
			flagvalue.Calls("one call of the workload a process runs, `OP:BYTES:CALLS` (all_reduce:10240:760: 760 all-reduces of 10240 bytes per step), repeatable, instead of --band and --part (nccltune workload writes them as the config's calls:): each is measured at the nearest power of two and, before a setting ships, at its own size wherever NCCL plans the setting and the baseline apart there or the setting holds a knob NCCL's plan does not show (a size just under its power of two, where each side's plan holds, may stand by the measurement there); the study minimises the time per step Σ calls × time, every call is guarded, and no other size or op is guarded unless --guard or --guard-ops asks"),
			flagvalue.Chose("what the process's own NCCL chose for its calls of one op at one size, `OP:BYTES:ALGO:PROTO` (all_reduce:81920:ring:simple), repeatable, with --calls (nccltune workload writes them as the config's chose: from the log's TUNING lines): a tuner CSV export keeps exactly that choice at that size wherever the study proved nothing there; a choice at a size --calls leaves out (a start-up call taken out of the study) keeps that call on NCCL's own choice in the CSV"),
			flagvalue.Parts("one part of the workload to tune, `OP:BAND[:WEIGHT]` (all_reduce:512K-4M:0.8), repeatable, instead of --band and --op: the study scores the parts together (weighted geometric mean of their band scores, weights normalised), one launch per op per measurement, and guards every other collective by default (--guard-ops)"),
			&cli.StringFlag{Name: "guard-ops", Usage: "collectives outside the workload the confirmation also measures for a recommended config, interleaved with the baseline, at the workload's sizes and the guard sizes: a comma `LIST` (all_gather,broadcast) or none; one significantly slower by more than --min-effect refuses the recommendation. Default with --part: every other op of the nccl-tests build (those whose *_perf is missing are skipped and named); with --band: none"},
			&cli.IntFlag{Name: "guard-launches", Value: search.DefaultGuardLaunches, Usage: "launches per arm of each guarded op (--guard-ops), measured only for a config the confirmation recommends; 8 refused a 7.9% slowdown in 95 to 99 of 100 simulated studies, 4 in 68 (docs/PERFORMANCE.md)"},
			&cli.IntFlag{Name: "budget", Value: search.DefaultBudgetLaunches, Usage: "launches in all, warm-up, confirmation and guards included, each config's share of a batch launch (--batch) one; default 60, and for a workload or guarded ops 60 per op of the workload plus 2×--guard-launches per guarded op and one launch to read the plan of each guarded op NCCL's tuner plans, and for --calls 4×--guard-launches per op of the workload (its calls' top-up rounds and a confirmation after a refusal) plus, per ladder of called sizes off the powers of two sharing an odd part, 2 debug launches and 4×--guard-launches (to judge those calls at their own sizes; a smaller --budget may leave them none, and a setting that changes such a call is then refused, not shipped unshown)"},
			&cli.IntFlag{Name: "batch", Usage: fmt.Sprintf("configs per batch launch of exploration, the baseline included (at least %d): one process measures them side by side, each on its own NCCL communicator, in rounds, so MPI start and NCCL init are paid once; 0 launches every config on its own. Default %d with --instrument torch, 0 with nccl-tests (it has no batch mode) and with --sim (give --batch to emulate the torch instrument's; simulated). Only NCCL_PROTO, NCCL_ALGO and the channel limits (as ncclConfig_t maxCTAs/minCTAs) can share a process: a config with another knob (NCCL_CROSS_NIC, threads, buffers, socket knobs: NCCL reads them once per process) is launched on its own, and so are NCCL's debug launches and the confirmation, whose separate interleaved launches decide every recommendation. Each config's share of a batch counts one launch of --budget. A study stops batching once a batch cost more than half a launch of its own per config (a config ranks after two batches, after one launch)", search.MinBatchSize, search.DefaultBatchSize)},
			&cli.DurationFlag{Name: "time", Usage: "wall-time limit, e.g. 30m or 2h: exploration stops early enough to confirm, and the confirmation and its guards stop at the limit (a call or guarded op not yet shown safe then refuses the candidate); 0, the default, means no limit (--budget alone ends the study)"},
			flagvalue.Guard("size, a power of two, where the winner must not be significantly slower (repeatable; default: twice the band's top; 'none' for none)"),
			flagvalue.KVFlag("space", "add a knob to search, with its default values (NCCL_NTHREADS) or yours (NCCL_MAX_NCHANNELS=unset,2,4,8; use | between values holding commas)", nil),
			&cli.BoolFlag{Name: "space-only", Usage: "search only the --space knobs, not the default five"},
			&cli.StringFlag{Name: "sampler", Value: "tpe", Usage: "proposal strategy: tpe, random or grid"},
			&cli.IntFlag{Name: "confirm", Value: 6, Usage: "interleaved confirmation launches per arm at the first look; the confirmation goes on (group-sequential, up to 20% of --budget) while the measured spread leaves the decision open"},
			&cli.Float64Flag{Name: "min-effect", Value: vocab.DefaultMinEffect, Usage: "smallest gain worth recommending (0.03 = 3%)"},
			&cli.Float64Flag{Name: "alpha", Value: vocab.DefaultAlpha, Usage: "significance level of the decision"},
			&cli.BoolFlag{Name: "allow-disabled-protocols", Usage: "also try and recommend protocols and algorithms NCCL's defaults disabled on this fabric (e.g. LL128 through NCCL_PROTO=^LL): they may give wrong results, which is why NCCL disabled them here"},
			&cli.StringFlag{Name: "resume", Usage: "continue an interrupted or killed `STUDY` (its band, space, guard sizes, seed, budget, sampler, --confirm, --min-effect, --alpha, --allow-disabled-protocols and --batch are reused; give the launch flags again). It stays within --budget: its warm-up counts, NCCL's plan is read back from the store, and with the budget spent it decides from the stored confirmation launches and makes only the explain launch the budget held back"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout (progress stays on stderr)"},
		}, append(append(namingFlags(), launchflags.BaselineFlags()...), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("search takes no arguments (got %q); did you mean --band %s?", c.Args().First(), c.Args().First())
			}
			opts, err := readSearchFlags(c)
			if err != nil {
				return err
			}
			return runSearch(c.Context, opts)
		},
	}
}

// searchOptions is what studyrun.PrepareSearch takes, and where the
// search is stored and printed.
type searchOptions struct {
	studyrun.SearchOptions
	cmdIO
}

func readSearchFlags(c *cli.Context) (searchOptions, error) {
	lo, err := launchflags.Read(c)
	if err != nil {
		return searchOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return searchOptions{}, err
	}
	o := searchOptions{SearchOptions: studyrun.SearchOptions{Launch: lo, Resume: c.String("resume")}, cmdIO: ioOf(c, path)}
	naming, err := readNaming(c)
	if err != nil {
		return o, err
	}
	o.Name = naming.apply
	if o.Resume != "" && (c.IsSet("baseline-env") || c.IsSet("baseline-env-file")) {
		return o, vocab.UsageErrorf("--resume continues study %s against its own baseline; drop --baseline-env", o.Resume)
	}
	if o.Resume != "" && (c.IsSet("name") || c.IsSet("label")) {
		return o, vocab.UsageErrorf("--resume continues study %s; --name and --label name a new study (nccltune rename renames one)", o.Resume)
	}
	so := search.DefaultOptions()
	so.Budget, so.Time, so.Seed = c.Int("budget"), c.Duration("time"), lo.Seed
	if so.BatchSize, err = batchSizeFor(c.IsSet("batch"), c.Int("batch"), lo.Spec.Instrument, lo.Simulated); err != nil {
		return o, err
	}
	so.Sampler, so.ConfirmLaunches = c.String("sampler"), c.Int("confirm")
	so.AllowDisabled, so.GuardLaunches = c.Bool("allow-disabled-protocols"), c.Int("guard-launches")
	so.Stats.MinEffect, so.Stats.Alpha = c.Float64("min-effect"), c.Float64("alpha")
	if err := checkFinite("alpha", so.Stats.Alpha); err != nil {
		return o, err
	}
	if err := checkFinite("min-effect", so.Stats.MinEffect); err != nil {
		return o, err
	}
	if so.Stats.Alpha <= 0 || so.Stats.Alpha >= 0.5 {
		return o, vocab.UsageErrorf("--alpha %g: use a significance level between 0 and 0.5 (0.05 is usual)", so.Stats.Alpha)
	}
	if so.Stats.MinEffect < 0 || so.Stats.MinEffect >= 1 {
		return o, vocab.UsageErrorf("--min-effect %g: use a fraction such as 0.03 for 3%%", so.Stats.MinEffect)
	}
	if o.Resume != "" {
		for _, f := range []string{"band", "part", "calls", "guard-ops", "guard-launches", "space", "space-only", "guard", "sampler", "confirm", "min-effect", "alpha", "allow-disabled-protocols", "budget", "batch", "time", "seed", "chose"} {
			if c.IsSet(f) {
				return o, vocab.UsageErrorf("--resume continues the study as it was defined; drop --%s (the band or parts, guarded ops, space, guard sizes, sampler, confirmation launches, minimum effect, alpha, budget, batch size, time limit and seed are the study's)", f)
			}
		}
		o.Study = so
		return o, nil
	}
	if err := readWorkload(c, "search", &so, &o.Launch); err != nil {
		return o, err
	}
	// --chose: what the process's own NCCL chose at the sizes it calls; at a
	// size --calls leaves out, the tuner CSV keeps NCCL's choice for that call.
	if o.LoggedChoices = flagvalue.ChoseOf(c); len(o.LoggedChoices) > 0 && !c.IsSet("calls") {
		return o, vocab.UsageErrorf("--chose says what NCCL chose at the sizes a process calls: give them with --calls (nccltune workload writes both), or drop --chose")
	}
	if so.BatchSize > 1 { // --batch's default with torch: no study is stored for batches that cannot launch
		if err := lo.Spec.CheckBatchPlanSeen(); err != nil {
			return o, vocab.UsageError(err)
		}
	}
	so.Guard = search.DefaultGuardFor(so.Parts())
	if guard, given := flagvalue.GuardOf(c); given {
		so.Guard = guard // none of them for "none"
	}
	if items := flagvalue.Items(c, "space"); len(items) > 0 || c.Bool("space-only") {
		if so.Space, err = search.ParseSpace(items, c.Bool("space-only")); err != nil {
			return o, vocab.UsageError(err)
		}
		if err := so.Space.CheckHasCandidates(lo.Spec.BaseEnv); err != nil {
			return o, vocab.UsageError(err)
		}
	}
	if so.Baseline, err = launchflags.ReadBaseline(c, lo.Spec.BaseEnv); err != nil {
		return o, err
	}
	so.Space = so.Space.WithBaseline(so.Baseline) // the search starts from it
	if err := so.Space.CheckBase(lo.Spec.BaseEnv); err != nil {
		return o, vocab.UsageError(err)
	}
	if so.GuardOps, o.GuardOpsSkipped, err = readGuardOps(c, so.Parts(), o.Launch); err != nil {
		return o, err
	}
	// A study of collectives scopes a winning NCCL_ALGO/NCCL_PROTO to the
	// ops it measured, so the others keep NCCL's defaults.
	so.ScopeLists = so.Workload.ScoredByRounds() || len(so.GuardOps) > 0 || c.IsSet("part") || c.IsSet("calls")
	if !c.IsSet("budget") {
		so.Budget = so.DefaultBudget()
	}
	if err := so.Validate(); err != nil {
		return o, vocab.UsageError(err)
	}
	o.Study = so
	return o, nil
}

// batchSizeFor is --batch (given, n) for the instrument: by default the
// torch instrument's batch size, else none unless asked (nccl-tests has no
// batch mode; the simulated fabric then emulates torch's batches).
func batchSizeFor(given bool, n int, instrument string, simulated bool) (int, error) {
	torch := instrument == benchfmt.InstrumentTorch
	switch {
	case !given && torch && !simulated:
		return search.DefaultBatchSize, nil
	case !given:
		return 0, nil
	case n < 0:
		return 0, vocab.UsageErrorf("--batch %d: give the configs per batch launch, or 0 to launch every config on its own", n)
	case n > 0 && n < search.MinBatchSize:
		return 0, vocab.UsageErrorf("--batch %d: a batch launch holds at least %d configs, the baseline included; give %d or more, or 0 to launch every config on its own", n, search.MinBatchSize, search.MinBatchSize)
	case n > 0 && !torch && !simulated:
		return 0, vocab.UsageErrorf("--batch %d: nccl-tests has no batch mode (each *_perf process measures one config); use --instrument torch, or drop --batch", n)
	}
	return n, nil
}

// readWorkload reads what the study (search, or compare's fresh form:
// cmd) measures: --calls, --part or --band of --op's collective, and
// sets the launch's own op to the first part's.
func readWorkload(c *cli.Context, cmd string, so *search.Options, lo *studyrun.LaunchSettings) error {
	parts := flagvalue.PartsOf(c)
	if c.IsSet("calls") {
		for _, f := range []string{"part", "band", "op"} {
			if c.IsSet(f) {
				return vocab.UsageErrorf("--calls gives the workload as the calls a process makes (OP:BYTES:CALLS, each with its collective and size); drop --%s, or give the workload as --part/--band instead of --calls", f)
			}
		}
		parts = flagvalue.CallsOf(c)
		if err := parts.Validate(); err != nil {
			return vocab.UsageErrorf("--calls: %v", err)
		}
		// Even one call is a workload: it makes the study timed.
		so.Workload, so.Op, so.Band = parts, parts[0].Op, search.Hull(parts)
		lo.Spec.Op = parts[0].Op
		return nil
	}
	if len(parts) == 0 {
		band, given := flagvalue.BandOf(c)
		if !given {
			return vocab.UsageErrorf("%s needs --band, the message sizes to measure, e.g. --band 512K-4M, or the workload's parts, e.g. --part all_reduce:512K-4M --part all_gather:1M-8M", cmd)
		}
		if err := flagvalue.CheckElementSize("band", band.Min); err != nil {
			return err
		}
		so.Band, so.Op = band, lo.Spec.Op.OrAllReduce()
		return nil
	}
	if c.IsSet("band") {
		return vocab.UsageErrorf("--part and --band both say what to tune: give the workload as --part OP:BAND[:WEIGHT] (repeatable), or one band with --band")
	}
	if c.IsSet("op") {
		return vocab.UsageErrorf("--part names each part's collective; drop --op %s", c.String("op"))
	}
	if err := parts.Validate(); err != nil {
		return vocab.UsageErrorf("--part: %v", err)
	}
	so.Op, so.Band = parts[0].Op, parts[0].Band
	if parts.ScoredByRounds() {
		so.Workload, so.Band = parts, search.Hull(parts)
	}
	lo.Spec.Op = parts[0].Op
	return nil
}

// readGuardOps reads --guard-ops: the ops named (each must launch here),
// none, or by default, for a study given with --part, every op outside
// the workload that launches here (the others skipped, each with why).
func readGuardOps(c *cli.Context, parts nccl.Workload, l studyrun.LaunchSettings) ([]nccl.Op, []string, error) {
	given := strings.TrimSpace(c.String("guard-ops"))
	if strings.EqualFold(given, "none") || given == "" && !c.IsSet("part") {
		return nil, nil, nil
	}
	var ops []nccl.Op
	if given == "" {
		var skipped []string
		for _, op := range search.DefaultGuardOps(parts) {
			if err := launchflags.CanLaunchOp(l, op); err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", op, err))
				continue
			}
			ops = append(ops, op)
		}
		return ops, skipped, nil
	}
	for _, name := range strings.Split(given, ",") {
		op, err := nccl.ParseOp(name)
		if err != nil {
			return nil, nil, vocab.UsageErrorf("--guard-ops: %v (or none)", err)
		}
		if slices.Contains(ops, op) {
			return nil, nil, vocab.UsageErrorf("--guard-ops names %s twice; name it once", op)
		}
		if len(parts.Sizes(op)) > 0 {
			return nil, nil, vocab.UsageErrorf("--guard-ops: %s is a part of the workload and is guarded as one already; leave it out", op)
		}
		if err := launchflags.CanLaunchOp(l, op); err != nil {
			return nil, nil, launchRefusal(fmt.Errorf("--guard-ops %s: %w", op, err))
		}
		ops = append(ops, op)
	}
	return ops, nil, nil
}

func runSearch(ctx context.Context, o searchOptions) error {
	// A resumed study is there already: the database says first whether
	// it can resume.
	if o.Resume == "" {
		if err := preflight(o.Launch, "--part %s: %w", o.Study.Parts().Ops()...); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(o.db)
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()

	o.CheckResume = func(study *store.Study) error {
		return launchflags.CheckRelaunch(study, "resume", o.Launch, o.stderr)
	}
	run, err := studyrun.PrepareSearch(st, o.SearchOptions)
	if err != nil {
		return err
	}
	if run.Options.BatchSize > 1 {
		run.Batch = studyrun.InstrumentBatches{}
	}
	study, so := run.Study, run.Options
	progress := ui.NewSearchProgress(o.stderr, study, so.Budget)
	ui.SearchStarted(o.stderr, study, ui.SearchPlan{Workload: so.Workload, Band: so.Band, Configs: so.Space.Size(), Budget: so.Budget,
		GuardOps: so.GuardOps, GuardOpSizes: so.GuardOpSizes(), GuardLaunches: so.GuardLaunches}, o.db, os.IsNotExist(statErr))
	started := time.Now()
	res, err := run.Run(ctx, func(ev search.Event) { progress.Event(searchEventOf(ev)) })
	progress.Finish()
	switch {
	case errors.Is(err, vocab.ErrInterrupted) && res != nil:
		fmt.Fprintf(o.stderr, "\nstopped: %d launches of study %s are saved. Continue with:\n  %s\n",
			res.Launches, study.Name, launchflags.ResumeCommand(study, o.db))
		return err
	case errors.Is(err, search.ErrBaselineFailed) && len(study.BaselineEnv) > 0:
		return fmt.Errorf("%w — %s", err, "the baseline here is "+ui.BaselineName(study.BaselineEnv)+", not NCCL's defaults")
	case err != nil:
		return err
	}
	took := time.Since(started)
	trials, launches, err := st.TrialsAndLaunches(study.ID)
	if err != nil {
		return err
	}
	return ui.PrintSearch(o.stdout, o.json, study, trials, launches, searchEndOf(res), took, o.db)
}

// searchEventOf is what the progress shows of ev.
func searchEventOf(ev search.Event) ui.SearchEvent {
	v := ui.SearchEvent{Seq: ev.Seq, Budget: ev.Budget, Phase: ev.Phase, Launch: ev.Launch, LaunchScore: ev.LaunchScore}
	if ev.Trial != nil {
		v.Trial, v.Config = ev.Trial.Number, ev.Trial.Config
	}
	if ev.Best != nil && ev.Best != ev.Baseline {
		v.Best = &ui.SearchLeader{Trial: ev.Best.Number, Config: ev.Best.Config, Speedup: ev.BestSpeedup}
		if g := ev.BestGain; g != nil {
			v.Best.Gain = &ui.GainBounds{Lo: g.Lo, Hi: g.Hi, Interval: g.Interval}
		}
	}
	return v
}

// searchEndOf is what the summary says of how res ended.
func searchEndOf(res *search.Result) ui.SearchEnd {
	end := ui.SearchEnd{Launches: res.Launches, Trials: len(res.Trials), Stopped: res.Stopped, Ending: res.Ending, Settled: res.Settled,
		Unspent: res.Unspent, UnspentForGuards: res.UnspentForGuards, Looks: res.Looks, Confirmed: res.Winner != nil && res.Decision != nil}
	if res.Design != nil {
		end.PlannedLooks = len(res.Design.Looks)
	}
	if res.Winner != nil {
		end.Candidate = res.Winner.Config
	}
	return end
}
