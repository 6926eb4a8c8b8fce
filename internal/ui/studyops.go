package ui

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// addOpFields adds the per-op fields to a search or show document: the
// workload, its parts and guarded ops as confirmed, the calls taken out,
// and the launches per op and phase.
func addOpFields(doc map[string]any, study *store.Study, launches []*store.Launch) {
	parts, guards := []store.PartComparison{}, []store.OpGuard{}
	if rec := study.Recommendation; rec != nil {
		parts = append(parts, rec.Parts...)
		guards = append(guards, rec.OpGuards...)
	}
	doc["workload"] = append([]store.Part{}, study.Workload...)
	doc["parts"] = parts
	doc["guards"] = guards
	doc["guard_ops"] = append([]nccl.Op{}, study.GuardOps...)
	doc["guard_ops_skipped"] = append([]string{}, study.GuardOpsSkipped...)
	takenOut := []string{}
	for _, ch := range study.TakenOut() {
		takenOut = append(takenOut, ch.String())
	}
	doc["taken_out"] = takenOut
	byOp := stored.LaunchesByOp(study, launches)
	doc["launches_by_op"] = byOp
	doc["launches_spent"] = stored.SpendOf(byOp)
}

// writeOpTables prints the parts, the guarded ops and the launches per op
// of a study that measured more than one op.
func writeOpTables(w io.Writer, study *store.Study, launches []*store.Launch) {
	rec := study.Recommendation
	byOp := stored.LaunchesByOp(study, launches)
	if rec != nil && len(rec.Parts) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "parts (confirmation launches, interleaved; the objective: %s):\n", stored.Objective(study))
		tw := texttable.New(w)
		fmt.Fprintf(tw, "part\tweight\tbaseline µs\tcandidate µs\tspeedup (%s)\tverdict\n", store.PartsCILevel(rec.Parts).Label())
		verdicts := stored.OpVerdicts(rec)
		for i, p := range rec.Parts {
			fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.1f\t×%.3f [%.3f, %.3f]\t%s\n", p.Name(), p.Weight, p.BaselineScoreUS, p.ScoreUS,
				p.Speedup, p.SpeedupCI[0], p.SpeedupCI[1], verdicts[i].Verdict)
		}
		tw.Flush()
	}
	if rec != nil && len(rec.OpGuards) > 0 {
		writeGuardTable(w, study)
	} else if len(study.GuardOps) > 0 {
		fmt.Fprintf(w, "\nguarded ops %s: not measured (they are measured only for a config the confirmation recommends)\n", nccl.JoinOps(study.GuardOps))
	}
	writeNotGuarded(w, study)
	if len(byOp) > 1 {
		writeLaunchesByOp(w, byOp)
	}
}

// writeNotGuarded names each default guarded op the study left out, with
// why, and each call taken out of its calls.
func writeNotGuarded(w io.Writer, study *store.Study) {
	for _, s := range study.GuardOpsSkipped {
		fmt.Fprintf(w, "not guarded: %s\n", s)
	}
	for _, line := range stored.TakenOutLines(study) {
		fmt.Fprintln(w, line)
	}
}

// writeGuardTable prints each guarded op's change in time over its sizes
// and at each size ("*" significantly slower, "!" also by more than the
// minimum effect).
func writeGuardTable(w io.Writer, study *store.Study) {
	rec := study.Recommendation
	fmt.Fprintln(w)
	// The count of a row that has launches: an op whose launches failed
	// counts none.
	g0 := rec.OpGuards[0]
	if i := slices.IndexFunc(rec.OpGuards, func(g store.OpGuard) bool { return g.BaselineLaunches+g.CandidateLaunches > 0 }); i >= 0 {
		g0 = rec.OpGuards[i]
	}
	fmt.Fprintf(w, "guarded ops (change in time with the candidate, %d vs %d launches each, interleaved):\n", g0.BaselineLaunches, g0.CandidateLaunches)
	// The columns are every op's sizes (each op may be judged at its own).
	var sizes []int64
	for _, g := range rec.OpGuards {
		sizes = append(sizes, g.Sizes...)
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	tw := texttable.New(w)
	head := []string{"op", "change (" + store.OpGuardsCILevel(rec.OpGuards).Label() + ")"}
	for _, b := range sizes {
		head = append(head, nccl.FormatSize(b))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "verdict"), "\t"))
	// The guards' verdicts follow the parts'.
	verdicts := stored.OpVerdicts(rec)[len(rec.Parts):]
	for i, g := range rec.OpGuards {
		cells := []string{string(g.Op), verdicts[i].Change}
		at := map[int64]store.GuardSize{}
		for _, s := range g.PerSize {
			at[s.Bytes] = s
		}
		for _, b := range sizes {
			s, ok := at[b]
			if !ok {
				cells = append(cells, "—")
				continue
			}
			mark := ""
			switch {
			case s.Slower:
				mark = "!"
			case s.Significant:
				mark = "*"
			}
			cells = append(cells, stored.ChangeText(s.Speedup)+mark)
		}
		fmt.Fprintln(tw, strings.Join(append(cells, verdicts[i].Verdict), "\t"))
	}
	tw.Flush()
	fmt.Fprintf(w, "  * significantly slower (one-sided t test, Holm across every op and size, alpha %g); ! also by more than the minimum effect: refuses the recommendation\n", stored.StatsOf(study).Alpha)
}

// writeLaunchesByOp prints how the study's launches were spent per op and
// phase.
func writeLaunchesByOp(w io.Writer, byOp []stored.OpLaunches) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "launches per op and phase:")
	phases := stored.PhasesOf(byOp)
	tw := texttable.New(w)
	fmt.Fprintln(tw, "op\tfor\t"+strings.Join(phases, "\t")+"\tin all")
	for _, c := range byOp {
		cells := []string{string(c.Op), c.For()}
		for _, p := range phases {
			cells = append(cells, fmt.Sprint(c.Phases[p]))
		}
		fmt.Fprintln(tw, strings.Join(append(cells, fmt.Sprint(c.Launches)), "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w, "  "+stored.SpendOf(byOp).Text())
}
