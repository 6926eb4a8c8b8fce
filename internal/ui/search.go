package ui

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/nccltune/nccltune/internal/invocation"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// SearchEnd is how a search ended, as its summary says it (the command
// reads it off search.Result): why exploration stopped (Stopped) and the
// study ended (Ending); Unspent, the launches of the budget it did not
// make (UnspentForGuards of them held for the guarded ops); Settled, why
// more could not have changed the answer ("" when they could); the
// confirmation's Looks of PlannedLooks; Candidate, nil when none was
// confirmed.
type SearchEnd struct {
	Launches, Trials          int
	Stopped, Ending, Settled  string
	Unspent, UnspentForGuards int
	Looks, PlannedLooks       int
	Confirmed                 bool
	Candidate                 nccl.Config
}

// PrintSearch prints a finished search: its --json document, or the table
// of the baseline against the recommendation and the decision in words.
// db is the database it is stored in, for the hints' commands.
func PrintSearch(w io.Writer, asJSON bool, study *store.Study, trials []*store.Trial, launches []*store.Launch, res SearchEnd, took time.Duration, db string) error {
	if asJSON {
		doc := searchJSON(study, res)
		addOpFields(doc, study, launches)
		return WriteJSON(w, doc)
	}
	printSearchResult(w, study, trials, res, took, db)
	if text := stored.BatchText(launches); text != "" {
		fmt.Fprintf(w, "batches: %s\n", text)
	}
	writeOpTables(w, study, launches)
	return nil
}

// searchJSON is the `search --json` document of DESIGN.md's contract.
func searchJSON(study *store.Study, res SearchEnd) map[string]any {
	baseScore := study.Recommendation.BaselineScoreUS
	doc := map[string]any{
		"study":              study.Name,
		"band":               study.Band,
		"simulated":          study.Simulated,
		"sim_profile":        study.Launch.SimProfile,
		"launches":           res.Launches,
		"trials":             res.Trials,
		"trial_count":        res.Trials,
		"stopped":            res.Stopped,
		"ending":             res.Ending,
		"unspent":            res.Unspent,
		"unspent_for_guards": res.UnspentForGuards,
		"settled":            res.Settled,
		"baseline":           map[string]any{"score_us": jsonNumber(baseScore), "env": nonNilMap(study.BaselineEnv)},
		"recommendation":     recommendationJSON(study, study.Recommendation),
		"plans":              study.Plans,
	}
	if w := study.Parts(); w.Timed() && study.Recommendation != nil {
		// A timed workload's objective: the time a step spends in its calls.
		r := study.Recommendation
		doc["time_per_step_us"] = map[string]any{"baseline": positiveOrNull(w.StepUS(r.BaselineScoreUS)), "candidate": positiveOrNull(w.StepUS(r.ScoreUS))}
	}
	return doc
}

// positiveOrNull is x as JSON, null when it is not positive (a score
// never measured is stored as 0).
func positiveOrNull(x float64) any {
	if !(x > 0) {
		return nil
	}
	return jsonNumber(x)
}

// recommendationJSON is the study's recommendation r as search and show
// print it: env is what to run (the baseline, when the study keeps it),
// verdict the conclusion in words, p_value null when no confirmation test
// ran, rather than a number that reads like a result.
func recommendationJSON(study *store.Study, r *store.Recommendation) any {
	if r == nil {
		return nil
	}
	c := stored.ConclusionOf(study)
	run := *r
	run.Env = c.RunEnv()
	verdict, _, _ := c.Headline()
	var p any // null: no test ran
	if r.BaselineLaunches > 0 && r.CandidateLaunches > 0 && !math.IsNaN(r.PValue) {
		p = r.PValue
	}
	return withFields(run, map[string]any{"verdict": verdict, "p_value": p})
}

