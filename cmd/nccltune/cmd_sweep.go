package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:      "sweep",
		Usage:     "measure one config's whole curve (bus bandwidth and time per size)",
		ArgsUsage: " ",
		Description: `sweep runs the benchmark for one config over a range of sizes (doubling), once
or --repeats times, and prints per size the median time with its confidence
interval and the bus bandwidth. A first warm-up launch is stored but not
counted: the first launch after a fabric starts can be slow.

Examples:
  nccltune sweep --sim spark4
  nccltune sweep --sim spark4 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune sweep --launcher mpirun --np 2 --hosts a,b --min 8M --max 4G --repeats 5`,
		Flags: append([]cli.Flag{
			launchflags.EnvFlag("NCCL knob `K=V` of the config to measure, repeatable (none: NCCL's defaults)"),
			flagvalue.Size("min", "32K", "smallest size (nccl-tests -b)"),
			flagvalue.Size("max", "256M", "largest size (nccl-tests -e)"),
			&cli.IntFlag{Name: "repeats", Value: 1, Usage: "launches to measure (medians and intervals over launches)"},
			noWarmupFlag(),
			jsonFlag(),
		}, append(namingFlags(), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("sweep takes no arguments (got %q); set knobs with --env K=V", c.Args().First())
			}
			o, err := readSweepFlags(c)
			if err != nil {
				return err
			}
			if o.naming, err = readNaming(c); err != nil {
				return err
			}
			return runSweep(c.Context, o)
		},
	}
}

type sweepOptions struct {
	measureOptions
	min, max int64
}

func readSweepFlags(c *cli.Context) (sweepOptions, error) {
	m, err := readMeasureFlags(c)
	if err != nil {
		return sweepOptions{}, err
	}
	o := sweepOptions{measureOptions: m}
	if o.min, o.max, err = flagvalue.SizeRange(c); err != nil {
		return sweepOptions{}, err
	}
	if err := checkRepeats(o.repeats); err != nil {
		return sweepOptions{}, err
	}
	return o, nil
}

func runSweep(ctx context.Context, o sweepOptions) error {
	st, err := openForLaunch(o.launch, o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := studyrun.Sweep(ctx, st, o.min, o.max, o.repeat(ui.SweepStarted(o.stderr, o.config, o.min, o.max)))
	if err != nil {
		return err
	}
	return ui.PrintSweep(o.stdout, o.json, r.Study, o.config, len(r.Launches), studyrun.SweepLaunchesForInterval(), r.Rows)
}
