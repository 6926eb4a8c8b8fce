package ui

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/texttable"
)

// PrintDoctor prints doctor's diagnosis r: its --json document, or the
// fabric in short lines, NCCL's choice per size, the warnings with their
// fixes and, with --env, NCCL's choices side by side.
func PrintDoctor(w io.Writer, asJSON bool, r runresult.DoctorReport) error {
	if asJSON {
		return WriteJSON(w, r)
	}
	printDoctor(w, r)
	if r.CompareEnv != nil {
		fmt.Fprintf(w, "\nwhat NCCL chose per size, with its defaults and with %s:\n", safetext.Escape(nccl.Config(r.CompareEnv).String()))
		_ = benchfmt.ChoicesTableAs(w, "WITH --env", r.CompareChoices[0], r.CompareChoices[1])
	}
	return nil
}

func printDoctor(w io.Writer, r runresult.DoctorReport) {
	title := "nccltune doctor"
	if r.Source == "log" {
		title += ": " + safetext.Escape(r.LogFile)
	}
	fmt.Fprintln(w, title+simTag(r.Simulated, r.SimProfile))
	printDoctorFields(w, r)
	if !r.HasLog {
		fmt.Fprintln(w, "  (no NCCL_DEBUG lines in the output)")
	}
	printDoctorSizes(w, r.Report)
	printDoctorWarnings(w, r)
}

// printDoctorFields prints what the log says of the fabric, one field a
// line, escaped (every value is the log's text).
func printDoctorFields(w io.Writer, r runresult.DoctorReport) {
	field := func(name, format string, args ...any) {
		fmt.Fprintf(w, "  %-15s %s\n", name, safetext.Escape(fmt.Sprintf(format, args...)))
	}
	field("NCCL", "%s", cmp.Or(r.NCCLVersion, "unknown"))
	field("ranks", "%s", ranksText(r.Report))
	field("transport", "%s", transportText(r.Report))
	for i, rt := range r.Routes {
		name := ""
		if i == 0 {
			name = "data paths"
		}
		field(name, "%s", rt.String())
	}
	// NICs and GPUDirect RDMA only matter where the network carries data.
	if r.NetworkCarriesData() {
		nics := "none listed"
		if len(r.NICs) > 0 {
			nics = strings.Join(r.NICs, ", ")
			if r.MergedNICs {
				nics += " (merged into one device)"
			}
		}
		field("NICs", "%s", nics)
		if r.Link.Gbps > 0 {
			field("link", "%g Gb/s = %.1f GB/s (%s)", r.Link.Gbps, r.Link.GBps(), r.Link.Source)
		}
		gdr := "unknown (no GDR line in the log)"
		if r.GDR != nil {
			gdr = "off (GDR 0)"
			if *r.GDR {
				gdr = "on (GDR 1)"
			}
		}
		field("GPUDirect RDMA", "%s", gdr)
	}
	field("channels", "%d", r.Channels)
	rings := "unknown"
	if len(r.Rings) > 0 {
		rings = strings.Join(r.Rings, " | ")
	}
	field("rings", "%s", rings)
	if tp := r.TunerPlugin; tp != nil {
		for i, line := range tunerLines(tp) {
			name := ""
			if i == 0 {
				name = "tuner plugin"
			}
			field(name, "%s", line)
		}
	}
	if r.Outcome != "" {
		launch := string(r.Outcome)
		if r.Reason != "" {
			launch += ": " + r.Reason
		}
		field("launch", "%s", launch)
	}
}

func printDoctorWarnings(w io.Writer, r runresult.DoctorReport) {
	if len(r.NCCLWarnings) > 0 {
		fmt.Fprintln(w, "\nNCCL and launcher messages:")
		for _, m := range r.NCCLWarnings {
			fmt.Fprintf(w, "  %s\n", safetext.Escape(m))
		}
	}
	fmt.Fprintln(w)
	if len(r.Warnings) == 0 {
		fmt.Fprintln(w, "No warnings: none of the known traps showed.")
	} else {
		fmt.Fprintf(w, "%d warning(s):\n", len(r.Warnings))
		writeWarnings(w, "\n", r.Warnings)
	}
	if !r.Failed {
		fmt.Fprintln(w)
		if len(r.Warnings) == 0 {
			fmt.Fprintln(w, "Diagnosed: the fabric looks as it should.")
		} else {
			fmt.Fprintf(w, "Diagnosed, with %d warning(s): read them before trusting numbers from this fabric.\n", len(r.Warnings))
		}
	}
}

