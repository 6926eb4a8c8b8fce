package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one study: its settings, fabric, recommendation and trials",
		ArgsUsage: "STUDY",
		Description: `show prints a study's settings (band, space, base env, launch flags), the
fabric it ran on, its status and its recommendation; --trials adds every
trial with its env, state, launches and score. STUDY is a name from
nccltune history (s7-512K-4M), its number (7) or s7. The database is
opened read-only, so show works while a search is running.

` + ui.ScoreDefinition + `
For a workload of several parts or calls, SCORE is over rounds (one
launch of each op), each round's objective (a workload of calls: its
time per step), as the line under show --trials says.
The same score, over the same launches, is in show --json (score_us,
scored_launches), --format csv and the report's trials table and
landscape. The verdict's "band score … → …" is the
confirmation's: over the interleaved launches that decided. The CSV of
--curves numbers launches from 1, as search's progress does.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "trials", Usage: "list every trial"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout (trials always included)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "`FORMAT`: text, json, or csv (one row per trial; with --curves one row per launch and size)"},
			&cli.BoolFlag{Name: "curves", Usage: "with --format csv: every launch's time and bandwidth per size, of every op (its op column), instead of the trials"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return vocab.UsageErrorf("show takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			format := c.String("format")
			switch {
			case format != "text" && format != "json" && format != "csv":
				return vocab.UsageErrorf("--format %s: use text, json or csv", format)
			case c.Bool("json") && c.IsSet("format") && format != "json":
				return vocab.UsageErrorf("--json and --format %s ask for different formats: pass one of them", format)
			case c.Bool("curves") && format != "csv":
				return vocab.UsageErrorf("--curves is for --format csv")
			}
			o := showOptions{cmdIO: ioOf(c, db), study: c.Args().First(),
				trials: c.Bool("trials"), csv: format == "csv", curves: c.Bool("curves")}
			o.json = o.json || format == "json"
			return runShow(c.Context, o)
		},
	}
}

type showOptions struct {
	cmdIO
	study  string
	trials bool
	csv    bool
	curves bool
}

func runShow(ctx context.Context, o showOptions) error {
	data, err := stored.LoadOne(o.db, o.study)
	if err != nil {
		return err
	}
	return ui.PrintShow(o.stdout, report.Of(data, launchstats.Figures{}), ui.ShowFormat{JSON: o.json, CSV: o.csv, Curves: o.curves, Trials: o.trials, Location: time.Local})
}
