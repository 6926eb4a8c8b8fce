package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
)

// launchOptions are the launch flags as read by launchflags.Read.
type launchOptions struct {
	spec runner.Spec
	// simulated is true when --sim was given.
	simulated bool
	seed      int64
}

// readLaunchFlags reads the launch flags (internal/launchflags).
func readLaunchFlags(c *cli.Context) (launchOptions, error) {
	l, err := launchflags.Read(c)
	return launchOptions{spec: l.Spec, simulated: l.Simulated, seed: l.Seed}, err
}

// measureOptions are what the commands that measure one config
// repeatedly (sweep, gate) share.
type measureOptions struct {
	launch  launchOptions
	config  nccl.Config // --env
	repeats int
	warmup  bool // not --no-warmup
	json    bool
	db      string
	stdout  io.Writer
	stderr  io.Writer
	naming  studyNaming
}

// readMeasureFlags reads the launch flags, --env, --repeats (checked by
// the caller, checkRepeats), --no-warmup, --json and the database.
func readMeasureFlags(c *cli.Context) (measureOptions, error) {
	lo, err := readLaunchFlags(c)
	if err != nil {
		return measureOptions{}, err
	}
	cfg, err := launchflags.ReadConfig(c, "env", lo.spec.BaseEnv)
	if err != nil {
		return measureOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return measureOptions{}, err
	}
	return measureOptions{launch: lo, config: cfg, repeats: c.Int("repeats"), warmup: !c.Bool("no-warmup"),
		json: c.Bool("json"), db: path, stdout: c.App.Writer, stderr: c.App.ErrWriter}, nil
}

// checkRepeats refuses --repeats below one launch.
func checkRepeats(n int) error {
	if n < 1 {
		return usageErrorf("--repeats %d: measure at least once", n)
	}
	return nil
}

// noWarmupFlag is --no-warmup of the commands that measure one config
// repeatedly (sweep, gate).
func noWarmupFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-warmup", Usage: "skip the uncounted warm-up launch"}
}
