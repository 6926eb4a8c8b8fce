package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/vocab"
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

A file holding a failed run (an NCCL or CUDA failure, an MPI error, output
cut short) is printed as far as it goes, and parse exits with status 3; a
file that is not nccl-tests output at all gives status 2.

Examples:
  nccltune parse all_reduce.txt
  nccltune parse run1.txt run2.json --json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout (an array for several files)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("parse needs at least one FILE of saved nccl-tests output, e.g. nccltune parse all_reduce.txt (- reads standard input)")
			}
			return runParse(c.Context, parseOptions{
				files:  c.Args().Slice(),
				json:   c.Bool("json"),
				stdin:  c.App.Reader,
				stdout: c.App.Writer,
			})
		},
	}
}

type parseOptions struct {
	files  []string
	json   bool
	stdin  io.Reader
	stdout io.Writer
}

// parseOutcome is one file's parse: a result (nil if nothing was
// recognised) and the parser's verdict.
type parseOutcome struct {
	name string
	res  *runner.Result
	err  error
}

// failure is the message of a failed run, "" otherwise.
func (p parseOutcome) failure() string {
	var fe *runner.FailureError
	if errors.As(p.err, &fe) {
		return fe.Message
	}
	return ""
}

// unreadable is the message for output that holds no table, "" otherwise.
func (p parseOutcome) unreadable() string {
	if p.err != nil && p.failure() == "" {
		return p.err.Error()
	}
	return ""
}

func runParse(ctx context.Context, o parseOptions) error {
	// Read every file first, so a wrong name stops before anything is printed.
	inputs := make([][]byte, len(o.files))
	for i, name := range o.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := readParseInput(ctx, name, o.stdin)
		if err != nil {
			return err
		}
		inputs[i] = data
	}
	parsed := make([]parseOutcome, len(o.files))
	for i, name := range o.files {
		res, err := runner.Parse(inputs[i])
		parsed[i] = parseOutcome{name: name, res: res, err: err}
	}

	if o.json {
		docs := make([]parseJSON, len(parsed))
		for i, p := range parsed {
			docs[i] = parseDoc(p)
		}
		var err error
		if len(docs) == 1 {
			err = ui.WriteJSON(o.stdout, docs[0])
		} else {
			err = ui.WriteJSON(o.stdout, docs)
		}
		if err != nil {
			return err
		}
	} else {
		for i, p := range parsed {
			if i > 0 {
				fmt.Fprintln(o.stdout)
			}
			if err := writeParseText(o.stdout, p); err != nil {
				return err
			}
		}
	}
	return parseVerdict(parsed)
}

