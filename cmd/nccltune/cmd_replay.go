package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "make and inspect replays: SIMULATED fabrics built from real launches (--sim replay:FILE)",
		Description: `A replay is a simulated fabric made of launches recorded in a store: replaying a
config resamples its recorded launches (whole launches, the per-iteration times
as measured), launch 0 returns the recorded cold launch, and NCCL's debug lines
print the recorded plan. A config that was not recorded, and has no recorded
equivalent, fails with "the replay … cannot speak for …". Everything a replay
prints is labelled SIMULATED (profile replay:NAME). See docs/SIMULATOR.md.

Use a store directly (--sim replay:rec.db, or --sim rec.db: a bbolt file is
recognised by its magic number; the doctor JSON files in its directory give
the plans), or build a compact replay file to commit:

  nccltune replay build rec.db --out loopback4.replay.json
  nccltune replay show loopback4.replay.json
  nccltune search --sim replay:loopback4.replay.json --band 512K-4M`,
		Subcommands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "write a replay file from a store of recorded launches and doctor outputs",
				ArgsUsage: "STORE.db",
				Description: `build groups the store's launches by config (canonical: equivalent spellings
fold together) across studies, orders them by time, marks the store's first
launch as the fabric's cold start, and takes each config's plan (NCCL's
algorithm, protocol and channels per size) from doctor outputs
('nccltune doctor --json --env K=V…', one per config; by default every JSON
file beside the store) or from launches with NCCL_DEBUG TUNING lines. Debug
launches give plans, not times.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Required: true, Usage: "replay `FILE` to write (JSON)"},
					&cli.StringSliceFlag{Name: "plans", Usage: "doctor --json output `FILE`s (repeatable; default: the *.json files beside the store)"},
					&cli.StringFlag{Name: "name", Usage: "the replay's `NAME` in outputs (default: the store's file name)"},
					&cli.StringFlag{Name: "note", Usage: "provenance `TEXT` added to the description (hardware, commands)"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return vocab.UsageErrorf("replay build takes one store (got %d arguments): nccltune replay build STORE.db --out FILE.json", c.NArg())
					}
					return runReplayBuild(c.Context, replayBuildOptions{cmdIO: ioOf(c, ""), store: c.Args().First(), out: c.String("out"),
						plans: c.StringSlice("plans"), name: c.String("name"), note: c.String("note")})
				},
			},
			{
				Name:      "show",
				Usage:     "list a replay's configs, launches and plans",
				ArgsUsage: "REPLAY.json|STORE.db",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return vocab.UsageErrorf("replay show takes one replay file or store (got %d arguments)", c.NArg())
					}
					return runReplayShow(c.Context, replayShowOptions{cmdIO: ioOf(c, ""), replay: c.Args().First()})
				},
			},
		},
	}
}

type replayBuildOptions struct {
	cmdIO
	store, out string   // the recorded store, and the replay file to write
	plans      []string // doctor --json files; none: those beside the store
	name, note string
}

func runReplayBuild(ctx context.Context, o replayBuildOptions) error {
	if _, err := os.Stat(o.store); err != nil {
		return vocab.UsageErrorf("replay build: %v", err)
	}
	rec, err := studyrun.RecordingOf(o.store)
	if err != nil {
		return vocab.UsageError(err)
	}
	b := sim.BuildOptions{Recording: rec, Plans: o.plans, Name: o.name, Note: o.note}
	if len(b.Plans) == 0 {
		b.Plans = sim.PlansBeside(o.store)
	}
	r, err := sim.BuildReplay(b)
	if err != nil {
		return vocab.UsageError(err)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}
	if err := outfile.WriteOut(o.out, write); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "replay %s: %s\nwrote %s (%d bytes); use it with --sim replay:%s\n",
		r.Name, r.Description, o.out, len(data)+1, o.out)
	return nil
}

type replayShowOptions struct {
	cmdIO
	replay string // a replay file or a store
}

func runReplayShow(ctx context.Context, o replayShowOptions) error {
	r, err := studyrun.LoadReplay(o.replay)
	if err != nil {
		return vocab.UsageError(err)
	}
	s := ui.ReplaySummary{Name: r.Name, Description: r.Description, Simulated: true, FromSimulated: r.FromSimulated,
		NRanks: r.NRanks, NCCLVersion: r.NCCLVersion, Transport: r.Transport, Channels: r.Channels, Sizes: r.Sizes}
	for _, c := range r.Configs {
		row := ui.ReplayConfigRow{Env: c.Env, Launches: len(c.Launches), Plan: c.Plan, PlanSource: c.PlanSource, MedianUS: r.Medians(c)}
		for _, l := range c.Launches {
			if l.Failed != "" {
				row.Failed++
			}
			row.Cold = row.Cold || l.Cold
		}
		s.Configs = append(s.Configs, row)
	}
	return ui.PrintReplay(o.stdout, o.json, s)
}
