package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
)

func parseCommand() *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "parse saved nccl-tests output (text, JSON, or a log with NCCL lines mixed in)",
		ArgsUsage: "FILE…",
		Description: `parse reads what nccl-tests printed (its text output, or its -J JSON), with
NCCL_DEBUG lines, MPI messages and failure lines mixed in, and prints the
table per file: size, count, type, time, algbw, busbw and #wrong of the
out-of-place columns, the -N cycle, and what the NCCL log said (transport,
GDR, channels, the algorithm and protocol chosen per size). "-" reads
standard input. Output of nccltune's simulated fabric is labelled SIMULATED.

--op OP says which collective the files hold: an output that names its
program must be of OP (else it is refused, status 2), and one that names
none (nccl-tests before 2.15) is read as OP. Without --op each output is
read as the collective its program names.

A file holding a failed run (an NCCL or CUDA failure, an MPI error, output
cut short) is printed as far as it goes, and parse exits with status 3; a
file that is not nccl-tests output at all gives status 2.

Examples:
  nccltune parse all_reduce.txt
  nccltune parse run1.txt run2.json --json
  nccltune parse old_all_gather.txt --op all_gather`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout ({\"files\": [...]} for several files)"},
			&cli.StringFlag{Name: "op", Usage: "the collective the files hold (" + strings.Join(nccl.OpNames(), ", ") + "): an output of another is refused, one that names none is read as it"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return vocab.UsageErrorf("parse needs at least one FILE of saved nccl-tests output, e.g. nccltune parse all_reduce.txt (- reads standard input)")
			}
			op, err := launchflags.ReadOp(c)
			if err != nil {
				return err
			}
			return runParse(c.Context, parseOptions{cmdIO: ioOf(c, ""), op: op, files: c.Args().Slice()})
		},
	}
}

type parseOptions struct {
	cmdIO
	op    nccl.Op // "": each output's own
	files []string
}

func runParse(ctx context.Context, o parseOptions) error {
	// Read every file first, so a wrong name stops before anything is printed.
	inputs := make([][]byte, len(o.files))
	for i, name := range o.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := input.ReadSaved(ctx, name, o.stdin)
		if err != nil {
			return err
		}
		inputs[i] = data
	}
	parsed := make([]ui.ParseOutcome, len(o.files))
	for i, name := range o.files {
		res, err := benchfmt.Parse(inputs[i])
		if res != nil && res.Instrument == benchfmt.InstrumentTorch { // samples, not nccl-tests' -I 1 columns
			for _, row := range res.Rows {
				if it := row.Out.Iter; it != nil {
					it.MinUS, it.MaxUS, it.P99US, it.CVPct = model.IterColumns(it.TimesUS)
				}
			}
		}
		parsed[i] = ui.ParseOutcome{Name: name, Result: res, Err: err, Refused: res.OpMismatch(o.op)}
		if res != nil && o.op != "" && res.Op() == "" {
			res.Collective = string(o.op)
		}
	}
	if err := ui.PrintParse(o.stdout, o.json, parsed, errorJSON); err != nil {
		return err
	}
	return parseVerdict(parsed)
}

// parseVerdict is parse's error after printing: a failed run is a fabric
// failure, output that is not nccl-tests' bad input.
func parseVerdict(parsed []ui.ParseOutcome) error {
	var failed, unreadable []string
	for _, p := range parsed {
		if msg := p.Failure(); msg != "" {
			failed = append(failed, p.Name+": "+msg)
		} else if msg := p.Unreadable(); msg != "" {
			unreadable = append(unreadable, p.Name+": "+msg)
		}
	}
	switch {
	case len(failed) == 1 && len(parsed) == 1:
		return vocab.Mark(vocab.ErrFabric, errors.New(failed[0]))
	case len(failed) > 0:
		return vocab.Mark(vocab.ErrFabric, fmt.Errorf("%d of %d files hold failed runs: %s", len(failed), len(parsed), strings.Join(failed, "; ")))
	case len(unreadable) > 0:
		return vocab.UsageErrorf("%s", strings.Join(unreadable, "; "))
	}
	return nil
}
