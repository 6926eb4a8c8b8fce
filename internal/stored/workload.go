package stored

// What a study of collectives recorded beyond its one op: its launches
// per op and phase, and its per-op verdicts.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// OpLaunches is how a study's launches were spent on one op, in all and
// per phase, and what the op was to the study (Role; Bands are its
// parts').
type OpLaunches struct {
	Op       nccl.Op        `json:"op"`
	Role     string         `json:"role"`
	Bands    []string       `json:"bands,omitempty"`
	Launches int            `json:"launches"`
	Phases   map[string]int `json:"phases"`
}

// What an op was to a study (OpLaunches.Role).
const (
	RolePart  = "part"
	RoleGuard = "guard"
	RoleOther = "other"
)

// LaunchesByOp counts the study's launches per op and phase, in
// nccl.Ops' order, each op with its role in the study.
func LaunchesByOp(s *store.Study, ls []*store.Launch) []OpLaunches {
	byOp := map[nccl.Op]*OpLaunches{}
	for _, l := range ls {
		op := l.Op.OrAllReduce()
		c := byOp[op]
		if c == nil {
			c = &OpLaunches{Op: op, Role: RoleOther, Phases: map[string]int{}}
			byOp[op] = c
		}
		c.Launches++
		c.Phases[l.Phase]++
	}
	out := []OpLaunches{}
	for _, op := range nccl.Ops {
		c := byOp[op]
		if c == nil {
			continue
		}
		for _, p := range s.Parts() {
			if p.Op.OrAllReduce() == op {
				c.Role, c.Bands = RolePart, append(c.Bands, p.Band.String())
			}
		}
		if c.Role == RoleOther && slices.Contains(s.GuardOps, op) {
			c.Role = RoleGuard
		}
		out = append(out, *c)
	}
	return out
}

// LaunchSpend is how a study's launches divide between the workload's
// parts (every phase of their ops) and the guarded ops.
type LaunchSpend struct {
	Parts  int `json:"parts"`
	Guards int `json:"guards"`
	Other  int `json:"other,omitempty"`
}

// SpendOf sums byOp by role.
func SpendOf(byOp []OpLaunches) LaunchSpend {
	var out LaunchSpend
	for _, c := range byOp {
		switch c.Role {
		case RolePart:
			out.Parts += c.Launches
		case RoleGuard:
			out.Guards += c.Launches
		default:
			out.Other += c.Launches
		}
	}
	return out
}

// Text is the spend in words: "84 launches in all: 80 for the workload's
// parts, 4 for the guarded ops".
func (s LaunchSpend) Text() string {
	line := fmt.Sprintf("%d launches in all: %d for the workload's parts, %d for the guarded ops", s.Parts+s.Guards+s.Other, s.Parts, s.Guards)
	if s.Other > 0 {
		line += fmt.Sprintf(", %d for other ops", s.Other)
	}
	return line
}

// For is what the op was to the study: "part 512K-4M", "guarded" or "—".
func (c OpLaunches) For() string {
	switch c.Role {
	case RolePart:
		return "part " + strings.Join(c.Bands, ", ")
	case RoleGuard:
		return "guarded"
	}
	return "—"
}

// Phases are the phases a study's launches go through, in order.
var Phases = []string{vocab.PhaseWarmup, vocab.PhasePlan, vocab.PhaseExplore, vocab.PhaseRefine, vocab.PhaseConfirm, vocab.PhaseGuard, vocab.PhaseExact, vocab.PhaseExplain}

// PhasesOf are the Phases some op of byOp spent launches on.
func PhasesOf(byOp []OpLaunches) []string {
	var out []string
	for _, p := range Phases {
		if slices.ContainsFunc(byOp, func(c OpLaunches) bool { return c.Phases[p] > 0 }) {
			out = append(out, p)
		}
	}
	return out
}

// OpVerdict is one line of a study's per-op table: a part of the
// workload or a guarded op, what the candidate did to its time and what
// that decided.
type OpVerdict struct {
	Op    nccl.Op
	Kind  string // "part" or "guard"
	Sizes string // "512K-8M", a timed part's "10240×760"
	// Change is the change in time over Sizes with its interval
	// ("+3.1% [-2.0, +8.4]"); Worst the size where the candidate fares
	// worst ("1M +21.0%").
	Change, Worst string
	Verdict       string
}