// printDoctorSizes prints NCCL's choice and the measured bandwidth per size.
func printDoctorSizes(w io.Writer, r fabric.Report) {
	// The first choice and measurement at each size.
	choices := map[int64]benchfmt.Choice{}
	for _, c := range slices.Backward(r.SortedChoices()) {
		choices[c.Bytes] = c
	}
	measured := map[int64]fabric.SizeBW{}
	for _, s := range slices.Backward(r.Sizes) {
		measured[s.Bytes] = s
	}
	order := slices.AppendSeq(slices.Collect(maps.Keys(choices)), maps.Keys(measured))
	slices.Sort(order)
	order = slices.Compact(order)
	if len(order) == 0 {
		fmt.Fprintln(w, "\n(no table rows and no NCCL TUNING lines: nothing per size to show)")
		return
	}
	fmt.Fprintf(w, "\n%8s  %-6s  %-6s  %8s  %10s  %8s\n", "size", "algo", "proto", "channels", "time µs", "busbw")
	for _, b := range order {
		c := choices[b]
		algo, proto, ch := "-", "-", "-"
		if c.Algo != "" {
			algo, proto, ch = safetext.Escape(c.Algo), safetext.Escape(c.Proto), fmt.Sprint(c.Channels)
		}
		t, bw := "-", "-"
		if m, ok := measured[b]; ok {
			t, bw = fmt.Sprintf("%.1f", m.TimeUS), fmt.Sprintf("%.2f", m.BusBW)
		}
		fmt.Fprintf(w, "%8s  %-6s  %-6s  %8s  %10s  %8s\n", nccl.FormatSize(b), algo, proto, ch, t, bw)
	}
	note := "(NCCL's choice from its TUNING log; time and busbw (GB/s) from one launch, out-of-place"
	if len(r.Choices) == 0 {
		note = "(NCCL printed no TUNING lines; time and busbw (GB/s) from one launch, out-of-place"
	}
	fmt.Fprintln(w, note+")")
}

// ranksText is "2 ranks on 1 node (NVIDIA H200)", or "… on 2 nodes by
// NCCL's count, 1 host (…)" when NCCL counts more nodes than hosts (P2P
// and SHM disabled between ranks of one host).
func ranksText(r fabric.Report) string {
	s := texttable.Plural(r.NRanks, "rank")
	if r.NNodes > 0 {
		s += " on " + texttable.Plural(r.NNodes, "node")
		if h := len(r.Hosts); h > 0 && h < r.NNodes {
			s += " by NCCL's count, " + texttable.Plural(h, "host")
		}
	}
	if r.GPU != "" {
		s += " (" + r.GPU + ")"
	}
	return s
}

// transportText is what carries the data, in a word with the reason:
// "P2P (the Socket network NCCL initialised carries no data)".
func transportText(r fabric.Report) string {
	switch {
	case r.Transport == "" && r.NNodes == 1 && r.NRanks > 1:
		return "P2P or SHM within one host (the log has no channel lines to tell which; NCCL_DEBUG_SUBSYS=INIT prints them)"
	case r.Transport == "":
		return "unknown"
	case !benchfmt.TransportNetwork(r.Transport) && r.Network != "":
		return r.Transport + " (the " + r.Network + " network NCCL initialised carries no data)"
	}
	return r.Transport
}

// writeWarnings prints each warning after lead, with its fix.
func writeWarnings(w io.Writer, lead string, ws []fabric.Warning) {
	for _, wa := range ws {
		fmt.Fprintf(w, "%s[%s]\n", lead, safetext.Escape(wa.Code))
		writeWrapped(w, "  ", wa.Message, 100)
		writeWrapped(w, "  fix: ", wa.Fix, 100)
	}
}

// writeWrapped prints text after prefix, escaped, wrapped at width,
// continuation lines indented like the first.
func writeWrapped(w io.Writer, prefix, text string, width int) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	line := prefix
	for i, word := range strings.Fields(safetext.Escape(text)) {
		switch {
		case i == 0:
			line += word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width:
			fmt.Fprintln(w, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}

// tunerLines say what the log shows of a tuner plugin: loaded or not,
// its CSV, and per collective and size the calls it applied a row to.
func tunerLines(tp *benchfmt.TunerPlugin) []string {
	var head string
	switch {
	case tp.Loaded && tp.Interface > 0:
		head = fmt.Sprintf("%s (v%d)", tp.Name, tp.Interface)
	case tp.Loaded:
		head = tp.Name
	default:
		head = "not loaded: NCCL ran its own tuner"
	}
	if tp.Requested != "" {
		head += " from " + tp.Requested
	}
	out := []string{head}
	switch {
	case tp.ConfigFile != "":
		out = append(out, fmt.Sprintf("%d config row(s) from %s", tp.Configs, tp.ConfigFile))
	case tp.ConfigProblem != "":
		out = append(out, tp.ConfigProblem)
	}
	if tp.Loaded {
		out = append(out, fmt.Sprintf("%d call(s) \"Applied config\", %d \"No matching config found\" (one channel)", tp.Applied, tp.NoMatch))
	}
	for _, c := range tp.Calls {
		line := c.Collective + " " + nccl.FormatSize(c.Bytes) + ": "
		if c.Applied > 0 {
			ch := "NCCL's channels"
			if c.Channels > 0 {
				ch = fmt.Sprintf("%d channel(s)", c.Channels)
			}
			line += fmt.Sprintf("applied %d× (%s/%s, %s)", c.Applied, c.Algo, c.Proto, ch)
		}
		if c.NoMatch > 0 {
			if c.Applied > 0 {
				line += ", "
			}
			line += fmt.Sprintf("no match %d× (%s): one channel", c.NoMatch, fabric.UnmatchedText(c.Unmatched))
		}
		out = append(out, line)
	}
	if tp.Crash != "" {
		out = append(out, "CRASHED: "+tp.Crash)
	}
	return out
}
