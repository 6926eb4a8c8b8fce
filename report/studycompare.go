package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// ComparedArm is one side of a comparison of stored studies.
type ComparedArm struct {
	Study     string            `json:"study"`
	Env       map[string]string `json:"env"`
	Trial     int               `json:"trial"`
	Launches  int               `json:"launches"`
	Simulated bool              `json:"simulated"`
	ScoreUS   *float64          `json:"score_us"`
}

// ComparedSize is one size of a comparison.
type ComparedSize struct {
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

// StudyComparison is what two stored studies measured, size by size
// and over their common sizes: `compare STUDY-A STUDY-B`. Their launches
// were not interleaved, which the printed comparison says.
type StudyComparison struct {
	Arms [2]ComparedArm
	Rows []ComparedSize
	// Band is the comparison over every size both studies measured.
	Band model.Comparison
	// Warnings name what differs between the studies besides the config
	// (the op, the fabric, simulated or real): a difference may be that.
	Warnings []string
}

// CompareStudies compares the launches each study concluded from
// (Study.ResultLaunches). Its errors say why the two cannot be
// compared: no usable launches, or no size in common.
func CompareStudies(a, b *Study) (*StudyComparison, error) {
	opt := model.DefaultOptions()
	var arms [2]ComparedArm
	var launches [2][]model.Launch
	var sizes [2][]int64
	for i, s := range []*Study{a, b} {
		t, ls := s.ResultLaunches()
		if t == nil || len(ls) == 0 {
			return nil, fmt.Errorf("study %s has no usable launches to compare", s.Name())
		}
		launches[i] = modelLaunches(ls)
		for b := range launches[i][0].Times {
			sizes[i] = append(sizes[i], b)
		}
		arms[i] = ComparedArm{Study: s.Name(), Env: t.Config.Clone(), Trial: t.Number, Launches: len(ls), Simulated: s.Study.Simulated}
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
	var rows []ComparedSize
	for _, b := range common {
		one := []int64{b}
		sa, sb := model.Summarize(launches[0], one, opt), model.Summarize(launches[1], one, opt)
		if len(sa.Sizes) == 0 || len(sb.Sizes) == 0 {
			continue
		}
		cmp := model.Compare(launches[0], launches[1], one, opt)
		x, y := sa.Sizes[0], sb.Sizes[0]
		rows = append(rows, ComparedSize{Bytes: b, AUS: x.Median, ALo: finitePtr(x.Lo), AHi: finitePtr(x.Hi),
			BUS: y.Median, BLo: finitePtr(y.Lo), BHi: finitePtr(y.Hi), Change: y.Median/x.Median - 1,
			P: finiteOr(cmp.P, 1), Significant: cmp.Significant})
	}
	band := model.Compare(launches[0], launches[1], common, opt)
	for i, s := range []model.Summary{band.Baseline, band.Candidate} {
		arms[i].ScoreUS = finitePtr(s.ScoreUS)
	}
	return &StudyComparison{Arms: arms, Rows: rows, Band: band, Warnings: mixed(a.Study, b.Study)}, nil
}

// mixed says what differs between two studies besides their configs:
// the op, simulated or real, the simulated profile, and what both
// recorded of their platforms (ranks, nodes, transport, GPU, NCCL).
func mixed(a, b *store.Study) []string {
	var out []string
	if a.Op() != b.Op() {
		out = append(out, fmt.Sprintf("%s measured %s and %s %s: different collectives, not two configs of one", a.Name, a.Op(), b.Name, b.Op()))
	}
	for _, s := range []*store.Study{a, b} {
		if len(s.Workload) > 1 {
			out = append(out, fmt.Sprintf("%s is a workload of several parts (%s): compared over its first op's launches (%s) only; compare --part … --env-a … --env-b … measures every part fresh",
				s.Name, s.Parts(), s.Op()))
		}
	}
	switch {
	case a.Simulated != b.Simulated:
		out = append(out, fmt.Sprintf("one study is SIMULATED and the other real (%s: %s, %s: %s)", a.Name, simOrReal(a), b.Name, simOrReal(b)))
	case a.Simulated && a.Launch.SimProfile != b.Launch.SimProfile:
		out = append(out, fmt.Sprintf("different simulated fabrics: %s on %s, %s on %s", a.Name, a.Launch.SimProfile, b.Name, b.Launch.SimProfile))
	}
	if d := a.Platform.Differences(b.Platform); len(d) > 0 {
		var parts []string
		for _, x := range d {
			parts = append(parts, x.String())
		}
		out = append(out, fmt.Sprintf("different platforms (%s vs %s): %s — the difference may be the fabric's, not the config's", a.Name, b.Name, strings.Join(parts, ", ")))
	}
	return out
}

func simOrReal(s *store.Study) string {
	if s.Simulated {
		return "simulated " + s.Launch.SimProfile
	}
	return "real"
}

// finitePtr is x, or nil (JSON's null) for NaN and Inf.
func finitePtr(x float64) *float64 {
	if !finite(x) {
		return nil
	}
	return &x
}

// finiteOr is x, or fallback when x is NaN or infinite.
func finiteOr(x, fallback float64) float64 {
	if finite(x) {
		return x
	}
	return fallback
}
