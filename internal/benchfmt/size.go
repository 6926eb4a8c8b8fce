package benchfmt

import "github.com/nccltune/nccltune/internal/nccl"

// Size is one message size of a launch as the store keeps it: the row's
// out-of-place columns and every iteration's time when the output had them.
type Size struct {
	// Bytes is nccl-tests' size column.
	Bytes int64 `json:"bytes"`
	// Requested is the size the sweep asked for when the op's size column
	// rounded it down (512K all-gathered on 3 ranks prints 524256); 0 when
	// the column is the size asked for.
	Requested int64 `json:"requested,omitempty"`
	// Cycle counts nccl-tests -N repetitions from 0.
	Cycle  int     `json:"cycle,omitempty"`
	TimeUS float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw"`
	BusBW  float64 `json:"busbw"`
	// Wrong is nccl-tests' #wrong, nil when not checked.
	Wrong *int64 `json:"wrong"`
	// Samples are the per-iteration times in µs (nccl-tests -I 1 -J).
	Samples []float64 `json:"samples,omitempty"`
}

// SizesOf converts parsed output into sizes, one per table row; nil for a nil result.
func SizesOf(r *Result) []Size {
	if r == nil {
		return nil
	}
	out := make([]Size, 0, len(r.Rows))
	for _, row := range r.Rows {
		s := Size{
			Bytes:     row.Bytes,
			Requested: requestedSize(r.Op(), r.NRanks, row.Bytes),
			Cycle:     row.Cycle,
			TimeUS:    row.Out.TimeUS,
			AlgBW:     row.Out.AlgBW,
			BusBW:     row.Out.BusBW,
			Wrong:     row.Out.Wrong,
		}
		if row.Out.Iter != nil && len(row.Out.Iter.TimesUS) > 0 {
			s.Samples = append([]float64(nil), row.Out.Iter.TimesUS...)
		}
		out = append(out, s)
	}
	return out
}

// Nominal is the size a study names the row by: the size asked for
// (Requested) where the op's size column rounded it down, else Bytes.
func (z Size) Nominal() int64 {
	if z.Requested > 0 {
		return z.Requested
	}
	return z.Bytes
}

// requestedSize undoes nccl-tests' rounding of the ops that split a buffer
// among n ranks (each share is rounded down to 16 bytes): the power of two
// at most 16n above the column, which nccltune's sweeps ask for; 0 when
// there is none.
func requestedSize(op nccl.Op, n int, printed int64) int64 {
	if !op.Splits() || n < 2 || printed <= 0 {
		return 0
	}
	p := int64(1)
	for p < printed {
		p <<= 1
	}
	if p == printed || p-printed >= 16*int64(n) {
		return 0
	}
	return p
}

// Measured is what this size measured, for the statistics: its nominal
// bytes and every per-iteration time, or the row's single time; nil when
// it has neither samples nor a positive time.
func (z Size) Measured() (bytes int64, timesUS []float64) {
	switch {
	case len(z.Samples) > 0:
		return z.Nominal(), z.Samples
	case z.TimeUS > 0:
		return z.Nominal(), []float64{z.TimeUS}
	}
	return z.Nominal(), nil
}
