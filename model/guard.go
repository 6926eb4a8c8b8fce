package model

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// GuardInput is one guarded collective: the baseline's and the candidate's
// launches of it, measured interleaved, and the sizes it is judged at.
type GuardInput struct {
	Name                string
	Baseline, Candidate []Launch
	Sizes               []int64
	// BoundAlpha is the level of each size's Upper bound (0: Options.Alpha).
	BoundAlpha float64
}

// GuardResult is the verdict on one guarded collective.
type GuardResult struct {
	Name string `json:"op"`
	// Speedup is the baseline's score ÷ the candidate's over Sizes.
	Speedup float64 `json:"speedup"`
	// Lo and Hi bound the speedup with confidence 1−Alpha (Student's t,
	// spread pooled over every guarded op); NaN below two launches an arm.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// CILevel is the confidence of [Lo, Hi], 1 − Alpha.
	CILevel float64 `json:"ci_level"`
	// Sizes are the per-size speedups with each size's test.
	Sizes []SizeGuard `json:"sizes"`
	// Slower: at some size Holm's procedure rejected and the speedup is ≤
	// 1/(1+MinEffect): the recommendation is refused. Worst is the slowest
	// such size, or else the worst size; P and Level are its test's.
	Slower       bool    `json:"slower"`
	Worst        int64   `json:"worst_bytes"`
	WorstSpeedup float64 `json:"worst_speedup"`
	P            float64 `json:"p"`
	Level        float64 `json:"level"`
	BaselineN    int     `json:"baseline_n"`
	CandidateN   int     `json:"candidate_n"`
}

// SizeGuard is one size of a guarded collective: the ratio of medians and
// the one-sided test of "the candidate is slower here".
type SizeGuard struct {
	Bytes   int64   `json:"bytes"`
	Speedup float64 `json:"speedup"`
	P       float64 `json:"p"`
	Level   float64 `json:"level"`
	// Significant: Holm's procedure rejected "not slower" here; Slower:
	// significant and by at least the minimum effect.
	Significant bool `json:"significant"`
	Slower      bool `json:"slower"`
	// Upper is the one-sided upper bound at BoundAlpha on the candidate's
	// time ÷ the baseline's (Student's t on this size's own two arms); NaN
	// below two launches an arm. Below 1+m the candidate is not slower by m.
	Upper float64 `json:"upper"`
}

