package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// PrintVerify prints r: its --json document, or the size table of the
// fresh measurement, its speedup and whether it agrees with the claim.
// study is the verify study, whose recommendation holds the sizes.
func PrintVerify(w io.Writer, asJSON bool, study *store.Study, launches []*store.Launch, r runresult.VerifyResult) error {
	if asJSON {
		byOp := stored.LaunchesByOp(study, launches)
		return WriteJSON(w, withFields(r, map[string]any{"launches_by_op": byOp, "launches_spent": stored.SpendOf(byOp)}))
	}
	printVerify(w, study, launches, r)
	return nil
}

func printVerify(w io.Writer, study *store.Study, launches []*store.Launch, r runresult.VerifyResult) {
	tag := simTag(r.Simulated, study.Launch.SimProfile)
	if r.Verifies == "" {
		fmt.Fprintf(w, "\ncompare %s: B %s against A %s, %d vs %d interleaved launches%s\n", r.Study, nccl.Config(r.Env), nccl.Config(r.BaselineEnv), r.Launches, r.Launches, tag)
		printSizeTable(w, study.Recommendation, "A", "B")
		fmt.Fprintf(w, "\nB is %.2f× as fast as A [%.2f, %.2f] (%s), p=%.3g\n", r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.CILevel.Label(), r.PValue)
	} else {
		fmt.Fprintf(w, "\nverify %s of %s: %s against %s, %d vs %d interleaved launches%s\n", r.Study, r.Verifies, nccl.Config(r.Env), BaselineName(r.BaselineEnv), r.Launches, r.Launches, tag)
		printSizeTable(w, study.Recommendation, "baseline", "candidate")
		what := "fresh speedup"
		if study.Parts().ScoredByRounds() || study.Parts().Timed() {
			what = "fresh workload speedup (the study's objective: " + stored.Objective(study) + ")"
		}
		fmt.Fprintf(w, "\n%s %.2f× [%.2f, %.2f] (%s), p=%.3g\n", what, r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.CILevel.Label(), r.PValue)
	}
	if r.Claimed != nil {
		verdict := "NOT consistent with"
		if r.Consistent {
			verdict = "consistent with"
		}
		fmt.Fprintf(w, "%s the search's claim of %.2f× [%.2f, %.2f]\n", verdict, r.Claimed.Speedup, r.Claimed.SpeedupCI[0], r.Claimed.SpeedupCI[1])
	}
	writeOpTables(w, study, launches)
	if t := r.TunerPlugin; t != nil {
		printTunerVerify(w, study, r, t)
	}
	if r.Refused != "" {
		fmt.Fprintf(w, "\nrefused: %s\n  %s\n", safetext.Escape(r.Verdict), safetext.Escape(r.Reason))
		return
	}
	// The reason adds to the speedup line only when there is no gain.
	if math.IsNaN(r.Speedup) || r.Significant {
		return
	}
	fmt.Fprintf(w, "%s\n", safetext.Escape(r.Reason))
}

// printTunerVerify says what the plugin did in its debug launch (text
// from outside: escaped), its warnings, and whether the CSV reproduces
// the study's gain.
func printTunerVerify(w io.Writer, study *store.Study, r runresult.VerifyResult, t *runresult.TunerVerify) {
	switch {
	case len(t.PerOp) > 0:
		fmt.Fprintf(w, "\ntuner CSV through %s (a debug launch of each op first):\n", safetext.Escape(t.Plugin))
		for _, c := range t.PerOp {
			if c.Plugin == nil {
				fmt.Fprintf(w, "  %s: no TUNER lines\n", c.Op)
				continue
			}
			for i, line := range tunerLines(c.Plugin) {
				if i == 0 {
					line = string(c.Op) + ": " + line
				}
				fmt.Fprintf(w, "  %s\n", safetext.Escape(line))
			}
		}
		for _, op := range study.Parts().Ops() {
			if _, tuned := op.PerFunction(); !tuned {
				fmt.Fprintf(w, "  %s: no debug launch (it runs as send/recv and never reaches NCCL's tuner)\n", op)
			}
		}
	default:
		fmt.Fprintf(w, "\ntuner CSV through %s (debug launch first):\n", safetext.Escape(t.Plugin))
		if t.Check != nil {
			for _, line := range tunerLines(t.Check) {
				fmt.Fprintf(w, "  %s\n", safetext.Escape(line))
			}
		}
	}
	writeWarnings(w, "", t.Warnings)
	for _, e := range t.EqualByRule {
		fmt.Fprintf(w, "%s at %s: equal by rule, not judged: the CSV keeps NCCL's own choice there (its algorithm and protocol under the baseline, channels 0), as it is written where nothing was proven\n",
			e.Op, stored.SizesText(e.Sizes))
	}
	for _, c := range t.AtOwnSize {
		fmt.Fprintf(w, "%s at %s: measured at the size the process calls (one launch of each arm there after each of its measured launches), judged with the sizes above\n",
			c.Op, stored.SizesText(c.Sizes))
	}
	if a := t.PluginAlone; a != nil {
		fmt.Fprintf(w, "\nthe plugin alone (an empty CSV, %d launches interleaved after the CSV's): what loading it changes, beside what the CSV's rows change\n", a.Launches)
		tw := texttable.New(w)
		fmt.Fprintln(tw, "op\tsize\tempty CSV vs baseline\t\tCSV vs empty CSV\t")
		for _, s := range a.Sizes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Op, nccl.FormatSize(s.Bytes),
				stored.ChangeText(s.Plugin.Speedup), s.Plugin.Verdict, stored.ChangeText(s.Rows.Speedup), s.Rows.Verdict)
		}
		tw.Flush()
		fmt.Fprintln(w, "  change in time; the empty CSV runs NCCL's choices as the plugin's init retuned them, and one channel (no row matches)")
	}
	if r.Claimed == nil {
		return
	}
	verdict := "does NOT reproduce"
	if t.Reproduces {
		verdict = "reproduces"
	}
	fmt.Fprintf(w, "the tuner CSV %s the study's gain: %.2f× [%.2f, %.2f] against the claimed %.2f× [%.2f, %.2f]\n",
		verdict, r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.Claimed.Speedup, r.Claimed.SpeedupCI[0], r.Claimed.SpeedupCI[1])
}
