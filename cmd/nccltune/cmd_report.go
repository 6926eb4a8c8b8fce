package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write one self-contained HTML page about a study, to attach to a ticket",
		ArgsUsage: "STUDY",
		Description: `report writes one HTML file that needs nothing else to be read (CSS inline,
the figures inline as SVG, no scripts, nothing loaded from the network): the
verdict, why the confirmed config was chosen over any that scored better,
the figures of nccltune plot (bus bandwidth and time by message size over
the confirmation launches, the per-size speedup, the search's landscape and
its convergence), the per-size tables against NCCL's defaults, what NCCL
chose per size, the recommendation in every export format, the fabric, the
settings and every trial, best score first. A workload of several parts
(search --part) has each part's op in turn (figures and tables), its parts
and guarded ops as show prints them, and the launches per op and phase. A
study on the simulated fabric carries a SIMULATED banner.

STUDY is a name from nccltune history (s7-512K-4M), its number (7) or s7.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the report to `FILE` (.html)"},
			&cli.BoolFlag{Name: "json", Usage: "print what was written as one JSON document on stdout"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return vocab.UsageErrorf("report takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			out := c.String("out")
			if out == "" {
				return vocab.UsageErrorf("report needs --out FILE.html")
			}
			if ext := strings.ToLower(filepath.Ext(out)); ext != ".html" && ext != ".htm" {
				return vocab.UsageErrorf("report writes HTML: name the file .html (got %q)", out)
			}
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			return runReport(c.Context, reportOptions{cmdIO: ioOf(c, db), study: c.Args().First(), out: out})
		},
	}
}

type reportOptions struct {
	cmdIO
	study string
	out   string
}

func runReport(ctx context.Context, o reportOptions) error {
	one, err := stored.LoadOne(o.db, o.study)
	if err != nil {
		return err
	}
	data := report.Of(one, launchstats.Figures{})
	opt := report.HTMLOptions{Location: time.Local}
	opt.Exports, opt.ExportError = htmlExports(data)
	if err := outfile.WriteOut(o.out, func(w io.Writer) error { return report.WriteHTML(w, data, opt) }); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "wrote %s: the report of %s%s\n", o.out, data.Name(), simulatedSuffix([]*report.Study{data}))
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"out": o.out, "study": data.Name(), "simulated": data.Study.Simulated})
	}
	return nil
}

func htmlExports(s *report.Study) ([]report.ExportText, string) {
	rendered, err := export.RenderAll(s.Study, s.Trials, s.Launches, time.Time{})
	if err != nil {
		return nil, err.Error()
	}
	out := make([]report.ExportText, len(rendered))
	for i, r := range rendered {
		out[i] = report.ExportText(r)
	}
	return out, ""
}
