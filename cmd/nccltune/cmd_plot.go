package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
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
A bare study of a workload of several parts (search --part) draws one panel
per op in the one file, each op's launches against its own band (curves and
--figure speedup); its trials' curves are its first op's.
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
				return vocab.UsageErrorf("plot takes one or more STUDY or STUDY/TRIAL arguments (e.g. nccltune plot s1-512K-4M --out s1.png); nccltune history lists the studies")
			}
			out := c.String("out")
			if out == "" {
				return vocab.UsageErrorf("plot needs --out FILE.png or --out FILE.svg")
			}
			format, err := report.FormatOf(out)
			if err != nil {
				return vocab.UsageError(err)
			}
			figure, metric := c.String("figure"), c.String("metric")
			if !slices.Contains(figureKinds, figure) {
				return vocab.UsageErrorf("--figure %s is not a figure: use %s", figure, strings.Join(figureKinds, ", "))
			}
			if metric != report.MetricBusBW && metric != report.MetricTime {
				return vocab.UsageErrorf("--metric %s is not a metric: use busbw or time", metric)
			}
			if figure != figureCurves && (c.Bool("all") || c.Bool("explore") || c.IsSet("metric")) {
				return vocab.UsageErrorf("--all, --explore and --metric shape the curves figure; --figure %s takes none of them", figure)
			}
			if dpi := c.Int("dpi"); dpi < 30 || dpi > 600 {
				return vocab.UsageErrorf("--dpi %d is outside 30–600 (150 makes the curves 1200 pixels wide)", dpi)
			}
			if figure != figureCurves && c.NArg() != 1 {
				return vocab.UsageErrorf("--figure %s draws one STUDY (got %d arguments)", figure, c.NArg())
			}
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			return runPlot(c.Context, plotOptions{cmdIO: ioOf(c, db), targets: c.Args().Slice(),
				all: c.Bool("all"), explore: c.Bool("explore"),
				figure: figure, metric: metric, dpi: c.Int("dpi"), out: out, format: format})
		},
	}
}

type plotOptions struct {
	cmdIO
	targets []string
	all     bool
	explore bool
	figure  string
	metric  string
	dpi     int
	out     string
	format  string
}

func runPlot(ctx context.Context, o plotOptions) error {
	if o.figure != figureCurves {
		return runStudyFigure(o)
	}
	drawing, studies, err := loadCurves(o.db, o.targets, curvesOptions{Metric: o.metric, All: o.all, Explore: o.explore, Warn: o.stderr})
	if err != nil {
		return err
	}
	if err := outfile.WriteOut(o.out, func(w io.Writer) error { return drawing.WriteAt(w, o.format, o.dpi) }); err != nil {
		return err
	}
	if p, ok := drawing.(report.Panels); ok {
		return reportPanels(o, p, studies)
	}
	fig := drawing.(report.Figure)
	fmt.Fprintf(o.stderr, "wrote %s: %s of %s%s\n", o.out, texttable.Plural(len(fig.Curves), "curve"), studyNames(studies), simulatedSuffix(studies))
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "figure": figureCurves, "metric": fig.Metric,
			"subtitle": fig.Subtitle, "simulated": fig.Simulated != "", "curves": ui.CurvesJSON(fig.Curves)})
	}
	return nil
}

// reportPanels says what plot drew of a workload of several parts, one
// panel per op.
func reportPanels(o plotOptions, p report.Panels, studies []*report.Study) error {
	n := 0
	for _, f := range p.Figures {
		n += len(f.(report.Figure).Curves)
	}
	fmt.Fprintf(o.stderr, "wrote %s: %s of %s, one panel per op (%s)%s\n", o.out, texttable.Plural(n, "curve"), studyNames(studies),
		nccl.JoinOps(p.Ops), simulatedSuffix(studies))
	if !o.json {
		return nil
	}
	panels, curves := []map[string]any{}, []map[string]any{}
	for i, panel := range p.Figures {
		f := panel.(report.Figure)
		cs := ui.CurvesJSON(f.Curves)
		for _, c := range cs {
			c["op"] = p.Ops[i]
		}
		panels = append(panels, map[string]any{"op": p.Ops[i], "subtitle": f.Subtitle, "curves": cs})
		curves = append(curves, cs...)
	}
	first := p.Figures[0].(report.Figure)
	return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "figure": figureCurves, "metric": first.Metric,
		"simulated": first.Simulated != "", "ops": p.Ops, "panels": panels, "curves": curves})
}

// runStudyFigure draws the speedup, landscape or convergence figure of
// one study.
func runStudyFigure(o plotOptions) error {
	fig, s, err := loadStudyFigure(o.db, o.targets[0], o.figure)
	if err != nil {
		return err
	}
	if err := outfile.WriteOut(o.out, func(w io.Writer) error { return fig.WriteAt(w, o.format, o.dpi) }); err != nil {
		return err
	}
	perOp := ""
	if p, ok := fig.(report.Panels); ok {
		perOp = ", one panel per op (" + nccl.JoinOps(p.Ops) + ")"
	}
	fmt.Fprintf(o.stderr, "wrote %s: the %s of %s%s%s\n", o.out, o.figure, s.Name(), perOp, simulatedSuffix([]*report.Study{s}))
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "format": o.format, "figure": o.figure, "study": s.Name(),
			"simulated": s.Study.Simulated, o.figure: ui.FigureJSON(fig)})
	}
	return nil
}
