package benchfmt

import "fmt"

// Limits on what a results row may hold: values past them are damage, not
// nccl-tests output, and a row holding one is dropped with a note, so one
// bad row cannot break every statistic downstream.
const (
	// MaxLineBytes is the longest line the text parser reads (NCCL's are
	// under a kilobyte, topology dumps a few).
	MaxLineBytes = 64 << 10
	// MaxRowBytes is the largest message size a row may have (16 TiB).
	MaxRowBytes int64 = 1 << 44
	// MaxTimeUS is the longest time a row may report: 1000 s.
	MaxTimeUS = 1e9
	// MaxBandwidth is the largest bandwidth a row may report, in GB/s.
	MaxBandwidth = 1e6
)

// CheckTime refuses a time too short for the bytes it moved (algbw over
// MaxBandwidth): bandwidths are recomputed from stored times, so a bound on
// the printed column alone let 1e-300 µs through. The parsers drop such
// rows and the store refuses a launch that holds one.
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