// planLines say in words what the study did with NCCL's plan.
func planLines(p *store.PlanSummary) []string {
	if p == nil {
		return nil
	}
	head := "NCCL's plan: not read (" + p.Note + ")"
	if p.Read {
		head = fmt.Sprintf("NCCL's plan: %d configs in the space, %d explored, %d distinct plans, ", p.SpaceConfigs, p.ConfigsExplored, p.PlansExplored)
		switch {
		case p.MergedConfigs == 0:
			head += "no config merged"
		case p.MergedConfigs == 1 && len(p.Merged) == 1:
			head += "1 config merged (NCCL runs it like one already tried); the rule that proved it:"
		default:
			head += fmt.Sprintf("%s merged (NCCL runs them like one already tried); the rules that proved it (a config may need several):",
				texttable.Plural(p.MergedConfigs, "config"))
		}
	}
	out := []string{head}
	// A config merged by several rules counts under each: each count is
	// said of the total, never as counts that read as a sum.
	for _, m := range p.Merged {
		out = append(out, fmt.Sprintf("  %d of %d: %s", m.Count, p.MergedConfigs, m.Reason))
	}
	if p.Refused > 0 {
		out = append(out, fmt.Sprintf("  refused %d: they switch on a protocol or algorithm that NCCL's defaults disabled, or that the log does not show enabled (--allow-disabled-protocols to try them)", p.Refused))
	}
	for _, w := range p.WrongResults {
		out = append(out, "  refused after wrong results: "+w)
	}
	if p.Checks > 0 {
		out = append(out, fmt.Sprintf("  %d debug launches settled whether configs run the same plan", p.Checks))
	}
	return out
}

// spentText is the summary's count of launches of the budget, and why
// the study stopped before spending them all.
func spentText(budget int, res SearchEnd) string {
	if budget <= 0 {
		return fmt.Sprintf("%d launches", res.Launches)
	}
	text := fmt.Sprintf("%d of %d launches", res.Launches, budget)
	if res.Unspent <= 0 {
		return text
	}
	why := ""
	switch {
	case res.Settled != "":
		why = "more could not change the answer"
	case res.Stopped == "interrupted":
		why = "interrupted; --resume spends them"
	case res.Stopped == "time":
		// The time left at the mean launch duration could not hold the
		// next stage: "ran out" would read as a lie.
		why = "--time left too little for the next stage"
	case res.Looks > 0 && res.Looks < res.PlannedLooks:
		why = fmt.Sprintf("the confirmation decided (%s) at look %d of %d", res.Ending, res.Looks, res.PlannedLooks)
	case res.Stopped == "space":
		why = "no distinct config was left to explore; ended " + res.Ending
	case res.Ending != "":
		why = "ended " + res.Ending
	}
	if g := res.UnspentForGuards; g > 0 {
		// Not a budget the study chose to leave: the confirmation could
		// not reach it.
		held := fmt.Sprintf("%d held for the guarded ops, measured only beside a recommended config; a larger --budget gives the confirmation more looks", g)
		if why == "" {
			why = held
		} else {
			why += "; " + held
		}
	}
	if why == "" {
		return fmt.Sprintf("%s, %d unspent", text, res.Unspent)
	}
	return fmt.Sprintf("%s, %d unspent (%s)", text, res.Unspent, why)
}

