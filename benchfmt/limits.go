package benchfmt

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
