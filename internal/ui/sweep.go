package ui

import (
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// PrintSweep prints a sweep of cfg over n launches: the --json document,
// or the table per size; need is the launches an interval needs, said
// when n is fewer.
func PrintSweep(w io.Writer, asJSON bool, study *store.Study, cfg nccl.Config, n, need int, rows []runresult.SweepRow) error {
	if asJSON {
		return WriteJSON(w, map[string]any{
			"study": study.Name, "collective": study.Op(), "simulated": study.Simulated, "sim_profile": study.Launch.SimProfile,
			"env": cfg.Clone(), "launches": n, "rows": rows,
		})
	}
	fmt.Fprintf(w, "sweep %s: %s%s, %d launch(es)%s\n", study.Name, opPrefix(study), cfg, n,
		simTag(study.Simulated, study.Launch.SimProfile))
	tw := texttable.New(w)
	fmt.Fprintln(tw, "size\ttime µs (95% CI)\tbusbw\talgbw\t")
	intervals := 0
	for _, r := range rows {
		t := fmt.Sprintf("%.1f", r.TimeUS)
		if !math.IsNaN(r.Lo) && !math.IsNaN(r.Hi) && r.Lo != r.Hi && n > 1 {
			t = fmt.Sprintf("%.1f [%.1f, %.1f]", r.TimeUS, r.Lo, r.Hi)
			intervals++
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t\n", nccl.FormatSize(r.Bytes), t, r.BusBW, r.AlgBW)
	}
	tw.Flush()
	if intervals == 0 && len(rows) > 0 {
		fmt.Fprintln(w, noIntervalNote(n, need))
	}
	fmt.Fprintln(w, "(busbw and algbw in GB/s, from the median time)")
	return nil
}

// opPrefix names a study's op other than all-reduce.
func opPrefix(study *store.Study) string {
	if op := study.Op(); op != nccl.AllReduce {
		return string(op) + " "
	}
	return ""
}

func noIntervalNote(n, need int) string {
	if n <= 1 {
		return fmt.Sprintf("(no interval from one launch: --repeats %d or more gives a 95 %% interval over launches)", need)
	}
	return fmt.Sprintf("(no interval: %d launches are too few for a 95 %% interval of a median, which needs %d; use --repeats %d or more)", n, need, need)
}
