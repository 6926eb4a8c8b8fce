package studyrun

import (
	"context"
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// SweepResult is one config's measured curve.
type SweepResult struct {
	Study    *store.Study
	Launches []model.Launch // counted
	Rows     []runresult.SweepRow
}

// SweepLaunchesForInterval is how many launches a sweep needs before its
// rows carry an interval (at model's defaults).
func SweepLaunchesForInterval() int { return model.MinLaunchesForInterval(model.DefaultOptions()) }

// sweepRows summarises the launches per size, with bandwidths recomputed
// from the median time with the benchmark's own bus-bandwidth factor.
func sweepRows(launches []model.Launch, last *benchfmt.Result) []runresult.SweepRow {
	var rows []runresult.SweepRow
	seen := map[int64]bool{}
	for _, r := range benchfmt.SizesOf(last) {
		if seen[r.Nominal()] {
			continue
		}
		seen[r.Nominal()] = true
		sum := model.Summarize(launches, []int64{r.Nominal()}, model.DefaultOptions())
		if len(sum.Sizes) == 0 {
			continue
		}
		s := sum.Sizes[0]
		row := runresult.SweepRow{Bytes: r.Bytes, TimeUS: s.Median, Lo: store.FiniteOr(s.Lo, s.Median), Hi: store.FiniteOr(s.Hi, s.Median)}
		if s.Median > 0 {
			// busbw's factor read from the row: it depends on the op and
			// the ranks only.
			row.AlgBW = float64(r.Bytes) / s.Median / 1e3
			row.BusBW = row.AlgBW
			if r.AlgBW > 0 {
				row.BusBW = row.AlgBW * r.BusBW / r.AlgBW
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// Sweep measures o.Config over min to max, o.Repeats times, as a study of
// its own. A launch that fails is vocab.ErrFabric.
func Sweep(ctx context.Context, st *store.Store, min, max int64, o RepeatOptions) (*SweepResult, error) {
	r, launches, last, failed, err := repeat(ctx, st, vocab.KindSweep, vocab.RoleSweep, vocab.PhaseSweep, min, max, nccl.Band{Min: min, Max: max}.Sizes(), o)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, vocab.Mark(vocab.ErrFabric, fmt.Errorf("launch %d %s: %s (log: nccltune show %s --trials)", r.FailedAt, failed.Outcome, failed.Reason, r.Study.Name))
	}
	if err := r.Finish(""); err != nil {
		return nil, err
	}
	return &SweepResult{Study: r.Study, Launches: launches, Rows: sweepRows(launches, last.Result)}, nil
}
