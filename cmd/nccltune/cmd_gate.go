package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func gateCommand() *cli.Command {
	return &cli.Command{
		Name:      "gate",
		Usage:     "pass or fail a fabric on bus-bandwidth thresholds at given sizes (exit 0 pass, 1 fail, 3 fabric failed)",
		ArgsUsage: " ",
		Description: `gate measures one config (the base env plus --env) with --repeats launches, after
one uncounted warm-up launch, and passes only if every --at SIZE:GBPS holds: the
bus bandwidth at SIZE is at least GBPS GB/s. Per size the bus bandwidth comes
from the median over launches of each launch's median time (busbw = nccl-tests'
own busbw/algbw factor × bytes / time), with a 90 % order-statistic interval
whose ends are each a one-sided 95 % bound.

It judges on the median by default: the median is the number people post and
the one gates in the field are written from. The seed's gate (22 GB/s at 256 MiB)
sits within the noise of a healthy fabric's plateau (~22.1–22.3 GB/s), so a
lower bound would fail that fabric about as often as not. --judge lower-bound
judges on the one-sided 95 % lower bound instead: the conservative choice for a
gate that protects production, meant for thresholds set with margin; it needs
at least 5 launches.

Exit status: 0 every size holds, 1 a size misses its threshold, 3 a launch
failed, hung or returned wrong results (the fabric failed; doctor's diagnosis of
that launch is printed).

Examples:
  nccltune gate --at 1M:9 --at 256M:22
  nccltune gate --sim spark4 --at 1M:9 --at 256M:22 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune gate --launcher mpirun --np 4 --hosts s5:1,s6:1,s7:1,s8:1 --base-env-file lane.env --at 1M:9 --at 256M:22 --judge lower-bound`,
		Flags: append([]cli.Flag{
			flagvalue.Thresholds("threshold `SIZE:GBPS`, repeatable: at SIZE (a power of two) at least GBPS GB/s bus bandwidth, e.g. 1M:9"),
			launchflags.EnvFlag("NCCL knob `K=V` of the config to gate, repeatable (none: NCCL's defaults under the base env)"),
			&cli.IntFlag{Name: "repeats", Value: 5, Usage: "launches that count (medians and intervals over launches)"},
			noWarmupFlag(),
			&cli.StringFlag{Name: "judge", Value: "median", Usage: "judge each size on `BASIS`: median (default) or lower-bound (its one-sided 95 % lower confidence bound)"},
			jsonFlag(),
		}, append(namingFlags(), launchflags.Flags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("gate takes no arguments (got %q); give thresholds with --at SIZE:GBPS", c.Args().First())
			}
			o, err := readGateFlags(c)
			if err != nil {
				return err
			}
			if o.naming, err = readNaming(c); err != nil {
				return err
			}
			return runGate(c.Context, o)
		},
	}
}

type gateOptions struct {
	measureOptions
	thresholds []fabric.Threshold
	basis      fabric.Basis
}

func readGateFlags(c *cli.Context) (gateOptions, error) {
	ths, err := fabric.ParseThresholds(flagvalue.Items(c, "at"))
	if err != nil {
		return gateOptions{}, vocab.UsageError(fmt.Errorf("--at: %w", err))
	}
	basis, err := fabric.ParseBasis(c.String("judge"))
	if err != nil {
		return gateOptions{}, vocab.UsageError(fmt.Errorf("--judge %w", err))
	}
	repeats := c.Int("repeats")
	if err := checkRepeats(repeats); err != nil {
		return gateOptions{}, err
	}
	if need := studyrun.GateMinLaunchesForLowerBound(); basis == fabric.OnLowerBound && repeats < need {
		return gateOptions{}, vocab.UsageErrorf("--judge lower-bound needs at least %d launches for a one-sided 95 %% bound; raise --repeats to %d or judge on the median", need, need)
	}
	m, err := readMeasureFlags(c)
	if err != nil {
		return gateOptions{}, err
	}
	return gateOptions{measureOptions: m, thresholds: ths, basis: basis}, nil
}

func runGate(ctx context.Context, o gateOptions) error {
	st, err := openForLaunch(o.launch, o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := studyrun.Gate(ctx, st, o.thresholds, o.basis, o.repeat(ui.GateStarted(o.stderr, o.config, o.thresholds)))
	if err != nil {
		return err
	}
	rep := studyrun.GateReportOf(r, o.config, o.launch.Spec.BaseEnv)
	var failed error
	if rep.FabricFailed {
		failed = vocab.Mark(vocab.ErrFabric, fmt.Errorf("gate %s: %s", rep.Study, rep.Failure))
		e := errorJSON(failed)
		rep.Error = &e
	} else if !rep.Pass {
		failed = errCheckFailed
	}
	if err := ui.PrintGate(o.stdout, o.json, rep, o.config); err != nil {
		return err
	}
	return failed
}
