package ui

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/workload"
)

type workloadDoc struct {
	*workload.Summary
	Config string `json:"config_yaml"`
	Out    string `json:"out,omitempty"`
	Plot   string `json:"plot,omitempty"`
}

// PrintWorkload prints what a process called and the workload proposed
// from it: workload's --json document, or per communicator and op the
// calls and size histograms, and the proposal. out and plot are the files
// written ("" for none). Text from the input is escaped.
func PrintWorkload(w io.Writer, asJSON bool, s *workload.Summary, yaml []byte, out, plot string) error {
	if asJSON {
		return WriteJSON(w, workloadDoc{Summary: s, Config: string(yaml), Out: out, Plot: plot})
	}
	formats := map[string]bool{}
	for _, src := range s.Sources {
		formats[src.Format] = true
	}
	fs := strings.Join(slices.Sorted(maps.Keys(formats)), ", ")
	head := fmt.Sprintf("workload read from %s (%s)", texttable.Plural(len(s.Sources), "file"), fs)
	if s.NCCLVersion != "" {
		head += ", NCCL " + safetext.Escape(s.NCCLVersion)
	}
	fmt.Fprintf(w, "%s: %s, %d calls\n", head, texttable.Plural(len(s.Communicators), "communicator"), s.Calls)
	for _, c := range s.Communicators {
		fmt.Fprintln(w)
		printCommunicator(w, c, s.TimeKnown)
	}
	fmt.Fprintln(w)
	printProposal(w, s)
	if out != "" {
		out := safetext.Escape(out)
		fmt.Fprintf(w, "  written to %s: nccltune search --config %s <launch flags for %d ranks>\n", out, out, s.Proposal.NRanks)
	} else {
		fmt.Fprintf(w, "  as a study config (--out FILE writes it; nccltune search --config FILE runs it):\n")
		for _, l := range strings.Split(strings.TrimRight(string(yaml), "\n"), "\n") {
			if !strings.HasPrefix(l, "#") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
	if plot != "" {
		fmt.Fprintf(w, "  histograms drawn in %s\n", safetext.Escape(plot))
	}
	if s.GraphCaptured {
		fmt.Fprintf(w, "\nCAUTION, CUDA graphs: %s\n", workload.GraphAdvice)
		for _, src := range s.Sources {
			for _, l := range src.GraphCapture {
				fmt.Fprintf(w, "  %s %s\n", safetext.Escape(src.File), safetext.Escape(l))
			}
		}
	}
	if len(s.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  %s\n", safetext.Escape(n))
		}
	}
	return nil
}

func printCommunicator(w io.Writer, c workload.Communicator, timeKnown bool) {
	who := fmt.Sprintf("%d processes", len(c.Processes))
	if len(c.Ranks) > 0 {
		who = "ranks " + benchfmt.RankList(c.Ranks)
	}
	line := fmt.Sprintf("communicator %s: %d ranks (%s logged), %d calls, %s", safetext.Escape(c.ID), c.NRanks, who, c.Calls, bytesText(c.Bytes))
	if timeKnown {
		line += fmt.Sprintf(", %.0f µs", c.TimeUS)
	}
	if c.Captured > 0 {
		line += fmt.Sprintf(", %d logged under CUDA-graph capture", c.Captured)
	}
	fmt.Fprintln(w, line)
	share := "calls"
	if timeKnown {
		share = "time"
	}
	t := texttable.New(w)
	fmt.Fprintf(t, "  op / size\tcalls\tshare of %s\tbytes\tNCCL chose\t\n", share)
	for _, o := range c.Ops {
		fmt.Fprintf(t, "  %s\t%d\t%.1f %%\t%s\t\t\n", o.Op, o.Calls, 100*o.Share, bytesText(o.Bytes))
		peak := int64(1)
		for _, b := range o.Histogram {
			peak = max(peak, b.Calls)
		}
		for _, b := range o.Histogram {
			bar := strings.Repeat("█", int((b.Calls*24+peak-1)/peak))
			choice := ""
			if b.Algo != "" {
				choice = b.Algo + "/" + b.Proto
			}
			fmt.Fprintf(t, "    %6s %s\t%d\t\t\t%s\t\n", nccl.FormatSize(b.Size), bar, b.Calls, choice)
		}
	}
	_ = t.Flush()
	if len(c.Other) > 0 {
		names := slices.Sorted(maps.Keys(c.Other))
		for i, n := range names {
			names[i] = fmt.Sprintf("%s %d", safetext.Escape(n), c.Other[n])
		}
		fmt.Fprintf(w, "  not measured by any nccl-tests collective nccltune runs: %s\n", strings.Join(names, ", "))
	}
}

func printProposal(w io.Writer, s *workload.Summary) {
	p := s.Proposal
	fmt.Fprintf(w, "proposed workload for %d-rank communicators: every op and size they call, with its calls, as logged\n", p.NRanks)
	t := texttable.New(w)
	fmt.Fprintf(t, "  call\tmeasured at\tshare of the %s\t\t\n", p.By)
	for _, c := range p.Calls {
		extra := ""
		if p.By == "time" {
			extra = fmt.Sprintf("%.0f µs logged", c.TimeUS)
		}
		fmt.Fprintf(t, "  %s\t%s\t%.1f %%\t%s\t\n", c.Spec, c.At, 100*c.Share, extra)
	}
	_ = t.Flush()
	fmt.Fprintln(w, "  the study weights each size by its calls × the time the defaults take there")
	if once := p.OnceText(); once != "" {
		fmt.Fprintf(w, "  %s\n", once)
	}
	for _, l := range p.Left {
		fmt.Fprintf(w, "  left out: %s (nccltune workload --ranks N proposes for it)\n", safetext.Escape(l))
	}
	if u := p.UnmeasuredText(); u != "" {
		fmt.Fprintf(w, "  left out: %s: no nccl-tests benchmark runs them\n", safetext.Escape(u))
	}
}

// bytesText is a total of bytes for people: "54.3 MiB".
func bytesText(b int64) string {
	switch {
	case b >= nccl.GiB:
		return fmt.Sprintf("%.1f GiB", float64(b)/float64(nccl.GiB))
	case b >= nccl.MiB:
		return fmt.Sprintf("%.1f MiB", float64(b)/float64(nccl.MiB))
	case b >= nccl.KiB:
		return fmt.Sprintf("%.1f KiB", float64(b)/float64(nccl.KiB))
	}
	return fmt.Sprintf("%d B", b)
}
