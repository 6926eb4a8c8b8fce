package main

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
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

// spaceCheckLimit bounds how many configs checkSpaceHasCandidates
// enumerates; a larger space is sampled.
const spaceCheckLimit = 200_000

// checkSpaceHasCandidates refuses a space in which no config other than
// NCCL's defaults is valid (for instance --space NCCL_MAX_NCHANNELS=4
// --space NCCL_MIN_NCHANNELS=8 --space-only): such a search can only
// "keep the defaults" without measuring anything.
func checkSpaceHasCandidates(space search.Space, base map[string]string) error {
	if len(space) == 0 {
		return nil
	}
	var firstErr error
	valid := func(cfg nccl.Config) bool {
		if len(cfg) == 0 {
			return false
		}
		all := nccl.Config{}
		for k, v := range base {
			if nccl.IsKnob(k) {
				all[k] = v
			}
		}
		for k, v := range cfg {
			all[k] = v
		}
		err := all.Validate()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return err == nil
	}
	if space.Size() <= spaceCheckLimit {
		idx := make([]int, len(space))
		for {
			if valid(space.Config(idx)) {
				return nil
			}
			i := len(idx) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(space[i].Choices) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	} else {
		rng := rand.New(rand.NewSource(1))
		for range spaceCheckLimit {
			if valid(space.Random(rng)) {
				return nil
			}
		}
	}
	why := "every config in it is NCCL's defaults"
	if firstErr != nil {
		why = fmt.Sprintf("no config in it besides NCCL's defaults is valid (%v)", firstErr)
	}
	return usageErrorf("the search space has nothing to try: %s; widen --space or drop --space-only", why)
}
