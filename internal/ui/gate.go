package ui

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/texttable"
)

// PrintGate prints gate's verdict on cfg: its --json document, or the
// table of sizes against their thresholds and PASS or FAIL, or what
// failed and doctor's diagnosis.
func PrintGate(w io.Writer, asJSON bool, rep runresult.GateReport, cfg nccl.Config) error {
	switch {
	case asJSON:
		return WriteJSON(w, rep)
	case rep.FabricFailed:
		printGateFabricFailed(w, rep, cfg)
	default:
		printGate(w, rep, cfg)
	}
	return nil
}

func printGateFabricFailed(w io.Writer, rep runresult.GateReport, cfg nccl.Config) {
	fmt.Fprintf(w, "gate %s: %s%s", rep.Study, cfg, simTag(rep.Simulated, rep.SimProfile))
	fmt.Fprintf(w, "\nFABRIC FAILED: %s\n", rep.Failure)
	writeWarnings(w, "\n", rep.Warnings)
	fmt.Fprintf(w, "\nNo verdict: the fabric failed before it could be measured (log: nccltune show %s --trials; nccltune doctor runs a debug launch).\n", rep.Study)
}

func printGate(w io.Writer, rep runresult.GateReport, cfg nccl.Config) {
	fmt.Fprintf(w, "gate %s: %s, %d launch(es)%s\n", rep.Study, cfg, rep.Launches, simTag(rep.Simulated, rep.SimProfile))
	tw := texttable.New(w)
	fmt.Fprintln(tw, "size\tmin GB/s\tbusbw GB/s [90% interval]\tresult\t")
	for _, c := range rep.Checks {
		bw := "-"
		if !math.IsNaN(c.BusBW) {
			bw = fmt.Sprintf("%.2f", c.BusBW)
			if !math.IsNaN(c.BusBWLo) && !math.IsNaN(c.BusBWHi) {
				bw += fmt.Sprintf(" [%.2f, %.2f]", c.BusBWLo, c.BusBWHi)
			}
		}
		result := "FAIL"
		if c.Pass {
			result = "pass"
		}
		if c.Note != "" {
			result += " (" + c.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t\n", nccl.FormatSize(c.Bytes), c.MinBusBW, bw, result)
	}
	tw.Flush()
	switch rep.JudgedOn {
	case fabric.OnLowerBound:
		fmt.Fprintln(w, "Judged on the lower bound (one-sided 95 %) of the median busbw over launches: the conservative")
		fmt.Fprintln(w, "choice for a gate that protects production; a size passes only if even that bound holds.")
	default:
		fmt.Fprintln(w, "Judged on the median busbw over launches: comparable with the numbers people post and the ones")
		fmt.Fprintln(w, "the thresholds were set from; --judge lower-bound judges on the one-sided 95 % lower bound instead.")
	}
	for _, n := range rep.TextNotes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rep.Pass {
		fmt.Fprintln(w, "PASS: every size holds its threshold.")
	} else {
		fmt.Fprintf(w, "FAIL: %s.\n", rep.Verdict.FailedChecks())
	}
}

// ThresholdList is the thresholds as --at takes them, space-separated.
func ThresholdList(ths []fabric.Threshold) string {
	var parts []string
	for _, t := range ths {
		parts = append(parts, t.String())
	}
	return strings.Join(parts, " ")
}
