package ui

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
)

// PrintParse prints what parse read from each file: one --json document
// (for several files {"files": [...]}), or each file's summary, table,
// NCCL's facts and what went wrong. errorOf puts a file's error in the
// one error shape.
func PrintParse(w io.Writer, asJSON bool, parsed []ParseOutcome, errorOf func(error) ErrorJSON) error {
	if asJSON {
		docs := make([]parseJSON, len(parsed))
		for i, p := range parsed {
			docs[i] = parseDoc(p, errorOf)
		}
		if len(docs) == 1 {
			return WriteJSON(w, docs[0])
		}
		return WriteJSON(w, struct {
			Files []parseJSON `json:"files"`
		}{docs})
	}
	for i, p := range parsed {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeParseText(w, p); err != nil {
			return err
		}
	}
	return nil
}

// ParseOutcome is one file's parse: a result (nil if nothing was
// recognised) and the parser's verdict.
type ParseOutcome struct {
	Name   string
	Result *benchfmt.Result
	Err    error
	// Refused says why the file is not read at all (another collective
	// than parse --op names).
	Refused string
}

// Failure is the message of a failed run, "" otherwise.
func (p ParseOutcome) Failure() string {
	var fe *benchfmt.FailureError
	if errors.As(p.Err, &fe) {
		return fe.Message
	}
	return ""
}

// Unreadable is the message for output that holds no table, "" otherwise.
func (p ParseOutcome) Unreadable() string {
	if p.Refused != "" {
		return p.Refused
	}
	if p.Err != nil && p.Failure() == "" {
		return p.Err.Error()
	}
	return ""
}

// parseJSON is one file in parse --json.
type parseJSON struct {
	File         string          `json:"file"`
	Collective   string          `json:"collective"`
	NRanks       int             `json:"nranks"`
	NCCLVersion  string          `json:"nccl_version"`
	TestsVersion string          `json:"tests_version,omitempty"`
	AvgBusBW     float64         `json:"avg_busbw"`
	OutOfBounds  *int            `json:"out_of_bounds"`
	Simulated    bool            `json:"simulated"`
	SimProfile   string          `json:"sim_profile,omitempty"`
	Complete     bool            `json:"complete"`
	Rows         []parseRowJSON  `json:"rows"`
	Facts        *benchfmt.Facts `json:"facts,omitempty"`
	Errors       []string        `json:"errors,omitempty"`
	Notes        []string        `json:"notes,omitempty"`
	// Failure names why the run failed; Error why the file is not
	// nccl-tests output.
	Failure string     `json:"failure,omitempty"`
	Error   *ErrorJSON `json:"error,omitempty"`
}

// parseRowJSON is one row: the out-of-place values, then the rest.
type parseRowJSON struct {
	Bytes   int64               `json:"bytes"`
	Cycle   int                 `json:"cycle"`
	TimeUS  float64             `json:"time_us"`
	BusBW   float64             `json:"busbw"`
	AlgBW   float64             `json:"algbw"`
	Wrong   *int64              `json:"wrong"`
	Count   int64               `json:"count"`
	Type    string              `json:"type"`
	Redop   string              `json:"redop"`
	Root    int                 `json:"root"`
	Iter    *benchfmt.IterStats `json:"iter,omitempty"`
	InPlace *benchfmt.Measure   `json:"in_place,omitempty"`
}