// CompareGuards judges the guarded collectives of a recommendation
// together: at each size of each collective, a one-sided Student t test
// of "the candidate's mean log time is higher", the spread pooled over
// every (collective, size) and arm; Holm's procedure across all of them
// at Options.Alpha; a size is Slower when rejected with speedup ≤
// 1/(1+MinEffect). Per size, so that a slowdown at one size is not
// averaged away; t, not Mann-Whitney, because guards get few launches
// (Mann-Whitney's smallest one-sided p with 4 and 4 is 1/70).
func CompareGuards(in []GuardInput, opt Options) []GuardResult {
	opt, _ = opt.resolve()
	out := make([]GuardResult, len(in))
	type cell struct {
		op, size int
		b, c     []float64
	}
	var cells []cell
	var groups, opGroups [][]float64
	opLogs := make([][2][]float64, len(in))
	for i, g := range in {
		r := GuardResult{Name: g.Name, Lo: math.NaN(), Hi: math.NaN(), CILevel: 1 - opt.Alpha, P: 1, Speedup: math.NaN(), WorstSpeedup: math.NaN()}
		ab, ac := analyse(g.Baseline, g.Sizes, true), analyse(g.Candidate, g.Sizes, true)
		bs, cs := ab.summary(opt), ac.summary(opt)
		r.Speedup = bs.ScoreUS / cs.ScoreUS
		r.BaselineN, r.CandidateN = len(bs.LaunchScores), len(cs.LaunchScores)
		for k := range bs.Sizes {
			if k >= len(cs.Sizes) {
				break
			}
			c := cell{op: i, size: len(r.Sizes), b: logs(ab.column(k, nil)), c: logs(ac.column(k, nil))}
			r.Sizes = append(r.Sizes, SizeGuard{Bytes: bs.Sizes[k].Bytes, Speedup: bs.Sizes[k].Median / cs.Sizes[k].Median, P: 1,
				Upper: upperRatio(c.b, c.c, g.BoundAlpha, opt)})
			cells = append(cells, c)
			groups = append(groups, c.b, c.c)
		}
		opLogs[i] = [2][]float64{logs(bs.LaunchScores), logs(cs.LaunchScores)}
		opGroups = append(opGroups, opLogs[i][0], opLogs[i][1])
		out[i] = r
	}
	// The op's interval, from its launch scores.
	if sd, df := PooledSD(opGroups); df > 0 && !math.IsNaN(sd) {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}
		crit := t.Quantile(1 - opt.Alpha/2)
		for i := range out {
			b, c := opLogs[i][0], opLogs[i][1]
			if len(b) == 0 || len(c) == 0 {
				continue
			}
			d := mean(c) - mean(b)
			se := max(sd, 1e-9) * math.Sqrt(1/float64(len(b))+1/float64(len(c)))
			out[i].Lo, out[i].Hi = math.Exp(-d-crit*se), math.Exp(-d+crit*se)
		}
	}
	// The size tests, Holm across every cell.
	sd, df := PooledSD(groups)
	if df > 0 && !math.IsNaN(sd) {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}
		for _, c := range cells {
			if len(c.b) == 0 || len(c.c) == 0 {
				continue
			}
			// d > 0: the candidate's times are higher, it is slower.
			d := mean(c.c) - mean(c.b)
			se := max(sd, 1e-9) * math.Sqrt(1/float64(len(c.b))+1/float64(len(c.c)))
			out[c.op].Sizes[c.size].P = 1 - t.CDF(d/se)
		}
		var all []*SizeGuard
		for i := range out {
			for k := range out[i].Sizes {
				all = append(all, &out[i].Sizes[k])
			}
		}
		holm(all, opt)
	}
	for i := range out {
		r := &out[i]
		for _, sg := range r.Sizes {
			worse := math.IsNaN(r.WorstSpeedup) || sg.Speedup < r.WorstSpeedup
			if sg.Slower && (!r.Slower || worse) || !sg.Slower && !r.Slower && worse {
				r.Worst, r.WorstSpeedup, r.P, r.Level = sg.Bytes, sg.Speedup, sg.P, sg.Level
				r.Slower = r.Slower || sg.Slower
			}
		}
	}
	return out
}

// upperRatio is the one-sided (1−alpha) upper bound on exp(mean(c) −
// mean(b)) for log times (alpha 0: opt.Alpha); NaN below two an arm.
func upperRatio(b, c []float64, alpha float64, opt Options) float64 {
	if alpha <= 0 {
		alpha = opt.Alpha
	}
	sd, df := PooledSD([][]float64{b, c})
	if len(b) < 2 || len(c) < 2 || df == 0 || math.IsNaN(sd) {
		return math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}
	se := max(sd, 1e-9) * math.Sqrt(1/float64(len(b))+1/float64(len(c)))
	return math.Exp(mean(c) - mean(b) + t.Quantile(1-alpha)*se)
}

// holm applies Holm's step-down procedure to the tests' p-values at
// alpha: the k-th smallest is tested at alpha/(m−k+1) until one fails.
func holm(tests []*SizeGuard, opt Options) {
	sort.SliceStable(tests, func(a, b int) bool { return tests[a].P < tests[b].P })
	m := len(tests)
	rejecting := true
	for k, sg := range tests {
		sg.Level = opt.Alpha / float64(m-k)
		if rejecting && sg.P < sg.Level {
			sg.Significant = true
			sg.Slower = sg.Speedup <= 1/(1+opt.MinEffect)
			continue
		}
		rejecting = false
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