// OpVerdicts are the recommendation's parts (a workload of several) and
// guarded ops, in that order; none for a study that measured one op.
func OpVerdicts(rec *store.Recommendation) []OpVerdict {
	if rec == nil {
		return nil
	}
	var out []OpVerdict
	for _, p := range rec.Parts {
		v := OpVerdict{Op: p.Op, Kind: "part", Sizes: p.Sizes(), Change: changeCI(p.Speedup, p.SpeedupCI)}
		v.Worst = worstSize(p.PerSize)
		switch {
		case p.Refused && p.RefusedAt > 0 && p.NotShownSafe:
			v.Verdict = fmt.Sprintf("REFUSED the recommendation: not shown safe at %d bytes, the size it calls", p.RefusedAt)
		case p.Refused && p.RefusedAt > 0:
			v.Verdict = fmt.Sprintf("REFUSED the recommendation: slower at %d bytes, the size it calls", p.RefusedAt)
		case p.Refused && p.NotShownSafe:
			v.Verdict = "REFUSED the recommendation: not shown safe (its upper bound is over the margin)"
		case p.Refused:
			v.Verdict = "REFUSED the recommendation: slower by more than the minimum effect"
		case p.NotShownSafe:
			v.Verdict = "not shown safe either (its upper bound is over the margin)"
		case p.Significant && !p.Slower && p.Speedup <= 1:
			v.Verdict = ChangeWords(true, p.Speedup) + ", below the minimum effect"
		default:
			v.Verdict = ChangeWords(p.Significant || p.Slower, p.Speedup)
		}
		out = append(out, v)
	}
	for _, g := range rec.OpGuards {
		v := OpVerdict{Op: g.Op, Kind: "guard", Sizes: SizeRange(g.Sizes)}
		if g.Failed != "" {
			v.Change, v.Verdict = "—", g.Failed
			if g.Refused {
				v.Verdict += ": REFUSED the recommendation"
			}
			out = append(out, v)
			continue
		}
		v.Change = changeCI(g.Speedup, g.SpeedupCI)
		if g.WorstBytes > 0 {
			v.Worst = fmt.Sprintf("%s %s", nccl.FormatSize(g.WorstBytes), ChangeText(g.WorstSpeedup))
		}
		significant := slices.ContainsFunc(g.PerSize, func(s store.GuardSize) bool { return s.Significant })
		switch {
		case math.IsNaN(float64(g.Speedup)): // nothing measured says nothing
			v.Verdict = "not measured"
		case g.Refused:
			v.Verdict = fmt.Sprintf("REFUSED the recommendation: significantly slower at %s", nccl.FormatSize(g.WorstBytes))
		case g.Slower:
			v.Verdict = "significantly slower"
		case significant:
			v.Verdict = "significantly slower somewhere, below the minimum effect"
		default:
			v.Verdict = "not significantly slower"
		}
		out = append(out, v)
	}
	return out
}

// ChangeWords is a comparison's change in words: "significantly faster",
// "significantly slower" or "no significant change".
func ChangeWords(significant bool, speedup float64) string {
	switch {
	case !significant:
		return "no significant change"
	case speedup > 1:
		return "significantly faster"
	}
	return "significantly slower"
}

// OpVerdictLines are OpVerdicts as short lines, for the exports' headers.
func OpVerdictLines(rec *store.Recommendation) []string {
	var out []string
	for _, v := range OpVerdicts(rec) {
		line := fmt.Sprintf("%s (%s) %s: %s", v.Op, v.Kind, v.Sizes, v.Change)
		if v.Worst != "" {
			line += ", worst " + v.Worst
		}
		out = append(out, line+": "+v.Verdict)
	}
	return out
}

// ChangeText is a speedup as the change in time it means ("+21.0%":
// slower), "—" where nothing measured it (NaN: store.JSONFloat's null).
func ChangeText[F ~float64](speedup F) string {
	if !(speedup > 0) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", 100*(1/speedup-1))
}

// changeCI is ChangeText with the interval of the change in time.
func changeCI[F ~float64](speedup F, ci [2]F) string {
	if !(ci[0] > 0) || !(ci[1] > 0) || ci[0] == ci[1] {
		return ChangeText(speedup)
	}
	// The time's change runs the other way from the speedup's.
	return fmt.Sprintf("%s [%+.1f, %+.1f]", ChangeText(speedup), 100*(1/ci[1]-1), 100*(1/ci[0]-1))
}

// worstSize is the size of rows where the candidate fares worst ("8M
// +12.0%"); "" without rows.
func worstSize(rows []store.SizeComparison) string {
	best := -1
	for i, r := range rows {
		if r.Speedup > 0 && (best < 0 || r.Speedup < rows[best].Speedup) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return nccl.FormatSize(rows[best].Bytes) + " " + ChangeText(rows[best].Speedup)
}

// SizeRange is sizes as "512K-8M" when they are consecutive powers of
// two, else "512K, 8M".
func SizeRange(sizes []int64) string {
	if len(sizes) == 0 {
		return "no sizes"
	}
	run := len(sizes) > 2
	for i := 1; i < len(sizes); i++ {
		run = run && sizes[i] == 2*sizes[i-1]
	}
	if run {
		return nccl.FormatSize(sizes[0]) + "-" + nccl.FormatSize(sizes[len(sizes)-1])
	}
	return nccl.FormatSizes(sizes, ", ")
}

// ScoreName is what a config's score is called wherever it is shown.
func ScoreName(s *store.Study) string {
	switch w := s.Parts(); {
	case w.ScoredByRounds() && w.Timed():
		return "time per step"
	case w.ScoredByRounds():
		return "workload score"
	}
	return "band score"
}

// Objective says what a study of several parts (or of calls) scores a
// config by, in the words every printer uses.
func Objective(s *store.Study) string {
	if s.Parts().Timed() {
		return "the time per step, Σ calls × time, each call guarded at its own size"
	}
	return "its parts' band scores weighed geometrically"
}
