package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw bus bandwidth against message size, with confidence bands",
		ArgsUsage: "STUDY|STUDY/TRIAL…",
		Description: `plot draws bus bandwidth (GB/s) against message size on a log2 axis, one
line per config with its confidence band, the searched band shaded and the
guard sizes marked. The legend names each config by its NCCL_* settings.

A bare STUDY means its baseline (NCCL defaults) and the trial it recommended
or confirmed; with --all, every trial of it that has a successful launch.
STUDY/NUMBER names one trial (s3-512K-4M/7; nccltune show STUDY --trials
lists the numbers). Arguments from several studies share one plot.

The file's extension picks the format: .png (1200 pixels wide) or .svg.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the plot to `FILE` (.png or .svg)"},
			&cli.BoolFlag{Name: "all", Usage: "plot every trial of each STUDY named, not only the baseline and the recommendation"},
			&cli.BoolFlag{Name: "json", Usage: "print the plotted curves as one JSON document on stdout"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("plot takes one or more STUDY or STUDY/TRIAL arguments (e.g. nccltune plot s1-512K-4M --out s1.png); nccltune history lists the studies")
			}
			out := c.String("out")
			if out == "" {
				return usageErrorf("plot needs --out FILE.png or --out FILE.svg")
			}
			format, err := report.FormatOf(out)
			if err != nil {
				return usageError(err)
			}
			db, err := dbPath(c)
			if err != nil {
				return err
			}
			return runPlot(c.Context, plotOptions{db: db, targets: c.Args().Slice(), all: c.Bool("all"),
				out: out, format: format, json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter})
		},
	}
}

type plotOptions struct {
	db      string
	targets []string
	all     bool
	out     string
	format  string
	json    bool
	stdout  io.Writer
	stderr  io.Writer
}

// plotTarget is one argument of plot: a study, or one trial of it.
type plotTarget struct {
	arg   string
	study string
	trial int // -1 for the bare study
}

// parsePlotTarget reads STUDY or STUDY/NUMBER.
func parsePlotTarget(arg string) (plotTarget, error) {
	t := plotTarget{arg: arg, study: arg, trial: -1}
	if i := strings.LastIndex(arg, "/"); i >= 0 {
		n, err := strconv.Atoi(arg[i+1:])
		if err != nil || n < 0 || i == 0 {
			return t, fmt.Errorf("%q is not STUDY or STUDY/TRIAL: the trial is its number, e.g. s3-512K-4M/7", arg)
		}
		t.study, t.trial = arg[:i], n
	}
	return t, nil
}

func runPlot(ctx context.Context, o plotOptions) error {
	var targets []plotTarget
	var queries []string
	seen := map[string]bool{}
	for _, a := range o.targets {
		t, err := parsePlotTarget(a)
		if err != nil {
			return usageError(err)
		}
		targets = append(targets, t)
		if !seen[t.study] {
			seen[t.study] = true
			queries = append(queries, t.study)
		}
	}
	loaded, err := loadStudies(o.db, queries)
	if err != nil {
		return err
	}
	byQuery := map[string]*report.Study{}
	for i, q := range queries {
		byQuery[q] = loaded[i]
	}
	curves, studies, err := plotCurves(targets, byQuery, o.all, o.stderr)
	if err != nil {
		return err
	}
	fig := report.NewFigure(curves, studies...)
	if err := writeFileWith(o.out, func(w io.Writer) error { return fig.Write(w, o.format) }); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "wrote %s: %s of %s%s\n", o.out, report.Plural(len(curves), "curve"), joinStudyNames(studies), simulatedSuffix(studies))
	if o.json {
		return writeJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "simulated": fig.Simulated != "", "curves": jsonCurves(curves)})
	}
	return nil
}

// plotCurves resolves the targets to curves, in the order named, each
// trial once. A trial named explicitly must have a successful launch; one
// picked by a bare study or --all is left out (and said so) when it has
// none.
func plotCurves(targets []plotTarget, byQuery map[string]*report.Study, all bool, stderr io.Writer) ([]report.Curve, []*report.Study, error) {
	var curves []report.Curve
	var studies []*report.Study
	drawn := map[*store.Trial]bool{}
	usedStudy := map[*report.Study]bool{}
	for _, t := range targets {
		s := byQuery[t.study]
		var picked []*store.Trial
		explicit := t.trial >= 0
		switch {
		case explicit:
			tr := s.TrialByNumber(t.trial)
			if tr == nil {
				return nil, nil, usageErrorf("study %s has no trial %d (it has %s, numbered from 0; nccltune show %s --trials lists them)",
					s.Name(), t.trial, report.Plural(len(s.Trials), "trial"), s.Name())
			}
			picked = []*store.Trial{tr}
		case all:
			picked = s.Trials
		default:
			picked = defaultPlotTrials(s)
		}
		var skipped []string
		for _, tr := range picked {
			if drawn[tr] {
				continue
			}
			c, err := s.TrialCurve(tr)
			if err != nil {
				if explicit {
					return nil, nil, err
				}
				skipped = append(skipped, strconv.Itoa(tr.Number))
				continue
			}
			drawn[tr] = true
			curves = append(curves, c)
			if !usedStudy[s] {
				usedStudy[s] = true
				studies = append(studies, s)
			}
		}
		if len(skipped) > 0 {
			fmt.Fprintf(stderr, "%s: left out %s with no successful launch (%s)\n", s.Name(), report.Plural(len(skipped), "trial"), strings.Join(skipped, ", "))
		}
	}
	if len(curves) == 0 {
		return nil, nil, fmt.Errorf("nothing to plot: %s %s no successful launch yet — run or resume the study first",
			strings.Join(targetArgs(targets), " "), map[bool]string{true: "has", false: "have"}[len(targets) == 1])
	}
	return curves, studies, nil
}

// defaultPlotTrials is what a bare study means: a search's baseline and
// the trial it recommended or confirmed; every trial of a sweep or import.
func defaultPlotTrials(s *report.Study) []*store.Trial {
	if s.Study.Kind != store.KindSearch {
		return s.Trials
	}
	var out []*store.Trial
	if b := s.Baseline(); b != nil {
		out = append(out, b)
	}
	if c := s.Candidate(); c != nil {
		out = append(out, c)
	}
	return out
}

func targetArgs(ts []plotTarget) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.arg
	}
	return out
}

func joinStudyNames(studies []*report.Study) string {
	names := make([]string, len(studies))
	for i, s := range studies {
		names[i] = s.Name()
	}
	return strings.Join(names, ", ")
}

func simulatedSuffix(studies []*report.Study) string {
	for _, s := range studies {
		if s.Study.Simulated {
			return " (SIMULATED fabric)"
		}
	}
	return ""
}

// jsonCurves maps NaN, which JSON cannot hold, to null.
func jsonCurves(cs []report.Curve) []map[string]any {
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		pts := make([]map[string]any, 0, len(c.Points))
		for _, p := range c.Points {
			pts = append(pts, map[string]any{"bytes": p.Bytes, "launches": p.Launches,
				"time_us": jsonNumber(p.TimeUS), "time_lo_us": jsonNumber(p.TimeLoUS), "time_hi_us": jsonNumber(p.TimeHiUS),
				"busbw": jsonNumber(p.BusBW), "busbw_lo": jsonNumber(p.BusBWLo), "busbw_hi": jsonNumber(p.BusBWHi)})
		}
		out = append(out, map[string]any{"study": c.Study, "trial": c.Trial, "label": c.Label, "env": nonNilMap(map[string]string(c.Config)),
			"launches": c.Launches, "interval": c.IntervalText(), "note": c.Note, "simulated": c.Simulated, "points": pts})
	}
	return out
}

// writeFileWith writes the file named by --out (see writeOutput for what
// happens to what already exists there).
func writeFileWith(path string, write func(io.Writer) error) error {
	if err := writeOutput(path, nil, write); err != nil {
		return fmt.Errorf("cannot write %s: %w; pass --out with a path you can write", path, unwrapPath(err))
	}
	return nil
}
