package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/internal/workload"
)

// workloadInputKind names the files workload reads, in its errors.
const workloadInputKind = "an NCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING) or NCCL Inspector output"

func workloadCommand() *cli.Command {
	return &cli.Command{
		Name:      "workload",
		Usage:     "read what a real process called (NCCL's COLL/TUNING log, NCCL Inspector JSON) and propose the workload to tune",
		ArgsUsage: "LOG…",
		Description: `workload reads the collective calls a real process made, as NCCL logs
them, and proposes the workload a search tunes for. Log a server with

  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING NCCL_DEBUG_FILE=/tmp/nccl.%h.%p python -m sglang.launch_server …

(COLL: one line per rank and call; TUNING: what NCCL chose; INIT: which
communicator is which across processes), then give workload the files:
one per process, or one output with NCCL's lines mixed in. NCCL
Inspector's JSON (NCCL_PROFILER_PLUGIN=…/libnccl-profiler-inspector.so
NCCL_INSPECTOR_ENABLE=1) adds execution times; a directory reads every
file in it, "-" reads standard input.

It prints per communicator (its rank count, the ranks that logged it) and
per collective the calls, each counted once however many ranks logged it,
the bytes, the share of the calls (of the time, with Inspector's times)
and the histogram of sizes in powers of two (nccl-tests' sizes: for
all-gather and reduce-scatter the whole buffer, NCCL's count times the
ranks). It proposes the workload of the communicators of one rank count:
every (op, size) they call with its number of calls, as logged
(OP:BYTES:CALLS, search's --calls), and writes it as a study config for
search --config (--out FILE). From the TUNING lines it also writes chose:
(search's --chose), what the process's own NCCL chose at each called size,
which the tuner CSV keeps where nothing was proven; none for a size logged
two ways, and none at all when NCCL_ALGO, NCCL_PROTO or a tuner plugin
forced the log's choices. Nothing is cut: the study weights each size
by its calls × the time the defaults take there, so rare large calls
count by their time. Calls of functions no nccl-tests benchmark runs
(Gather, Scatter) are named as left out.

Under CUDA graphs a call is logged when it is captured, not when the graph
replays: such counts say which sizes exist, not how often. workload flags
the calls it sees announced as captured ("Capture cuda graph begin" in
the server's own output) and, with --graph-captured, all of them.

Examples:
  nccltune workload /tmp/nccl.*
  nccltune workload /tmp/nccl.* --out workload.yaml --plot workload.png
  nccltune search --config workload.yaml <launch flags>`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the proposed workload as a study config to `FILE` (YAML, for search --config)"},
			&cli.StringFlag{Name: "plot", Usage: "draw the size histograms, the powers of two the calls are measured at shaded, to `FILE` (.png or .svg)"},
			// Kept, hidden, so that a script that still passes it hears why
			// it is gone rather than "flag provided but not defined".
			&cli.Float64Flag{Name: "coverage", Hidden: true},
			&cli.IntFlag{Name: "ranks", Usage: "propose for the communicators of `N` ranks (default: the rank count that makes the most calls)"},
			&cli.BoolFlag{Name: "graph-captured", Usage: "the process ran CUDA graphs: flag every count as a capture, not a replay count"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return vocab.UsageErrorf("workload needs the log files of a process, e.g. nccltune workload /tmp/nccl.* (log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING NCCL_DEBUG_FILE=/tmp/nccl.%%h.%%p)")
			}
			if c.IsSet("coverage") {
				return vocab.UsageErrorf("--coverage is gone: the proposal holds every call the process makes, as logged (a cut by calls left out the few large calls that took a quarter of the time); drop --coverage")
			}
			if n := c.Int("ranks"); n < 0 {
				return vocab.UsageErrorf("--ranks %d must be a rank count", n)
			}
			plotFormat := ""
			if p := c.String("plot"); p != "" {
				f, err := report.FormatOf(p)
				if err != nil {
					return vocab.UsageErrorf("--plot: %v", err)
				}
				plotFormat = f
			}
			return runWorkload(c.Context, workloadOptions{cmdIO: ioOf(c, ""), files: c.Args().Slice(),
				out: c.String("out"), plot: c.String("plot"), plotFormat: plotFormat,
				opt: workload.Options{Ranks: c.Int("ranks"), GraphCaptured: c.Bool("graph-captured")}})
		},
	}
}

type workloadOptions struct {
	cmdIO
	files      []string
	out        string
	plot       string
	plotFormat string
	opt        workload.Options
	readBudget int64 // all the files together; 0 is input.RunBytes
}

func runWorkload(ctx context.Context, o workloadOptions) error {
	names, err := workloadFiles(o.files)
	if err != nil {
		return err
	}
	// Read and parse every file first: a wrong one stops before anything
	// is written.
	reads := input.NewInputs(o.readBudget)
	var inputs []workload.Input
	var repeated []string
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := reads.Read(ctx, name, o.stdin, workloadInputKind)
		var dup *input.DuplicateError
		if errors.As(err, &dup) {
			repeated = append(repeated, dup.Error())
			continue
		}
		if err != nil {
			return err
		}
		cl, err := benchfmt.ParseCalls(data)
		if errors.Is(err, benchfmt.ErrNoCalls) {
			return vocab.UsageErrorf("%s: %v", name, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		inputs = append(inputs, workload.Input{Name: name, Log: cl})
	}
	s, err := workload.Summarize(inputs, o.opt)
	if err != nil {
		return vocab.UsageError(err)
	}
	s.Notes = append(s.Notes, repeated...) // a file given twice counts once
	yaml := s.ConfigYAML(time.Now(), o.out)
	if o.out != "" {
		if err := outfile.WriteOut(o.out, func(w io.Writer) error { _, err := w.Write(yaml); return err }); err != nil {
			return err
		}
	}
	if o.plot != "" {
		fig := report.NewWorkloadFigure(s)
		if err := outfile.WriteOut(o.plot, func(w io.Writer) error { return fig.Write(w, o.plotFormat) }); err != nil {
			return err
		}
	}
	return ui.PrintWorkload(o.stdout, o.json, s, yaml, o.out, o.plot)
}

// workloadFiles expands the arguments: a directory stands for its files.
func workloadFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if a == "-" || err != nil || !info.IsDir() {
			out = append(out, a) // reading it says what is wrong
			continue
		}
		entries, err := os.ReadDir(a) // sorted by name
		if err != nil {
			return nil, vocab.UsageErrorf("%s: cannot list it: %v", a, err)
		}
		var files []string
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, vocab.UsageErrorf("%s is a directory without files; give the files of %s", a, workloadInputKind)
		}
		out = append(out, files...)
	}
	return out, nil
}
