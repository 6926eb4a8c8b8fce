package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list the studies in the database",
		ArgsUsage: " ",
		Description: `history lists every study: its kind (search, sweep, import), band, whether
the fabric was SIMULATED, how many trials and launches it holds, its status
and its recommendation. It opens the database read-only, so it works while
a search is running. See one study with: nccltune show STUDY`,
		Flags: []cli.Flag{
			jsonFlag(),
			labelFlag("only studies labelled `K=V` (as given to --label), repeatable: all must match"),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("history takes no arguments (got %q); to see one study: nccltune show %s", c.Args().First(), c.Args().First())
			}
			want, err := readNaming(c)
			if err != nil {
				return err
			}
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			return runHistory(c.Context, historyOptions{cmdIO: ioOf(c, db), labels: want.labels})
		},
	}
}

type historyOptions struct {
	cmdIO
	labels map[string]string
}

func runHistory(ctx context.Context, o historyOptions) error {
	sums, err := stored.ListStudies(o.db, o.labels)
	if err != nil {
		return err
	}
	return ui.PrintHistory(o.stdout, o.json, sums, time.Local)
}
