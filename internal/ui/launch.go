package ui

import (
	"fmt"
	"io"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// The lines that report each launch on stderr as it ends.

// studySuffix marks a line about a simulated study as simulated.
func studySuffix(st *store.Study) string { return simSuffix(st.Launch.SimProfile, st.Simulated) }

// simSuffix is " — SIMULATED fabric: profile" when simulated, else "".
func simSuffix(profile string, simulated bool) string {
	if simulated {
		return " — " + SimLabel(profile)
	}
	return ""
}

// SweepStarted prints what a sweep study measures: cfg from min to max bytes.
func SweepStarted(w io.Writer, cfg nccl.Config, min, max int64) func(*store.Study) {
	return func(study *store.Study) {
		fmt.Fprintf(w, "sweep %s: %s%s, %s to %s%s\n", study.Name, opPrefix(study), cfg, nccl.FormatSize(min), nccl.FormatSize(max), studySuffix(study))
	}
}

// GateStarted prints what a gate study judges: cfg at the thresholds.
func GateStarted(w io.Writer, cfg nccl.Config, ths []fabric.Threshold) func(*store.Study) {
	return func(study *store.Study) {
		fmt.Fprintf(w, "gate %s: %s%s at %s%s\n", study.Name, opPrefix(study), cfg, ThresholdList(ths), studySuffix(study))
	}
}

// ABStarted prints what an interleaved comparison of kind (verify,
// compare) measures: cand against base, launches each.
func ABStarted(w io.Writer, kind string, base, cand nccl.Config, launches int) func(*store.Study) {
	return func(study *store.Study) {
		fmt.Fprintf(w, "%s %s: %s%s against %s, %d launches each, interleaved%s\n",
			kind, study.Name, opPrefix(study), cand, BaselineName(base), launches, studySuffix(study))
		writeNotGuarded(w, study)
	}
}

// SearchPlan is what a search study sets out to do, as its first line
// says it (the command reads it off search.Options): its guarded ops are
// launched GuardLaunches times per arm, at GuardOpSizes.
type SearchPlan struct {
	Workload      nccl.Workload
	Band          nccl.Band
	Configs       int
	Budget        int
	GuardOps      []nccl.Op
	GuardOpSizes  []int64
	GuardLaunches int
}

// SearchStarted prints what a search study tunes and where it is stored
// (created when the database is new).
func SearchStarted(w io.Writer, study *store.Study, so SearchPlan, db string, created bool) {
	if so.Workload.ScoredByRounds() {
		fmt.Fprintf(w, "study %s: workload %s (one launch per op per measurement), %d configs in the space, budget %d launches%s\n",
			study.Name, so.Workload, so.Configs, so.Budget, studySuffix(study))
	} else {
		fmt.Fprintf(w, "study %s: %sband %s (%d sizes), %d configs in the space, budget %d launches%s\n",
			study.Name, opPrefix(study), so.Band, len(so.Band.Sizes()), so.Configs, so.Budget, studySuffix(study))
	}
	if len(so.GuardOps) > 0 {
		fmt.Fprintf(w, "guarded ops: %s at %s, %d launches per arm each for a recommended config\n",
			nccl.JoinOps(so.GuardOps), stored.SizeRange(so.GuardOpSizes), so.GuardLaunches)
	}
	writeNotGuarded(w, study)
	fmt.Fprintln(w, WhereStored(db, created))
}

// OutcomeText is "ok", or the launch's outcome and why.
func OutcomeText(l *benchfmt.Launch) string {
	if l.Outcome == benchfmt.OK {
		return "ok"
	}
	return string(l.Outcome) + ": " + l.Reason
}

// RepeatProgress prints each launch of a repeated config (sweep, gate).
func RepeatProgress(w io.Writer) func(n, total int, phase string, l *benchfmt.Launch) {
	return func(n, total int, phase string, l *benchfmt.Launch) {
		fmt.Fprintf(w, "launch %d/%d %s: %s (%s)\n", n, total, phase, OutcomeText(l), l.Duration.Round(time.Millisecond))
	}
}

// ABProgress prints each launch of an interleaved comparison (verify,
// compare) with its arm's config.
func ABProgress(w io.Writer) func(n, total int, phase string, cfg nccl.Config, l *benchfmt.Launch) {
	return func(n, total int, phase string, cfg nccl.Config, l *benchfmt.Launch) {
		fmt.Fprintf(w, "launch %d/%d %-7s %-40s %s (%s)\n", n, total, phase, cfg, OutcomeText(l), l.Duration.Round(time.Millisecond))
	}
}

// DoctorProgress prints doctor's debug launches: before the first (cfg
// empty, l nil), before the second with cfg, and each as it ends (l).
func DoctorProgress(w io.Writer, min, max int64, simProfile string) func(cfg nccl.Config, l *benchfmt.Launch) {
	return func(cfg nccl.Config, l *benchfmt.Launch) {
		switch {
		case l != nil:
			fmt.Fprintf(w, "doctor: launch %s (%s)\n", OutcomeText(l), l.Duration.Round(time.Millisecond))
		case len(cfg) > 0:
			fmt.Fprintf(w, "doctor: a second debug launch with %s\n", cfg)
		default:
			fmt.Fprintf(w, "doctor: one debug launch, %s to %s%s\n",
				nccl.FormatSize(min), nccl.FormatSize(max), simSuffix(simProfile, simProfile != ""))
		}
	}
}
