package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/stored"
)

// PrintStoredComparison prints c (report.CompareStudies): its --json document, or both arms, the
// table per size and the verdict over the common sizes.
func PrintStoredComparison(w io.Writer, asJSON bool, c *report.StudyComparison) error {
	arms, rows, band := c.Arms, c.Rows, c.Band
	if asJSON {
		warnings := c.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		return WriteJSON(w, map[string]any{"a": arms[0], "b": arms[1], "interleaved": false, "rows": rows, "warnings": warnings,
			"speedup": jsonNumber(band.Speedup), "speedup_ci": []any{jsonNumber(band.Lo), jsonNumber(band.Hi)},
			"p_value": FiniteOr(band.P, 1), "significant": band.Significant})
	}
	for i, name := range []string{"A", "B"} {
		a := arms[i]
		sim := ""
		if a.Simulated {
			sim = "  [SIMULATED]"
		}
		fmt.Fprintf(w, "%s: %s trial %d, %s, %d launches%s\n", name, a.Study, a.Trial, nccl.Config(a.Env), a.Launches, sim)
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w, "median time over launches [95% CI]; ~ = no significant difference (p ≥ 0.05); not interleaved")
	tw := newTable(w)
	fmt.Fprintln(tw, "size\tA µs\tB µs\tB vs A\t")
	for _, r := range rows {
		change := "~"
		if r.Significant {
			change = fmt.Sprintf("%+.1f%%", 100*r.Change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (p=%.3f)\t\n", nccl.FormatSize(r.Bytes), ciPtrText(r.AUS, r.ALo, r.AHi), ciPtrText(r.BUS, r.BLo, r.BHi), change, r.P)
	}
	tw.Flush()
	if math.IsNaN(band.Speedup) {
		return nil
	}
	fmt.Fprintf(w, "over these sizes: B is %s as fast as A (95%% CI), p=%.3g%s\n", stored.SpeedupText(band.Speedup, [2]float64{FiniteOr(band.Lo, 0), FiniteOr(band.Hi, 0)}),
		FiniteOr(band.P, 1), map[bool]string{true: "", false: ": no significant difference"}[band.Significant])
	return nil
}

// ciPtrText is ciText for an interval that may be missing.
func ciPtrText(m float64, lo, hi *float64) string {
	if lo == nil || hi == nil {
		return fmt.Sprintf("%.1f", m)
	}
	return ciText(m, *lo, *hi)
}
