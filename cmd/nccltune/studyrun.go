package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

// preflight refuses a launch that cannot start (no benchmark, no mpirun,
// a bad spec) before a command opens the database, so no study is stored
// for it.
func preflight(lo launchOptions) error {
	err := runner.Preflight(lo.spec)
	if err == nil || errors.Is(err, vocab.ErrFabric) {
		return err
	}
	return usageError(err)
}

// dbPath is --db (or NCCLTUNE_DB), else the default under the user's data dir.
func dbPath(c *cli.Context) (string, error) {
	if p := c.String("db"); p != "" {
		return p, nil
	}
	p, err := store.DefaultPath()
	if err != nil {
		return "", fmt.Errorf("finding the default database location: %w; pass --db FILE", err)
	}
	return p, nil
}

// run is how studyrun launches with these options.
func (lo launchOptions) run() studyrun.Launch {
	return studyrun.Launch{Spec: lo.spec, Simulated: lo.simulated, Seed: lo.seed}
}
