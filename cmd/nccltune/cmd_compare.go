package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "put two configs (measured fresh, interleaved) or two stored studies side by side",
		ArgsUsage: "[STUDY-A STUDY-B]",
		Description: `compare has two forms.

With --env-a and --env-b (either may be empty: NCCL's defaults) it launches
A and B alternately (A B A B …, --launches each, after one uncounted warm-up
of A) over --band and compares them with the statistics of a search's
confirmation: per-size medians with intervals, and the band speedup of B
over A with its interval and Mann-Whitney p. The launches are stored as a
study.

With --part OP:BAND[:WEIGHT] (repeatable, instead of --band and --op) the
fresh form measures a workload as search does: each measurement one
launch of every part's op, B over A compared part by part and over the
parts' weighted geometric combination (search's objective). --guard-ops
(by default with --part, as in search, every other op of the nccl-tests
build, each whose *_perf is missing named as not guarded; none for
--band) measures those collectives too, --guard-launches
per arm, when B is significantly faster: one significantly slower by
more than the minimum effect refuses B (ending op-regression).

With two stored studies it compares what each concluded: the launches of
the config each recommends (its confirmation launches when it has them),
or of its baseline, or of a sweep's or an import's one config. Those
launches were not interleaved: drift between the two studies (another day,
another driver) counts as a difference, which is sometimes the question.
Studies of several parts are compared op by op: every op both measured,
each over that op's own launches and the sizes both measured of it, one
table per op (--json: "ops", the top-level fields the first op's). An op
only one study measured is named in a warning and not compared; a
workload and a study that share no op are refused: compare their configs
fresh with --part to measure every part.

Examples:
  nccltune compare --sim spark4 --band 512K-4M --env-b NCCL_PROTO=^LL128 --env-b NCCL_MAX_NCHANNELS=8
  nccltune compare --band 512K-4M --env-a NCCL_PROTO=^LL128 --env-b NCCL_PROTO=Simple <launch flags>
  nccltune compare --sim h200-loopback --np 4 --part all_reduce:512K-4M:0.8 --part alltoall:512K-8M:0.2 --guard-ops broadcast --env-b NCCL_MAX_NCHANNELS=1
  nccltune compare s3-512K-4M s9-512K-4M
  nccltune compare s5-512K-8M s8-512K-8M   # two workloads: one table per op both measured`,
		Flags: append([]cli.Flag{
			flagvalue.KVFlag("env-a", "config A, NCCL knob `K=V`, repeatable (none: NCCL's defaults)", flagvalue.KnobItem("env-a")),
			flagvalue.KVFlag("env-b", "config B, NCCL knob `K=V`, repeatable (none: NCCL's defaults)", flagvalue.KnobItem("env-b")),
			flagvalue.Band("message sizes to compare over, e.g. 512K-4M (fresh form)"),
			flagvalue.Parts("one part of a workload to compare over, `OP:BAND[:WEIGHT]` (all_reduce:512K-4M:0.8), repeatable, instead of --band and --op (fresh form): one launch per op per measurement, compared part by part and over the parts' weighted geometric combination, as search scores them"),
			&cli.StringFlag{Name: "guard-ops", Usage: "collectives outside the workload also measured when B is significantly faster, interleaved with A: a comma `LIST` or none; one significantly slower by more than the minimum effect refuses B. Default with --part: every other op of the nccl-tests build (those whose *_perf is missing are skipped and named); with --band: none (fresh form)"},
			&cli.IntFlag{Name: "guard-launches", Value: search.DefaultGuardLaunches, Usage: "launches per config of each guarded op (fresh form)"},
			&cli.IntFlag{Name: "launches", Value: 10, Usage: "interleaved launches per config (fresh form)"},
			jsonFlag(),
		}, append(namingFlags(), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			o, err := readCompare(c)
			if err != nil {
				return err
			}
			return runCompare(c.Context, o)
		},
	}
}

// compareOptions is one compare: two stored studies side by side, or a
// fresh interleaved comparison of two configs.
type compareOptions struct {
	// verifyOptions holds the fresh form's launch flags, launches per
	// config and naming, and the command's streams and database.
	verifyOptions
	// studies are the stored form's two studies, nil for the fresh form.
	studies []string
	// ab is the fresh form's comparison: the two configs and what they
	// are measured over.
	ab studyrun.AB
}

