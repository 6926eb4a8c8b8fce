package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
)

// PrintVerify prints r: its --json document, or the size table of the
// fresh measurement, its speedup and whether it agrees with the claim.
// study is the verify study, whose recommendation holds the sizes.
func PrintVerify(w io.Writer, asJSON bool, study *store.Study, r studyrun.VerifyResult) error {
	if asJSON {
		return WriteJSON(w, r)
	}
	printVerify(w, study, r)
	return nil
}

// printVerify prints r as text.
func printVerify(w io.Writer, study *store.Study, r studyrun.VerifyResult) {
	if r.Verifies != "" {
		fmt.Fprintf(w, "\nverify %s of %s: %s against %s, %d vs %d interleaved launches", r.Study, r.Verifies, nccl.Config(r.Env), BaselineName(r.BaselineEnv), r.Launches, r.Launches)
	} else {
		fmt.Fprintf(w, "\ncompare %s: B %s against A %s, %d vs %d interleaved launches", r.Study, nccl.Config(r.Env), nccl.Config(r.BaselineEnv), r.Launches, r.Launches)
	}
	if r.Simulated {
		fmt.Fprintf(w, "  [%s]", SimLabel(true, study.Launch.SimProfile))
	}
	fmt.Fprintln(w)
	if r.Verifies == "" {
		printSizeTableAs(w, study.Recommendation, "A", "B")
		fmt.Fprintf(w, "\nB is %.2f× as fast as A [%.2f, %.2f] (95%% CI), p=%.3g\n", r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.PValue)
	} else {
		printSizeTable(w, study.Recommendation)
		fmt.Fprintf(w, "\nfresh speedup %.2f× [%.2f, %.2f] (95%% CI), p=%.3g\n", r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.PValue)
	}
	if r.Claimed != nil {
		verdict := "consistent with"
		if !r.Consistent {
			verdict = "NOT consistent with"
		}
		fmt.Fprintf(w, "%s the search's claim of %.2f× [%.2f, %.2f]\n", verdict, r.Claimed.Speedup, r.Claimed.SpeedupCI[0], r.Claimed.SpeedupCI[1])
	}
	if t := r.TunerPlugin; t != nil {
		printTunerVerify(w, r, t)
	}
	// The speedup line above is the verdict; the reason adds to it only
	// when there is no gain to act on.
	if math.IsNaN(r.Speedup) || r.Significant {
		return
	}
	fmt.Fprintf(w, "%s\n", r.Reason)
}

// printTunerVerify says what the plugin did in its debug launch, its
// warnings, and whether the CSV reproduces the study's gain.
func printTunerVerify(w io.Writer, r studyrun.VerifyResult, t *studyrun.TunerVerify) {
	fmt.Fprintf(w, "\ntuner CSV through %s (debug launch first):\n", t.Plugin)
	if t.Check != nil {
		for _, line := range tunerLines(t.Check) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	for _, wa := range t.Warnings {
		fmt.Fprintf(w, "[%s]\n", wa.Code)
		writeWrapped(w, "  ", wa.Message, 100)
		writeWrapped(w, "  fix: ", wa.Fix, 100)
	}
	if r.Claimed == nil {
		return
	}
	verdict := "reproduces"
	if !t.Reproduces {
		verdict = "does NOT reproduce"
	}
	fmt.Fprintf(w, "the tuner CSV %s the study's gain: %.2f× [%.2f, %.2f] against the claimed %.2f× [%.2f, %.2f]\n",
		verdict, r.Speedup, r.SpeedupCI[0], r.SpeedupCI[1], r.Claimed.Speedup, r.Claimed.SpeedupCI[0], r.Claimed.SpeedupCI[1])
}
