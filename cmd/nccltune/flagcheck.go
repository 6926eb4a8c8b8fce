package main

import (
	"math"
)

// Checks of flag values that need no database: a bad value is a usage
// error (exit 2) found before anything is opened, stored or launched.
// (Sizes, bands and K=V lists are checked as they are set: see
// internal/flagvalue.)

// checkFinite refuses a non-finite value of a number flag.
func checkFinite(flag string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return usageErrorf("--%s %v: give a finite number", flag, x)
	}
	return nil
}