// readParseInput reads a file, or standard input for "-", up to
// input.MaxBytes.
func readParseInput(ctx context.Context, name string, stdin io.Reader) ([]byte, error) {
	data, err := input.ReadFile(ctx, name, stdin, input.MaxBytes)
	var tooLarge *input.TooLargeError
	switch {
	case err == nil:
		return data, nil
	case ctx.Err() != nil:
		return nil, vocab.ErrInterrupted
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageErrorf("%s: no such file; give the path of saved nccl-tests output", name)
	case errors.Is(err, input.ErrNotFile):
		return nil, usageErrorf("%s is a directory; give the files of saved nccl-tests output inside it", name)
	case errors.As(err, &tooLarge):
		return nil, usageError(err)
	case name == "-":
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return nil, fmt.Errorf("cannot read %s: %w", name, err)
}

// parseVerdict is the command's error after printing: a failed run is a
// fabric failure (exit 3); output that is not nccl-tests' is bad input
// (exit 2).
func parseVerdict(parsed []parseOutcome) error {
	var failed, unreadable []string
	for _, p := range parsed {
		if msg := p.failure(); msg != "" {
			failed = append(failed, p.name+": "+msg)
		} else if msg := p.unreadable(); msg != "" {
			unreadable = append(unreadable, p.name+": "+msg)
		}
	}
	switch {
	case len(failed) == 1 && len(parsed) == 1:
		return fabricError(errors.New(failed[0]))
	case len(failed) > 0:
		return fabricError(fmt.Errorf("%d of %d files hold failed runs: %s", len(failed), len(parsed), strings.Join(failed, "; ")))
	case len(unreadable) > 0:
		return usageErrorf("%s", strings.Join(unreadable, "; "))
	}
	return nil
}

// parseJSON is one file in parse --json (DESIGN's contract plus more).
type parseJSON struct {
	File         string         `json:"file"`
	Collective   string         `json:"collective"`
	NRanks       int            `json:"nranks"`
	NCCLVersion  string         `json:"nccl_version"`
	TestsVersion string         `json:"tests_version,omitempty"`
	AvgBusBW     float64        `json:"avg_busbw"`
	OutOfBounds  *int           `json:"out_of_bounds"`
	Simulated    bool           `json:"simulated"`
	SimProfile   string         `json:"sim_profile,omitempty"`
	Complete     bool           `json:"complete"`
	Rows         []parseRowJSON `json:"rows"`
	Facts        *runner.Facts  `json:"facts,omitempty"`
	Errors       []string       `json:"errors,omitempty"`
	Notes        []string       `json:"notes,omitempty"`
	// Failure names why the run failed; Error why the file is not
	// nccl-tests output.
	Failure string `json:"failure,omitempty"`
	Error   string `json:"error,omitempty"`
}

// parseRowJSON is one row: the out-of-place values, then the rest.
type parseRowJSON struct {
	Bytes   int64             `json:"bytes"`
	Cycle   int               `json:"cycle"`
	TimeUS  float64           `json:"time_us"`
	BusBW   float64           `json:"busbw"`
	AlgBW   float64           `json:"algbw"`
	Wrong   *int64            `json:"wrong"`
	Count   int64             `json:"count"`
	Type    string            `json:"type"`
	Redop   string            `json:"redop"`
	Root    int               `json:"root"`
	Iter    *runner.IterStats `json:"iter,omitempty"`
	InPlace *runner.Measure   `json:"in_place,omitempty"`
}

func parseDoc(p parseOutcome) parseJSON {
	d := parseJSON{File: p.name, Rows: []parseRowJSON{}, Failure: p.failure(), Error: p.unreadable()}
	r := p.res
	if r == nil {
		return d
	}
	d.Collective, d.NRanks, d.NCCLVersion, d.TestsVersion = r.Collective, r.NRanks, r.NCCLVersion, r.TestsVersion
	d.AvgBusBW, d.OutOfBounds, d.Simulated, d.SimProfile = r.AvgBusBW, r.OutOfBounds, r.Simulated, r.SimProfile
	d.Complete, d.Facts, d.Errors, d.Notes = r.Complete, r.Facts, r.Errors, r.Notes
	for _, row := range r.Rows {
		d.Rows = append(d.Rows, parseRowJSON{
			Bytes: row.Bytes, Cycle: row.Cycle, TimeUS: row.Out.TimeUS, BusBW: row.Out.BusBW,
			AlgBW: row.Out.AlgBW, Wrong: row.Out.Wrong, Count: row.Count, Type: row.Type,
			Redop: row.Redop, Root: row.Root, Iter: row.Out.Iter, InPlace: row.In,
		})
	}
	return d
}

// writeParseText prints one file: a summary line, the table, the footer,
// NCCL's facts and choices, and what went wrong.
func writeParseText(w io.Writer, p parseOutcome) error {
	fmt.Fprintf(w, "%s:\n", p.name)
	r := p.res
	if r == nil {
		_, err := fmt.Fprintf(w, "  not nccl-tests output: %s\n", p.err)
		return err
	}
	if r.Simulated {
		fmt.Fprintf(w, "  SIMULATED fabric (profile %s): not a measurement\n", orDash(r.SimProfile))
	}
	fmt.Fprintf(w, "  %s\n", parseSummary(r))
	if len(r.Rows) > 0 {
		if err := writeParseRows(w, r.Rows); err != nil {
			return err
		}
	}
	if r.Complete {
		oob := "out-of-bounds values —"
		if r.OutOfBounds != nil {
			oob = fmt.Sprintf("out-of-bounds values %d", *r.OutOfBounds)
		}
		fmt.Fprintf(w, "  avg busbw %s GB/s, %s\n", parseFormatBW(r.AvgBusBW), oob)
	}
	if bad := r.Invalid(); bad != "" && r.Complete {
		fmt.Fprintf(w, "  INVALID: %s; these numbers are not a measurement\n", bad)
	}
	if f := r.Facts; f != nil {
		fmt.Fprintf(w, "  NCCL: %s\n", parseFactsSummary(f))
		if len(f.Choices) > 0 {
			fmt.Fprintln(w, "  NCCL's choice per size:")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, c := range f.Choices {
				fmt.Fprintf(tw, "    %s\t%s\t%s/%s\t%d channels (%d..%d)\n", c.Collective, nccl.FormatSize(c.Bytes), c.Algo, c.Proto, c.Channels, c.ChannelLo, c.ChannelHi)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, warn := range f.Warnings {
			fmt.Fprintf(w, "  NCCL WARN %s\n", warn)
		}
	}
	for _, e := range r.Errors {
		if !strings.HasPrefix(e, "NCCL WARN ") || r.Facts == nil {
			fmt.Fprintf(w, "  error: %s\n", e)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	var err error
	switch {
	case p.failure() != "":
		_, err = fmt.Fprintf(w, "  FAILED: %s\n", p.failure())
	case p.unreadable() != "":
		_, err = fmt.Fprintf(w, "  no table: %s\n", p.unreadable())
	}
	return err
}

// parseSummary is "all_reduce, 2 ranks on fakehost0 fakehost1 (NVIDIA H200), NCCL 2.28.3, nccl-tests 2.19.6".
func parseSummary(r *runner.Result) string {
	parts := []string{orDash(r.Collective)}
	ranks := fmt.Sprintf("%d ranks", r.NRanks)
	if len(r.Devices) > 0 {
		var hosts, gpus []string
		for _, d := range r.Devices {
			hosts = parseAppendNew(hosts, d.Host)
			gpus = parseAppendNew(gpus, d.Name)
		}
		ranks += " on " + strings.Join(hosts, " ") + " (" + strings.Join(gpus, ", ") + ")"
	}
	parts = append(parts, ranks)
	if r.NCCLVersion != "" {
		parts = append(parts, "NCCL "+r.NCCLVersion)
	}
	if r.TestsVersion != "" {
		parts = append(parts, "nccl-tests "+r.TestsVersion)
	}
	if !r.Complete {
		parts = append(parts, "INCOMPLETE")
	}
	return strings.Join(parts, ", ")
}

func parseAppendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// writeParseRows prints the out-of-place columns, right-aligned as
// nccl-tests prints them. Columns that never vary from nccl-tests' default
// (redop, root, cycle, per-iteration statistics) appear only when they say
// something.
func writeParseRows(w io.Writer, rows []runner.Row) error {
	var showRedop, showRoot, showCycle, showIter bool
	for _, row := range rows {
		showRedop = showRedop || row.Redop != rows[0].Redop
		showRoot = showRoot || row.Root != -1
		showCycle = showCycle || row.Cycle > 0
		showIter = showIter || row.Out.Iter != nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := []string{"size", "count", "type"}
	if showRedop {
		cols = append(cols, "redop")
	}
	if showRoot {
		cols = append(cols, "root")
	}
	if showCycle {
		cols = append(cols, "cycle")
	}
	cols = append(cols, "time µs", "algbw GB/s", "busbw GB/s", "#wrong")
	if showIter {
		cols = append(cols, "p99 µs", "cv %")
	}
	fmt.Fprintf(tw, "  \t%s\t\n", strings.Join(cols, "\t"))
	for _, row := range rows {
		cells := []string{nccl.FormatSize(row.Bytes), fmt.Sprint(row.Count), row.Type}
		if showRedop {
			cells = append(cells, orDash(row.Redop))
		}
		if showRoot {
			cells = append(cells, fmt.Sprint(row.Root))
		}
		if showCycle {
			cells = append(cells, fmt.Sprint(row.Cycle))
		}
		wrong := "N/A"
		if row.Out.Wrong != nil {
			wrong = fmt.Sprint(*row.Out.Wrong)
		}
		cells = append(cells, fmt.Sprintf("%.2f", row.Out.TimeUS), fmt.Sprintf("%.2f", row.Out.AlgBW), fmt.Sprintf("%.2f", row.Out.BusBW), wrong)
		if showIter {
			if it := row.Out.Iter; it != nil {
				cells = append(cells, fmt.Sprintf("%.2f", it.P99US), fmt.Sprintf("%.1f", it.CVPct))
			} else {
				cells = append(cells, "—", "—")
			}
		}
		fmt.Fprintf(tw, "  \t%s\t\n", strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// parseFactsSummary is "transport Socket (lo:127.0.0.1<0>), GDR off, 2
// channels, 2 ranks on 2 nodes, NCCL 2.28.3; data paths: network Socket …".
func parseFactsSummary(f *runner.Facts) string {
	var parts []string
	if f.Transport != "" {
		t := "transport " + f.Transport
		if len(f.NICs) > 0 {
			t += " (" + strings.Join(f.NICs, " ") + ")"
		}
		parts = append(parts, t)
	}
	switch {
	case f.GDR == nil && len(f.Routes) > 0 && !runner.TransportNetwork(f.Transport):
		// No network traffic: GPUDirect RDMA has nothing to do.
	case f.GDR == nil:
		parts = append(parts, "GDR unknown")
	case *f.GDR:
		parts = append(parts, "GDR on")
	default:
		parts = append(parts, "GDR off")
	}
	if f.Channels > 0 {
		parts = append(parts, fmt.Sprintf("%d channels", f.Channels))
	}
	if f.NRanks > 0 {
		nodes := ""
		if f.NNodes > 0 {
			nodes = " on " + report.Plural(f.NNodes, "node")
		}
		parts = append(parts, report.Plural(f.NRanks, "rank")+nodes)
	}
	if f.NCCLVersion != "" {
		parts = append(parts, "NCCL "+f.NCCLVersion)
	}
	out := strings.Join(parts, ", ")
	if len(f.Routes) > 0 {
		out += "; data paths: " + runner.RoutesText(f.Routes)
	}
	return out
}

// parseFormatBW prints a bandwidth as nccl-tests' %g does.
func parseFormatBW(f float64) string { return fmt.Sprintf("%g", f) }
