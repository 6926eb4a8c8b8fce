package ui

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
)

// compareArm is one side of a comparison of stored studies.
type compareArm struct {
	Study     string            `json:"study"`
	Env       map[string]string `json:"env"`
	Trial     int               `json:"trial"`
	Launches  int               `json:"launches"`
	Simulated bool              `json:"simulated"`
	ScoreUS   *float64          `json:"score_us"`
}

// compareRow is one size of a comparison.
type compareRow struct {
	Bytes       int64    `json:"bytes"`
	AUS         float64  `json:"a_us"`
	ALo         *float64 `json:"a_lo_us"`
	AHi         *float64 `json:"a_hi_us"`
	BUS         float64  `json:"b_us"`
	BLo         *float64 `json:"b_lo_us"`
	BHi         *float64 `json:"b_hi_us"`
	Change      float64  `json:"change"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
}

// StoredComparison is what two stored studies measured, size by size
// and over their common sizes: `compare STUDY-A STUDY-B`. Its launches
// were not interleaved, which its text says.
type StoredComparison struct {
	arms [2]compareArm
	rows []compareRow
	// band is the comparison over every size both studies measured.
	band model.Comparison
}

// CompareStored compares the launches each study concluded from
// (report.Study.ResultLaunches). Its errors say why the two cannot be
// compared: no usable launches, or no size in common.
func CompareStored(a, b *report.Study) (*StoredComparison, error) {
	opt := model.DefaultOptions()
	var arms [2]compareArm
	var launches [2][]model.Launch
	var sizes [2][]int64
	for i, s := range []*report.Study{a, b} {
		t, ls := s.ResultLaunches()
		if t == nil || len(ls) == 0 {
			return nil, fmt.Errorf("study %s has no usable launches to compare", s.Name())
		}
		launches[i] = report.ModelLaunches(ls)
		for b := range launches[i][0].Times {
			sizes[i] = append(sizes[i], b)
		}
		arms[i] = compareArm{Study: s.Name(), Env: t.Config.Clone(), Trial: t.Number, Launches: len(ls), Simulated: s.Study.Simulated}
	}
	var common []int64
	for _, b := range sizes[0] {
		if slices.Contains(sizes[1], b) {
			common = append(common, b)
		}
	}
	slices.Sort(common)
	if len(common) == 0 {
		return nil, fmt.Errorf("studies %s and %s measured no size in common", arms[0].Study, arms[1].Study)
	}
	var rows []compareRow
	for _, b := range common {
		one := []int64{b}
		sa, sb := model.Summarize(launches[0], one, opt), model.Summarize(launches[1], one, opt)
		if len(sa.Sizes) == 0 || len(sb.Sizes) == 0 {
			continue
		}
		cmp := model.Compare(launches[0], launches[1], one, opt)
		x, y := sa.Sizes[0], sb.Sizes[0]
		rows = append(rows, compareRow{Bytes: b, AUS: x.Median, ALo: finitePtr(x.Lo), AHi: finitePtr(x.Hi),
			BUS: y.Median, BLo: finitePtr(y.Lo), BHi: finitePtr(y.Hi), Change: y.Median/x.Median - 1,
			P: FiniteOr(cmp.P, 1), Significant: cmp.Significant})
	}
	band := model.Compare(launches[0], launches[1], common, opt)
	for i, s := range []model.Summary{band.Baseline, band.Candidate} {
		arms[i].ScoreUS = finitePtr(s.ScoreUS)
	}
	return &StoredComparison{arms: arms, rows: rows, band: band}, nil
}

// PrintStoredComparison prints c: its --json document, or both arms, the
// table per size and the verdict over the common sizes.
func PrintStoredComparison(w io.Writer, asJSON bool, c *StoredComparison) error {
	arms, rows, band := c.arms, c.rows, c.band
	if asJSON {
		return WriteJSON(w, map[string]any{"a": arms[0], "b": arms[1], "interleaved": false, "rows": rows,
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
	fmt.Fprintf(w, "over these sizes: B is %s as fast as A (95%% CI), p=%.3g%s\n", report.SpeedupText(band.Speedup, [2]float64{FiniteOr(band.Lo, 0), FiniteOr(band.Hi, 0)}),
		FiniteOr(band.P, 1), map[bool]string{true: "", false: ": no significant difference"}[band.Significant])
	return nil
}

// finitePtr is x, or nil (JSON's null) for NaN and Inf.
func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// ciPtrText is ciText for an interval that may be missing.
func ciPtrText(m float64, lo, hi *float64) string {
	if lo == nil || hi == nil {
		return fmt.Sprintf("%.1f", m)
	}
	return ciText(m, *lo, *hi)
}