// readCompare reads compare's arguments and flags, refusing a mix of the
// stored and the fresh form.
func readCompare(c *cli.Context) (compareOptions, error) {
	path, err := dbPath(c)
	if err != nil {
		return compareOptions{}, err
	}
	switch {
	case c.NArg() == 2:
		for _, f := range []string{"env-a", "env-b", "band", "part", "guard-ops", "guard-launches", "launches"} {
			if c.IsSet(f) {
				return compareOptions{}, vocab.UsageErrorf("compare STUDY-A STUDY-B compares stored launches; --%s is for a fresh comparison (without studies)", f)
			}
		}
		if path, err = reviewDBPath(c); err != nil { // only read
			return compareOptions{}, err
		}
		return compareOptions{verifyOptions: verifyOptions{cmdIO: ioOf(c, path)}, studies: []string{c.Args().Get(0), c.Args().Get(1)}}, nil
	case c.NArg() != 0:
		return compareOptions{}, vocab.UsageErrorf("compare takes two studies or none (got %d arguments); for two configs use --env-a K=V --env-b K=V", c.NArg())
	}
	return readCompareFresh(c, path)
}

func readCompareFresh(c *cli.Context, path string) (compareOptions, error) {
	lo, err := launchflags.Read(c)
	if err != nil {
		return compareOptions{}, err
	}
	a, err := launchflags.ReadConfig(c, "env-a", lo.Spec.BaseEnv)
	if err != nil {
		return compareOptions{}, err
	}
	b, err := launchflags.ReadConfig(c, "env-b", lo.Spec.BaseEnv)
	if err != nil {
		return compareOptions{}, err
	}
	if a.Key() == b.Key() {
		return compareOptions{}, vocab.UsageErrorf("--env-a and --env-b are the same config (%s): give B what differs, e.g. --env-b NCCL_PROTO=^LL128", a)
	}
	var so search.Options
	if err := readWorkload(c, "compare", &so, &lo); err != nil {
		return compareOptions{}, err
	}
	var skipped []string
	if so.GuardOps, skipped, err = readGuardOps(c, so.Parts(), lo); err != nil {
		return compareOptions{}, err
	}
	if so.GuardLaunches = c.Int("guard-launches"); len(so.GuardOps) > 0 && so.GuardLaunches < 2 {
		return compareOptions{}, vocab.UsageErrorf("--guard-launches %d cannot measure a spread; use at least 2", so.GuardLaunches)
	}
	if n, need := c.Int("launches"), model.MinLaunchesForDecision(model.DefaultOptions()); n < need {
		return compareOptions{}, vocab.UsageErrorf("--launches %d: at least %d per config are needed for any verdict", n, need)
	}
	naming, err := readNaming(c)
	if err != nil {
		return compareOptions{}, err
	}
	ab := studyrun.AB{Kind: vocab.KindCompare, Band: so.Band, BandText: so.Band.String(),
		Collective: string(so.Parts()[0].Op.OrAllReduce()), Base: a, Cand: b, GuardOps: so.GuardOps, GuardLaunches: so.GuardLaunches,
		GuardOpsSkipped: skipped}
	if so.Workload.ScoredByRounds() {
		ab.Parts = so.Workload
	}
	o := verifyOptions{VerifyOptions: studyrun.VerifyOptions{Launch: lo, Launches: c.Int("launches")}, cmdIO: ioOf(c, path), naming: naming}
	return compareOptions{verifyOptions: o, ab: ab}, nil
}

func runCompare(ctx context.Context, o compareOptions) error {
	if o.studies != nil {
		studies, err := stored.Load(o.db, o.studies, stored.ReviewLoad)
		if err != nil {
			return err
		}
		cmp, err := report.CompareStudies(report.Of(studies[0], launchstats.Figures{}), report.Of(studies[1], launchstats.Figures{}))
		if err != nil {
			return vocab.UsageError(err)
		}
		return ui.PrintStoredComparison(o.stdout, o.json, cmp)
	}
	st, err := openForLaunch(o.Launch, o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	return runInterleaved(ctx, st, o.verifyOptions, o.ab)
}
