package main

import (
	"math"
)

// Checks of flag values that need no database: a bad value is a usage
// error (exit 2) found before anything is opened, stored or launched.

// minElementBytes is the smallest message a collective can move: one
// element (all_reduce_perf's float). nccl-tests rounds smaller sizes to
// zero elements, which measures nothing.
const minElementBytes = 4

// checkFinite refuses a non-finite value of a number flag.
func checkFinite(flag string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return usageErrorf("--%s %v: give a finite number", flag, x)
	}
	return nil
}

// checkElementSize refuses a size below one element.
func checkElementSize(flag string, bytes int64) error {
	if bytes < minElementBytes {
		return usageErrorf("--%s: %d bytes is below one element (%d bytes, a float); nccl-tests cannot measure it — use %d or more", flag, bytes, minElementBytes, minElementBytes)
	}
	return nil
}
