package benchfmt

import "fmt"

// Limits on what a results row may hold. Values past them are not
// nccl-tests output but damage (a corrupted file, a hand edit, a hostile
// input); a row holding one is dropped with a note naming it, so one bad
// row cannot break every table and every statistic downstream.
const (
	// MaxLineBytes is the longest line the text parser reads; nccl-tests
	// and NCCL lines are under a kilobyte, topology dumps a few.
	MaxLineBytes = 64 << 10
	// MaxRowBytes is the largest message size a row may have (16 TiB,
	// far past any GPU's memory).
	MaxRowBytes int64 = 1 << 44
	// MaxTimeUS is the longest time a row may report: 1000 s for one
	// collective.
	MaxTimeUS = 1e9
	// MaxBandwidth is the largest bandwidth a row may report, in GB/s.
	MaxBandwidth = 1e6
)

// CheckTime refuses a time too short for the bytes it moved: every
// bandwidth is computed from the time (the parsers' algbw and busbw
// columns are nccl-tests' own, but the statistics, show and compare
// recompute them from the stored times), so a bound on the printed column
// alone let 1e-300 µs through as a 300-digit busbw. The bound is
// MaxBandwidth of algbw, far past any fabric. It is the one check of a
// time's plausibility: the parsers drop such rows with a note and the
// store refuses a launch that holds one.
func CheckTime(bytes int64, timeUS float64) error {
	if timeUS <= 0 || bytes <= 0 {
		return nil
	}
	if algbw := float64(bytes) / (timeUS * 1e3); algbw > MaxBandwidth {
		return fmt.Errorf("its time %g µs for %d bytes would be %.3g GB/s, not plausible (over %g GB/s)", timeUS, bytes, algbw, float64(MaxBandwidth))
	}
	return nil
}

// CheckSize is CheckTime for a stored size: its time and each sample.
func CheckSize(z Size) error {
	if err := CheckTime(z.Bytes, z.TimeUS); err != nil {
		return err
	}
	for _, t := range z.Samples {
		if err := CheckTime(z.Bytes, t); err != nil {
			return fmt.Errorf("a sample: %w", err)
		}
	}
	return nil
}

// checkRow is CheckTime for a parsed row: both sides' times and samples.
func checkRow(r *Row) error {
	for _, m := range []*Measure{&r.Out, r.In} {
		if m == nil {
			continue
		}
		z := Size{Bytes: r.Bytes, TimeUS: m.TimeUS}
		if m.Iter != nil {
			z.Samples = m.Iter.TimesUS
		}
		if err := CheckSize(z); err != nil {
			return err
		}
	}
	return nil
}
