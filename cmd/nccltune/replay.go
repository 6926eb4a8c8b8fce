package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/sim"
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
						return usageErrorf("replay build takes one store (got %d arguments): nccltune replay build STORE.db --out FILE.json", c.NArg())
					}
					return runReplayBuild(c.Args().First(), c.String("out"), c.StringSlice("plans"), c.String("name"), c.String("note"), c.App.ErrWriter)
				},
			},
			{
				Name:      "show",
				Usage:     "list a replay's configs, launches and plans",
				ArgsUsage: "REPLAY.json|STORE.db",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("replay show takes one replay file or store (got %d arguments)", c.NArg())
					}
					return runReplayShow(c.Args().First(), c.Bool("json"), c.App.Writer)
				},
			},
		},
	}
}

func runReplayBuild(storePath, out string, plans []string, name, note string, stderr io.Writer) error {
	if _, err := os.Stat(storePath); err != nil {
		return usageErrorf("replay build: %v", err)
	}
	o := sim.BuildOptions{Store: storePath, Plans: plans, Name: name, Note: note}
	if len(o.Plans) == 0 {
		o.Plans = sim.PlansBeside(storePath)
	}
	r, err := sim.BuildReplay(o)
	if err != nil {
		return usageError(err)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := writeOut(out, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "replay %s: %s\nwrote %s (%d bytes); use it with --sim replay:%s\n", r.Name, r.Description, out, len(data)+1, out)
	return nil
}

// replaySummary is `replay show --json`.
type replaySummary struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Simulated     bool              `json:"simulated"`
	FromSimulated bool              `json:"from_simulated"`
	NRanks        int               `json:"nranks"`
	NCCLVersion   string            `json:"nccl_version"`
	Transport     string            `json:"transport"`
	Channels      int               `json:"channels"`
	Sizes         []int64           `json:"sizes"`
	Configs       []replayConfigRow `json:"configs"`
}

type replayConfigRow struct {
	Env        nccl.Config    `json:"env"`
	Launches   int            `json:"launches"`
	Failed     int            `json:"failed"`
	Cold       bool           `json:"cold"`
	MedianUS   []float64      `json:"median_us"`
	Plan       []sim.PlanStep `json:"plan"`
	PlanSource string         `json:"plan_source"`
}

func runReplayShow(path string, asJSON bool, w io.Writer) error {
	r, err := sim.LoadReplay(path)
	if err != nil {
		return usageError(err)
	}
	s := replaySummary{Name: r.Name, Description: r.Description, Simulated: true, FromSimulated: r.FromSimulated,
		NRanks: r.NRanks, NCCLVersion: r.NCCLVersion, Transport: r.Transport, Channels: r.Channels, Sizes: r.Sizes}
	for _, c := range r.Configs {
		row := replayConfigRow{Env: c.Env, Launches: len(c.Launches), Plan: c.Plan, PlanSource: c.PlanSource, MedianUS: r.Medians(c)}
		for _, l := range c.Launches {
			if l.Failed != "" {
				row.Failed++
			}
			row.Cold = row.Cold || l.Cold
		}
		s.Configs = append(s.Configs, row)
	}
	if asJSON {
		return ui.WriteJSON(w, s)
	}
	fmt.Fprintf(w, "replay %s  [SIMULATED fabric: replay of recorded launches]\n  %s\n", r.Name, r.Description)
	fmt.Fprintf(w, "  %d ranks, NCCL %s, %s, %d channels\n\n", r.NRanks, r.NCCLVersion, r.Transport, r.Channels)
	var sizes []string
	for _, b := range r.Sizes {
		sizes = append(sizes, fmt.Sprintf("%9s", nccl.FormatSize(b)))
	}
	fmt.Fprintf(w, "%-40s %8s  %s  (median µs)  plan\n", "config", "launches", strings.Join(sizes, ""))
	for _, row := range s.Configs {
		name := row.Env.String()
		n := fmt.Sprint(row.Launches)
		if row.Cold {
			n += "*"
		}
		if row.Failed > 0 {
			n += fmt.Sprintf(" (%d failed)", row.Failed)
		}
		var meds []string
		for _, m := range row.MedianUS {
			meds = append(meds, fmt.Sprintf("%9.1f", m))
		}
		fmt.Fprintf(w, "%-40s %8s  %s  %s\n", name, n, strings.Join(meds, ""), planText(row.Plan))
	}
	fmt.Fprintln(w, "\n* holds the recorded cold first launch of the fabric")
	return nil
}

// planText summarises a plan: the distinct choices with the sizes they cover.
func planText(plan []sim.PlanStep) string {
	var parts []string
	for i := 0; i < len(plan); {
		j := i
		for j+1 < len(plan) && plan[j+1].Algo == plan[i].Algo && plan[j+1].Proto == plan[i].Proto && plan[j+1].Channels == plan[i].Channels {
			j++
		}
		rng := nccl.FormatSize(plan[i].Bytes)
		if j > i {
			rng += "-" + nccl.FormatSize(plan[j].Bytes)
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s/%d", rng, plan[i].Algo, plan[i].Proto, plan[i].Channels))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// resolveSimArg makes a --sim value that names a replay absolute (the
// simulator process may run elsewhere) and checks that the replay loads,
// so a bad recording is a usage error before any study starts.
func resolveSimArg(profile string) (string, error) {
	if !sim.IsReplay(profile) {
		return profile, nil
	}
	abs, err := filepath.Abs(sim.ReplayPath(profile))
	if err != nil {
		return "", usageErrorf("--sim %s: %v", profile, err)
	}
	arg := sim.ReplayPrefix + abs
	if _, err := sim.LoadReplay(arg); err != nil {
		return "", usageErrorf("--sim %s: %v", profile, err)
	}
	return arg, nil
}
