package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// PrintStoredComparison prints c: its --json document (the top-level
// fields the first op's, "ops" every op's), or both arms, then per op the
// table per size and the verdict over the common sizes.
func PrintStoredComparison(w io.Writer, asJSON bool, c *report.StudyComparison) error {
	if asJSON {
		doc := opComparisonJSON(c.OpComparison)
		ops := make([]map[string]any, 0, len(c.Ops))
		for _, o := range c.Ops {
			ops = append(ops, opComparisonJSON(o))
		}
		doc["interleaved"], doc["warnings"], doc["ops"] = false, nonNil(c.Warnings), ops
		return WriteJSON(w, doc)
	}
	arms := c.Arms
	// A workload on either side: each op's table is headed by its launches.
	perOp := arms[0].Workload != "" || arms[1].Workload != ""
	for i, name := range []string{"A", "B"} {
		a := arms[i]
		sim := ""
		if a.Simulated {
			sim = "  [SIMULATED]"
		}
		what := fmt.Sprintf("%d launches", a.Launches)
		if perOp {
			what = "op " + string(c.Op)
			if a.Workload != "" {
				what = "workload " + a.Workload
			}
		}
		fmt.Fprintf(w, "%s: %s trial %d, %s, %s%s\n", name, a.Study, a.Trial, nccl.Config(a.Env), what, sim)
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w, "median time over launches [95% CI]; ~ = no significant difference (p ≥ 0.05); not interleaved")
	for _, o := range c.Ops {
		if perOp {
			fmt.Fprintf(w, "\n%s: A %d launches, B %d launches\n", o.Op, o.Arms[0].Launches, o.Arms[1].Launches)
		}
		printOpComparison(w, o)
	}
	return nil
}

// opComparisonJSON is one op's comparison as --json writes it: A the
// row's baseline, B its candidate, a missing number null.
func opComparisonJSON(o report.OpComparison) map[string]any {
	type f = store.JSONFloat
	type row struct {
		Bytes       int64   `json:"bytes"`
		AUS         f       `json:"a_us"`
		ALo         f       `json:"a_lo_us"`
		AHi         f       `json:"a_hi_us"`
		BUS         f       `json:"b_us"`
		BLo         f       `json:"b_lo_us"`
		BHi         f       `json:"b_hi_us"`
		Change      f       `json:"change"`
		P           float64 `json:"p"`
		Significant bool    `json:"significant"`
	}
	rows := []row{}
	for _, r := range o.Rows {
		rows = append(rows, row{r.Bytes, f(r.BaselineUS), f(r.BaselineLo), f(r.BaselineHi),
			f(r.CandidateUS), f(r.CandidateLo), f(r.CandidateHi), f(r.Change()), r.PValue, r.Significant})
	}
	doc := map[string]any{"op": o.Op, "a": o.Arms[0], "b": o.Arms[1], "rows": rows,
		"speedup": jsonNumber(o.Band.Speedup), "speedup_ci": []any{jsonNumber(o.Band.Lo), jsonNumber(o.Band.Hi)},
		"p_value": store.FiniteOr(o.Band.P, 1), "significant": o.Band.Significant}
	if o.OpB != "" {
		doc["op_b"] = o.OpB
	}
	return doc
}

func printOpComparison(w io.Writer, o report.OpComparison) {
	tw := texttable.New(w)
	fmt.Fprintln(tw, "size\tA µs\tB µs\tB vs A\t")
	for _, r := range o.Rows {
		change := "~"
		if r.Significant {
			change = stored.ChangeText(r.Speedup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (p=%.3f)\t\n", nccl.FormatSize(r.Bytes), ciText(r.BaselineUS, r.BaselineLo, r.BaselineHi), ciText(r.CandidateUS, r.CandidateLo, r.CandidateHi), change, r.PValue)
	}
	tw.Flush()
	band := o.Band
	if math.IsNaN(band.Speedup) {
		return
	}
	verdict := ""
	if !band.Significant {
		verdict = ": no significant difference"
	}
	fmt.Fprintf(w, "over these sizes: B is %s as fast as A (%s), p=%.3g%s\n", stored.SpeedupText(band.Speedup, [2]float64{store.FiniteOr(band.Lo, 0), store.FiniteOr(band.Hi, 0)}),
		band.CILevel.Label(), store.FiniteOr(band.P, 1), verdict)
}