func parseDoc(p ParseOutcome, errorOf func(error) ErrorJSON) parseJSON {
	d := parseJSON{File: p.Name, Rows: []parseRowJSON{}, Failure: p.Failure()}
	if msg := p.Unreadable(); msg != "" {
		d.Error = new(errorOf(vocab.UsageError(errors.New(msg))))
	}
	r := p.Result
	if r == nil {
		return d
	}
	if p.Refused != "" {
		d.Collective = r.Collective
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
func writeParseText(w io.Writer, p ParseOutcome) error {
	// Every line quotes the file: escaped.
	say := func(format string, args ...any) (int, error) {
		return fmt.Fprintln(w, safetext.Escape(fmt.Sprintf(format, args...)))
	}
	say("%s:", p.Name)
	if p.Refused != "" {
		_, err := say("  refused: %s", p.Refused)
		return err
	}
	r := p.Result
	if r == nil {
		_, err := say("  not nccl-tests output: %s", p.Err)
		return err
	}
	if r.Simulated {
		say("  SIMULATED fabric (profile %s): not a measurement", orDash(r.SimProfile))
	}
	say("  %s", parseSummary(r))
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
		say("  avg busbw %g GB/s, %s", r.AvgBusBW, oob) // %g as nccl-tests prints it
	}
	if bad := r.Invalid(); bad != "" && r.Complete {
		say("  INVALID: %s; these numbers are not a measurement", bad)
	}
	if f := r.Facts; f != nil {
		say("  NCCL: %s", parseFactsSummary(f))
		if len(f.Choices) > 0 {
			fmt.Fprintln(w, "  NCCL's choice per size:")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, c := range f.Choices {
				fmt.Fprintf(tw, "    %s\t%s\t%s/%s\t%d channels (%d..%d)\n", safetext.Escape(c.Collective), nccl.FormatSize(c.Bytes), safetext.Escape(c.Algo), safetext.Escape(c.Proto), c.Channels, c.ChannelLo, c.ChannelHi)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, warn := range f.Warnings {
			say("  NCCL WARN %s", warn)
		}
	}
	for _, e := range r.Errors {
		if !strings.HasPrefix(e, "NCCL WARN ") || r.Facts == nil {
			say("  error: %s", e)
		}
	}
	for _, n := range r.Notes {
		say("  note: %s", n)
	}
	var err error
	switch {
	case p.Failure() != "":
		_, err = say("  FAILED: %s", p.Failure())
	case p.Unreadable() != "":
		_, err = say("  no table: %s", p.Unreadable())
	}
	return err
}

// parseSummary is "all_reduce, 2 ranks on host0 host1 (NVIDIA H200), NCCL 2.28.3, nccl-tests 2.19.6".
func parseSummary(r *benchfmt.Result) string {
	parts := []string{orDash(r.Collective)}
	ranks := fmt.Sprintf("%d ranks", r.NRanks)
	if len(r.Devices) > 0 {
		var hosts, gpus []string
		for _, d := range r.Devices {
			if !slices.Contains(hosts, d.Host) {
				hosts = append(hosts, d.Host)
			}
			if !slices.Contains(gpus, d.Name) {
				gpus = append(gpus, d.Name)
			}
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

// writeParseRows prints the out-of-place columns, right-aligned as
// nccl-tests prints them; redop, root, cycle and per-iteration columns
// only when they say something.
func writeParseRows(w io.Writer, rows []benchfmt.Row) error {
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
// channels, 2 ranks on 2 nodes, NCCL 2.28.3; data paths: …".
func parseFactsSummary(f *benchfmt.Facts) string {
	var parts []string
	if f.Transport != "" {
		t := "transport " + f.Transport
		if len(f.NICs) > 0 {
			t += " (" + strings.Join(f.NICs, " ") + ")"
		}
		parts = append(parts, t)
	}
	switch {
	case f.GDR == nil && len(f.Routes) > 0 && !benchfmt.TransportNetwork(f.Transport):
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
			nodes = " on " + texttable.Plural(f.NNodes, "node")
		}
		parts = append(parts, texttable.Plural(f.NRanks, "rank")+nodes)
	}
	if f.NCCLVersion != "" {
		parts = append(parts, "NCCL "+f.NCCLVersion)
	}
	out := strings.Join(parts, ", ")
	if len(f.Routes) > 0 {
		out += "; data paths: " + benchfmt.RoutesText(f.Routes)
	}
	return out
}