// printSearchResult prints the final table: baseline against the
// recommendation size by size, and the decision in plain words.
func printSearchResult(w io.Writer, study *store.Study, trials []*store.Trial, res SearchEnd, took time.Duration, db string) {
	rec := study.Recommendation
	what := "band " + study.Band
	if study.Parts().ScoredByRounds() {
		what = "workload " + study.Parts().String()
	}
	fmt.Fprintf(w, "\nstudy %s  %s  %s, %d trials, %s%s\n", study.Name, what, spentText(study.Budget.Launches, res), res.Trials,
		took.Round(100*time.Millisecond), simTag(study.Simulated, study.Launch.SimProfile))
	if res.Settled != "" {
		fmt.Fprintf(w, "ended early: %s\n", res.Settled)
	}
	if res.Confirmed {
		fmt.Fprintf(w, "confirmed %d vs %d launches, interleaved: %s against %s\n",
			rec.BaselineLaunches, rec.CandidateLaunches, res.Candidate, BaselineName(study.BaselineEnv))
		printSizeTable(w, rec, "baseline", "candidate")
	}
	fmt.Fprintln(w)
	// The headline can name a path and a reason can quote the benchmark's
	// output: escaped.
	v := stored.VerdictOf(study)
	if v.Change {
		fmt.Fprintf(w, "recommend: %s\n", safetext.Escape(v.Headline))
		if len(study.BaselineEnv) > 0 {
			fmt.Fprintf(w, "  change from your baseline: %s\n", changeText(study.BaselineEnv, rec.Env))
		}
	} else {
		fmt.Fprintln(w, safetext.Escape(v.Headline))
	}
	for _, d := range v.Details {
		fmt.Fprintf(w, "  %s\n", safetext.Escape(d))
	}
	if v.Change {
		// Run the way this nccltune ran (go run before an install).
		fmt.Fprintf(w, "  export it: %s\n", invocation.Line(db, "export", safetext.ShellArg(study.Name), "--format", "env"))
	}
	if line := defaultsLine(study, trials); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, d := range rec.Dropped {
		fmt.Fprintf(w, "  left out %s=%s: %s\n", d.Knob, d.Value, d.Reason)
	}
	for _, line := range planLines(study.Plans) {
		fmt.Fprintln(w, line)
	}
}

// printSizeTable prints per-size medians with intervals and the change,
// the arms named base and cand.
func printSizeTable(w io.Writer, rec *store.Recommendation, base, cand string) {
	tw := texttable.New(w)
	band := append(append([]store.SizeComparison{}, rec.PerSize...), partRows(rec.Parts)...)
	rows := append(band, rec.Guards...)
	ci := store.RowsCILevel(rows).Label()
	fmt.Fprintf(tw, "size\t%s µs (%s)\t%s µs (%s)\tchange\t\n", base, ci, cand, ci)
	for i, s := range rows {
		change := "~"
		if s.Significant {
			change = stored.ChangeText(s.Speedup)
		}
		if i >= len(band) {
			change += " (guard)"
		}
		size := nccl.FormatSize(s.Bytes)
		if s.Op != "" {
			size = string(s.Op) + " " + size
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", size,
			ciText(s.BaselineUS, s.BaselineLo, s.BaselineHi), ciText(s.CandidateUS, s.CandidateLo, s.CandidateHi), change)
	}
	tw.Flush()
}

// partRows are a workload's per-size rows, grouped by op in the parts'
// order, each group by size.
func partRows(parts []store.PartComparison) []store.SizeComparison {
	var ops []nccl.Op
	byOp := map[nccl.Op][]store.SizeComparison{}
	for _, p := range parts {
		if _, ok := byOp[p.Op]; !ok {
			ops = append(ops, p.Op)
		}
		byOp[p.Op] = append(byOp[p.Op], p.PerSize...)
	}
	var out []store.SizeComparison
	for _, op := range ops {
		rows := byOp[op]
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Bytes < rows[j].Bytes })
		out = append(out, rows...)
	}
	return out
}

// defaultsLine says, for a study against the user's baseline, how NCCL's
// defaults did while exploring.
func defaultsLine(study *store.Study, trials []*store.Trial) string {
	def, gain, verdict := stored.DefaultsExplored(study, trials)
	if def == nil {
		return ""
	}
	base := study.Recommendation.BaselineScoreUS
	// Never a signed percentage: "-82 %" reads as a time that shrank.
	change := fmt.Sprintf("%.0f %% faster than", 100*gain)
	if gain < 0 {
		change = fmt.Sprintf("%.2f× slower than", def.ScoreUS/base)
	}
	return fmt.Sprintf("NCCL defaults: %s your baseline while exploring (trial %d, %d launches): %s", change, def.Number, def.Launches, verdict)
}
