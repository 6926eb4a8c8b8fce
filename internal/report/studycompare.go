package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// ComparedArm is one side of a comparison of stored studies.
type ComparedArm struct {
	Study string            `json:"study"`
	Env   map[string]string `json:"env"`
	Trial int               `json:"trial"`
	// Launches and ScoreUS are of the op compared.
	Launches  int      `json:"launches"`
	Simulated bool     `json:"simulated"`
	ScoreUS   *float64 `json:"score_us"`
	// Workload is a workload's parts as --part writes them.
	Workload string `json:"workload,omitempty"`
}

// OpComparison is one op of a comparison of stored studies, size by size
// (A the rows' baseline, B their candidate) and over their common sizes.
type OpComparison struct {
	// OpB is B's op where it differs from Op, else empty.
	Op   nccl.Op
	OpB  nccl.Op
	Arms [2]ComparedArm
	Rows []store.SizeComparison
	// Band is over every size both studies measured of Op.
	Band stored.BandComparison
}

// StudyComparison is what two stored studies measured: `compare STUDY-A
// STUDY-B`. Their launches were not interleaved.
type StudyComparison struct {
	// OpComparison is the first op compared (Ops[0]).
	OpComparison
	// Ops are every op both studies measured, in A's parts' order.
	Ops []OpComparison
	// Warnings name what differs between the studies besides the config.
	Warnings []string
}

// CompareStudies compares the launches each study concluded from
// (ResultLaunches), op by op through each study's view of it (OpStudy).
// Ops only one study measured are named in a warning.
func CompareStudies(a, b *Study) (*StudyComparison, error) {
	pairs, warnings, err := comparedOps(a, b)
	if err != nil {
		return nil, err
	}
	c := &StudyComparison{Warnings: append(warnings, mixed(a.Study, b.Study)...)}
	var firstErr error
	for _, p := range pairs {
		oc, err := compareOp(opView(a, p[0]), opView(b, p[1]))
		if err != nil {
			if len(pairs) == 1 {
				return nil, err
			}
			firstErr = cmp.Or(firstErr, fmt.Errorf("%s: %w", p[0], err))
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s not compared: %v", p[0], err))
			continue
		}
		for i, s := range []*Study{a, b} {
			if s.WorkloadOps() != nil {
				oc.Arms[i].Workload = s.Study.Parts().String()
			}
		}
		c.Ops = append(c.Ops, oc)
	}
	if len(c.Ops) == 0 {
		return nil, firstErr
	}
	c.OpComparison = c.Ops[0]
	return c, nil
}

func opsOf(s *Study) []nccl.Op {
	if ops := s.WorkloadOps(); ops != nil {
		return ops
	}
	return []nccl.Op{s.Study.Op()}
}

func opView(s *Study, op nccl.Op) *Study {
	if s.WorkloadOps() == nil {
		return s
	}
	return s.OpStudy(op)
}

// comparedOps pairs the ops both measured, in a's order, with a warning
// for the others. Two one-op studies pair their ops even when they differ
// (with a warning); a workload only where the ops match.
func comparedOps(a, b *Study) ([][2]nccl.Op, []string, error) {
	opsA, opsB := opsOf(a), opsOf(b)
	if len(opsA) == 1 && len(opsB) == 1 {
		var warnings []string
		if opsA[0] != opsB[0] {
			warnings = append(warnings, fmt.Sprintf("%s measured %s and %s %s: different collectives, not two configs of one", a.Name(), opsA[0], b.Name(), opsB[0]))
		}
		return [][2]nccl.Op{{opsA[0], opsB[0]}}, warnings, nil
	}
	var pairs [][2]nccl.Op
	for _, op := range opsA {
		if slices.Contains(opsB, op) {
			pairs = append(pairs, [2]nccl.Op{op, op})
		}
	}
	if len(pairs) == 0 {
		return nil, nil, fmt.Errorf("studies %s (%s) and %s (%s) measured no op in common: nothing to compare; compare --part OP:BAND … --env-a K=V … --env-b K=V … measures two configs fresh over the ops you name",
			a.Name(), nccl.JoinOps(opsA), b.Name(), nccl.JoinOps(opsB))
	}
	var warnings []string
	for _, x := range [][2]*Study{{a, b}, {b, a}} {
		var only []nccl.Op
		for _, op := range opsOf(x[0]) {
			if !slices.Contains(opsOf(x[1]), op) {
				only = append(only, op)
			}
		}
		if len(only) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s measured %s, which %s did not (it measured %s): not compared; compare --part … --env-a … --env-b … measures every part fresh",
				x[0].Name(), nccl.JoinOps(only), x[1].Name(), nccl.JoinOps(opsOf(x[1]))))
		}
	}
	return pairs, warnings, nil
}

func compareOp(a, b *Study) (OpComparison, error) {
	var arms [2]ComparedArm
	var launches [2][]*store.Launch
	for i, s := range []*Study{a, b} {
		t, ls := s.ResultLaunches()
		if t == nil || len(ls) == 0 {
			return OpComparison{}, fmt.Errorf("study %s has no usable launches to compare", s.Name())
		}
		launches[i] = ls
		arms[i] = ComparedArm{Study: s.Name(), Env: t.Config.Clone(), Trial: t.Number, Launches: len(ls), Simulated: s.Study.Simulated}
	}
	sizes, band, common := a.LaunchStats.CompareAcross(launches[0], launches[1])
	if len(common) == 0 {
		return OpComparison{}, fmt.Errorf("studies %s and %s measured no size in common", arms[0].Study, arms[1].Study)
	}
	arms[0].ScoreUS, arms[1].ScoreUS = finitePtr(band.BaselineUS), finitePtr(band.CandidateUS)
	oc := OpComparison{Op: a.Study.Op(), Arms: arms, Rows: sizes, Band: band}
	if op := b.Study.Op(); op != oc.Op {
		oc.OpB = op
	}
	return oc, nil
}

// mixed says what differs between two studies' fabrics: simulated or
// real, the profile, and what both recorded of their platforms.
func mixed(a, b *store.Study) []string {
	var out []string
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
