package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-measure a study's recommendation against its baseline (NCCL's defaults, or --baseline-env), fresh and interleaved",
		ArgsUsage: "STUDY",
		Description: `verify checks a recommendation independently of the search that made it:
new launches of NCCL's defaults and of the recommended env, alternating
(B C B C …, --launches each, after one uncounted warm-up), compared with
the same statistics as the search. It says whether the fresh speedup and
its interval agree with what the search claimed. Use it after a search,
after a driver or NCCL upgrade, or before changing a serving recipe.

Examples:
  nccltune verify s3-512K-4M --sim spark4
  nccltune verify s3-512K-4M --launches 10 --launcher mpirun --np 2 --hosts a,b
  nccltune verify s3-512K-4M --baseline-env NCCL_PROTO=^LL128 --baseline-env NCCL_MAX_NCHANNELS=8 --sim spark4`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "launches", Value: 10, Usage: "interleaved launches per arm"},
			launchflags.EnvFlag("verify this `K=V` config instead of the study's recommendation (repeatable)"),
			jsonFlag(),
		}, append(launchflags.BaselineFlags(), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("verify takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			lo, err := readLaunchFlags(c)
			if err != nil {
				return err
			}
			cfg, err := launchflags.ReadConfig(c, "env", lo.spec.BaseEnv)
			if err != nil {
				return err
			}
			min := model.MinLaunchesForDecision(model.DefaultOptions())
			if c.Int("launches") < min {
				return usageErrorf("--launches %d: at least %d per arm are needed for any verdict", c.Int("launches"), min)
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			baseline, err := launchflags.ReadBaseline(c, lo.spec.BaseEnv)
			if err != nil {
				return err
			}
			return runVerify(c.Context, verifyOptions{launch: lo, study: c.Args().First(), config: cfg,
				launches: c.Int("launches"), json: c.Bool("json"), db: path, stdout: c.App.Writer, stderr: c.App.ErrWriter,
				baseline: baseline, baselineSet: c.IsSet("baseline-env") || c.IsSet("baseline-env-file")})
		},
	}
}

type verifyOptions struct {
	launch   launchOptions
	study    string
	config   nccl.Config
	launches int
	json     bool
	db       string
	stdout   io.Writer
	stderr   io.Writer
	// baseline is --baseline-env (baselineSet when given).
	baseline    nccl.Config
	baselineSet bool
	naming      studyNaming
}

func runVerify(ctx context.Context, o verifyOptions) error {
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	ab, err := studyrun.PlanVerify(st, studyrun.VerifyOptions{Study: o.study, Config: o.config, Baseline: o.baseline, BaselineSet: o.baselineSet,
		Launch: o.launch.run(), CheckRelaunch: func(study *store.Study) error {
			return launchflags.CheckRelaunch(study, "verify", o.launch.run(), o.stderr)
		}})
	if err != nil {
		return err
	}
	return runInterleaved(ctx, st, o, ab)
}

// runInterleaved runs verify's or compare's interleaved comparison
// (studyrun.RunAB) and prints it.
func runInterleaved(ctx context.Context, st *store.Store, o verifyOptions, ab studyrun.AB) error {
	// Every launch measures the comparison's op (verify's is the study's:
	// CheckRelaunch has refused another --op).
	o.launch.spec.Op = nccl.Op(ab.Collective).OrAllReduce()
	// Nothing is stored for a launch that cannot start.
	if err := preflight(o.launch); err != nil {
		return err
	}
	r, err := studyrun.RunAB(ctx, st, ab, studyrun.ABOptions{Launch: o.launch.run(), Launches: o.launches, Name: o.naming.apply,
		Started: ui.ABStarted(o.stderr, ab, o.launches), Progress: ui.ABProgress(o.stderr)})
	if err != nil {
		return err
	}
	res := studyrun.VerifyResultOf(ab, r, o.launches)
	if err := ui.PrintVerify(o.stdout, o.json, r.Study, res); err != nil {
		return err
	}
	if ab.Claim != nil && !res.Consistent {
		return errCheckFailed // the claim did not hold: exit 1, as gate does
	}
	return nil
}
