package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
)

// VerifyResult is the verdict of a verify (or interleaved compare) run,
// its --json document.
type VerifyResult struct {
	Study    string `json:"study"`
	Verifies string `json:"verifies,omitempty"`
	// BaselineEnv is what the config was compared with ({} for NCCL's
	// defaults).
	BaselineEnv map[string]string `json:"baseline_env"`
	Simulated   bool              `json:"simulated"`
	Env         map[string]string `json:"env"`
	Launches    int               `json:"launches_per_arm"`
	Speedup     float64           `json:"speedup"`
	SpeedupCI   [2]float64        `json:"speedup_ci"`
	PValue      float64           `json:"p_value"`
	Recommend   bool              `json:"significant"`
	Reason      string            `json:"reason"`
	Claimed     *Claim            `json:"claimed"`
	Consistent  bool              `json:"consistent"`
}

// Claim is what the verified search concluded: the speedup it claimed.
type Claim struct {
	Speedup   float64    `json:"speedup"`
	SpeedupCI [2]float64 `json:"speedup_ci"`
}

// VerifyResultOf is the result of ab's interleaved comparison r, with
// launches per arm.
func VerifyResultOf(ab studyrun.AB, r *studyrun.ABResult, launches int) VerifyResult {
	study, rec := r.Study, r.Study.Recommendation
	return VerifyResult{Study: study.Name, Verifies: ab.Verifies, BaselineEnv: ab.Base.Clone(), Simulated: study.Simulated, Env: ab.Cand.Clone(),
		Launches: launches, Speedup: rec.Speedup, SpeedupCI: rec.SpeedupCI, PValue: rec.PValue,
		Recommend: r.Comparison.Recommend, Reason: r.Comparison.Reason, Claimed: (*Claim)(ab.Claim), Consistent: r.Consistent}
}

// PrintVerify prints r: its --json document, or the size table of the
// fresh measurement, its speedup and whether it agrees with the claim.
// study is the verify study, whose recommendation holds the sizes.
func PrintVerify(w io.Writer, asJSON bool, study *store.Study, r VerifyResult) error {
	if asJSON {
		return WriteJSON(w, r)
	}
	printVerify(w, study, r)
	return nil
}

// printVerify prints r as text.
func printVerify(w io.Writer, study *store.Study, r VerifyResult) {
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
	if math.IsNaN(r.Speedup) || r.Recommend {
		return
	}
	fmt.Fprintf(w, "%s\n", r.Reason)
}
