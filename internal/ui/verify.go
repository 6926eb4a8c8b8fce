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
	// The speedup line above is the verdict; the reason adds to it only
	// when there is no gain to act on.
	if math.IsNaN(r.Speedup) || r.Significant {
		return
	}
	fmt.Fprintf(w, "%s\n", r.Reason)
}
