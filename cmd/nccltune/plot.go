package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw a study: its curves, per-size speedup, landscape or convergence",
		ArgsUsage: "STUDY|STUDY/TRIAL…",
		Description: `plot draws one figure of a study (--figure picks which):

  curves       bus bandwidth (GB/s; --metric time: µs on a log axis) against
               message size on a log2 axis, one line per config with its
               interval, the searched band shaded over exactly its sizes and
               the guard sizes marked. The default.
  speedup      per size, NCCL defaults' median time ÷ the confirmed config's,
               with its interval and "~" where not significant: the per-size
               table as a picture.
  landscape    every config the search measured, ranked by band score with
               its interval, coloured by the knob that matters most.
  convergence  the leader's score and interval against launches spent, NCCL
               defaults' beside it, the confirmation phase shaded.

For curves, a bare search STUDY means what decided: NCCL defaults and the
confirmed config over the interleaved confirmation launches, the same
launches and medians as the verdict and the tables (--explore adds their
exploration launches, marked as such). --all draws every trial of it, all its
launches pooled, the best few in colour and the rest grey. STUDY/NUMBER names
one trial (s3-512K-4M/7; nccltune show STUDY --trials lists the numbers).
Arguments from several studies share one plot. A sweep or an import draws
every trial. Legends name configs as the exports write them.

The file's extension picks the format: .png (1200 pixels wide; --dpi
changes that) or .svg.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the plot to `FILE` (.png or .svg)"},
			&cli.StringFlag{Name: "figure", Value: figureCurves, Usage: "which figure: curves, speedup, landscape or convergence"},
			&cli.StringFlag{Name: "metric", Value: report.MetricBusBW, Usage: "curves of busbw (GB/s) or time (µs, log scale)"},
			&cli.BoolFlag{Name: "all", Usage: "curves of every trial of each STUDY named, not only NCCL defaults and the confirmed config"},
			&cli.BoolFlag{Name: "explore", Usage: "add the exploration launches of NCCL defaults and the confirmed config to their curves, marked as such"},
			&cli.IntFlag{Name: "dpi", Value: report.PNGDPI, Usage: "PNG resolution in dots per inch: 150 makes the curves 1200 pixels wide, 100 makes them 800"},
			&cli.BoolFlag{Name: "json", Usage: "print the plotted numbers as one JSON document on stdout"},
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
			figure, metric := c.String("figure"), c.String("metric")
			if !slices.Contains(figureKinds, figure) {
				return usageErrorf("--figure %s is not a figure: use %s", figure, strings.Join(figureKinds, ", "))
			}
			if metric != report.MetricBusBW && metric != report.MetricTime {
				return usageErrorf("--metric %s is not a metric: use busbw or time", metric)
			}
			if figure != figureCurves && (c.Bool("all") || c.Bool("explore") || c.IsSet("metric")) {
				return usageErrorf("--all, --explore and --metric shape the curves figure; --figure %s takes none of them", figure)
			}
			if dpi := c.Int("dpi"); dpi < 30 || dpi > 600 {
				return usageErrorf("--dpi %d is outside 30–600 (150 makes the curves 1200 pixels wide)", dpi)
			}
			if figure != figureCurves && c.NArg() != 1 {
				return usageErrorf("--figure %s draws one STUDY (got %d arguments)", figure, c.NArg())
			}
			db, err := dbPath(c)
			if err != nil {
				return err
			}
			return runPlot(c.Context, plotOptions{db: db, targets: c.Args().Slice(), all: c.Bool("all"), explore: c.Bool("explore"),
				figure: figure, metric: metric, dpi: c.Int("dpi"),
				out: out, format: format, json: c.Bool("json"), stdout: c.App.Writer, stderr: c.App.ErrWriter})
		},
	}
}

// The figures plot draws.
const (
	figureCurves      = "curves"
	figureSpeedup     = "speedup"
	figureLandscape   = "landscape"
	figureConvergence = "convergence"
)

var figureKinds = []string{figureCurves, figureSpeedup, figureLandscape, figureConvergence}

// allHighlight is how many configs besides NCCL defaults and the
// confirmed one --all draws in colour; the rest are grey.
const allHighlight = 5

type plotOptions struct {
	db      string
	targets []string
	all     bool
	explore bool
	figure  string
	metric  string
	dpi     int
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
	if o.figure != "" && o.figure != figureCurves {
		return runStudyFigure(o)
	}
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
	loaded, err := loadStudies(o.db, queries, reviewLoad)
	if err != nil {
		return err
	}
	byQuery := map[string]*report.Study{}
	for i, q := range queries {
		byQuery[q] = loaded[i]
	}
	var fig report.Figure
	var curves []report.Curve
	var studies []*report.Study
	if len(targets) == 1 && targets[0].trial < 0 && !o.all {
		// One bare study: the figure of what decided.
		s := byQuery[targets[0].study]
		if fig, err = s.DecisionFigure(o.metric, o.explore); err != nil {
			return err
		}
		curves, studies = fig.Curves, []*report.Study{s}
	} else {
		if curves, studies, err = plotCurves(targets, byQuery, o.all, o.explore, o.stderr); err != nil {
			return err
		}
		fig = report.NewFigure(curves, studies...)
		fig.Metric = o.metric
		if o.all {
			fig.Subtitle = []string{"every config, all its launches pooled (exploration included): context, not the verdict"}
		}
	}
	if err := writeOut(o.out, func(w io.Writer) error { return fig.WriteAt(w, o.format, o.dpi) }); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "wrote %s: %s of %s%s\n", o.out, report.Plural(len(curves), "curve"), joinStudyNames(studies), simulatedSuffix(studies))
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "figure": figureCurves, "metric": fig.Metric,
			"subtitle": fig.Subtitle, "simulated": fig.Simulated != "", "curves": ui.CurvesJSON(curves)})
	}
	return nil
}

// runStudyFigure draws the speedup, landscape or convergence figure of
// one study.
func runStudyFigure(o plotOptions) error {
	t, err := parsePlotTarget(o.targets[0])
	if err != nil {
		return usageError(err)
	}
	if t.trial >= 0 {
		return usageErrorf("--figure %s draws a whole study: name it without /TRIAL (%s)", o.figure, t.study)
	}
	s, err := readStudy(o.db, t.study)
	if err != nil {
		return err
	}
	var fig report.Drawing
	var data any
	switch o.figure {
	case figureSpeedup:
		f, err := s.SpeedupFigure()
		if err != nil {
			return err
		}
		fig, data = f, f.Comparison
	case figureLandscape:
		f, err := s.Landscape()
		if err != nil {
			return err
		}
		fig, data = f, ui.LandscapeJSON(f)
	case figureConvergence:
		f, err := s.Convergence()
		if err != nil {
			return err
		}
		fig, data = f, ui.ConvergenceJSON(f)
	}
	if err := writeOut(o.out, func(w io.Writer) error { return fig.WriteAt(w, o.format, o.dpi) }); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "wrote %s: the %s of %s%s\n", o.out, o.figure, s.Name(), simulatedSuffix([]*report.Study{s}))
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "figure": o.figure, "study": s.Name(),
			"simulated": s.Study.Simulated, o.figure: data})
	}
	return nil
}

// plotCurves resolves the targets to curves, in the order named, each
// trial once. A trial named explicitly must have a successful launch; one
// picked by a bare study or --all is left out (and said so) when it has
// none.
func plotCurves(targets []plotTarget, byQuery map[string]*report.Study, all, explore bool, stderr io.Writer) ([]report.Curve, []*report.Study, error) {
	var curves []report.Curve
	var studies []*report.Study
	drawn := map[*store.Trial]bool{}
	usedStudy := map[*report.Study]bool{}
	for _, t := range targets {
		s := byQuery[t.study]
		var picked []*store.Trial
		explicit := t.trial >= 0
		if !explicit && (all || s.Study.Kind != vocab.KindSearch) {
			highlight := 0 // a sweep or an import: every trial in colour
			if all {
				highlight = allHighlight
			}
			cs, err := s.AllCurves(highlight)
			if err != nil {
				return nil, nil, err
			}
			inFigure := map[int]bool{}
			for _, c := range cs {
				inFigure[c.Trial] = true
				if tr := s.TrialByNumber(c.Trial); tr != nil && !drawn[tr] {
					drawn[tr] = true
					curves = append(curves, c)
				}
			}
			var skipped []string
			for _, tr := range s.Trials {
				if !inFigure[tr.Number] {
					skipped = append(skipped, strconv.Itoa(tr.Number))
				}
			}
			if len(skipped) > 0 {
				fmt.Fprintf(stderr, "%s: left out %s with no successful launch (%s)\n", s.Name(), report.Plural(len(skipped), "trial"), strings.Join(skipped, ", "))
			}
			if len(cs) > 0 && !usedStudy[s] {
				usedStudy[s] = true
				studies = append(studies, s)
			}
			continue
		}
		if !explicit {
			cs, err := s.DecisionCurves(explore)
			if err == nil {
				for _, c := range cs {
					if tr := s.TrialByNumber(c.Trial); tr != nil {
						drawn[tr] = true
					}
				}
				curves = append(curves, cs...)
				if !usedStudy[s] {
					usedStudy[s] = true
					studies = append(studies, s)
				}
				continue
			}
		}
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
	if s.Study.Kind != vocab.KindSearch {
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
