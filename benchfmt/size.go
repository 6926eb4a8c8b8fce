package benchfmt

// Size is one message size of a launch as nccltune keeps it: the row's
// out-of-place columns and, when the output had them, every iteration's
// time. It is what the store saves per launch (store.Launch.Sizes) and
// what the statistics read (Measured; model.LaunchOf converts).
type Size struct {
	Bytes int64 `json:"bytes"`
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

// SizesOf converts parsed output into sizes: one entry per table row, in
// output order, out-of-place columns, with the per-iteration times when
// the output had them. It returns nil for a nil result.
func SizesOf(r *Result) []Size {
	if r == nil {
		return nil
	}
	out := make([]Size, 0, len(r.Rows))
	for _, row := range r.Rows {
		s := Size{
			Bytes:  row.Bytes,
			Cycle:  row.Cycle,
			TimeUS: row.Out.TimeUS,
			AlgBW:  row.Out.AlgBW,
			BusBW:  row.Out.BusBW,
			Wrong:  row.Out.Wrong,
		}
		if row.Out.Iter != nil && len(row.Out.Iter.TimesUS) > 0 {
			s.Samples = append([]float64(nil), row.Out.Iter.TimesUS...)
		}
		out = append(out, s)
	}
	return out
}

// Measured is what this size measured, for the statistics (model.LaunchOf
// reads it): its bytes and every per-iteration time, or the row's single
// time when the output had no per-iteration samples. A size with neither
// samples nor a positive time measured nothing (nil): the parsers only
// produce one from a JSON row without a time or a text row printing 0.00.
func (z Size) Measured() (bytes int64, timesUS []float64) {
	switch {
	case len(z.Samples) > 0:
		return z.Bytes, z.Samples
	case z.TimeUS > 0:
		return z.Bytes, []float64{z.TimeUS}
	}
	return z.Bytes, nil
}
