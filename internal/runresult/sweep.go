package runresult

// SweepRow is one size of a sweep's result.
type SweepRow struct {
	Bytes  int64   `json:"bytes"`
	TimeUS float64 `json:"time_us"`
	Lo     float64 `json:"time_lo_us"`
	Hi     float64 `json:"time_hi_us"`
	BusBW  float64 `json:"busbw"`
	AlgBW  float64 `json:"algbw"`
}
