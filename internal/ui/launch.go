package ui

import (
	"fmt"
	"io"
	"time"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
)

// The lines that report each launch on stderr as it ends, for the
// commands that measure configs repeatedly (sweep, gate), interleaved
// (verify, compare) or for a diagnosis (doctor).

// OutcomeText is "ok", or the launch's outcome and why.
func OutcomeText(l *benchfmt.Launch) string {
	if l.Outcome == benchfmt.OK {
		return "ok"
	}
	return string(l.Outcome) + ": " + l.Reason
}

// RepeatProgress prints each launch of a repeated config (sweep, gate).
func RepeatProgress(w io.Writer) func(n, total int, phase string, l *benchfmt.Launch) {
	return func(n, total int, phase string, l *benchfmt.Launch) {
		fmt.Fprintf(w, "launch %d/%d %s: %s (%s)\n", n, total, phase, OutcomeText(l), l.Duration.Round(time.Millisecond))
	}
}

// ABProgress prints each launch of an interleaved comparison (verify,
// compare) with its arm's config.
func ABProgress(w io.Writer) func(n, total int, phase string, t *search.Trial, l *benchfmt.Launch) {
	return func(n, total int, phase string, t *search.Trial, l *benchfmt.Launch) {
		fmt.Fprintf(w, "launch %d/%d %-7s %-40s %s (%s)\n", n, total, phase, t.Config, OutcomeText(l), l.Duration.Round(time.Millisecond))
	}
}

// DoctorProgress prints doctor's debug launches, from min to max bytes,
// on the simulated fabric simProfile ("" for real hardware): before the
// first (cfg empty, l nil), before the second with cfg, and each as it
// ends (l).
func DoctorProgress(w io.Writer, min, max int64, simProfile string) func(cfg nccl.Config, l *benchfmt.Launch) {
	return func(cfg nccl.Config, l *benchfmt.Launch) {
		switch {
		case l != nil:
			fmt.Fprintf(w, "doctor: launch %s (%s)\n", OutcomeText(l), l.Duration.Round(time.Millisecond))
		case len(cfg) > 0:
			fmt.Fprintf(w, "doctor: a second debug launch with %s\n", cfg)
		default:
			sim := ""
			if simProfile != "" {
				sim = " — " + SimLabel(true, simProfile)
			}
			fmt.Fprintf(w, "doctor: one debug launch, %s to %s%s\n", nccl.FormatSize(min), nccl.FormatSize(max), sim)
		}
	}
}
