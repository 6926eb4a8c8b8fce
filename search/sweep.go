package search

import (
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
)

// SweepRange is the smallest and largest message size a launch of op
// sweeps in the study o describes; re-measurements sweep through it too.
func SweepRange(o Options, op nccl.Op) (lo, hi int64) {
	parts := o.Parts()
	if len(parts.Sizes(op)) == 0 {
		sizes := o.GuardOpSizes()
		if len(sizes) == 0 {
			return 0, 0
		}
		return sizes[0], sizes[len(sizes)-1]
	}
	return sweepFor(parts, op, o.Guard)
}

// sweepFor is the range a launch of one of the workload's ops covers:
// its parts' bands and the guard sizes.
func sweepFor(parts nccl.Workload, op nccl.Op, guard []int64) (lo, hi int64) {
	lo = math.MaxInt64
	for _, p := range parts {
		if p.Op.OrAllReduce() != op.OrAllReduce() {
			continue
		}
		// The band's powers of two: nccl-tests doubles from -b, so the
		// band's own ends (3M-5M) would miss its sizes (4M).
		bLo, bHi := p.Band.Sweep()
		lo, hi = min(lo, bLo), max(hi, bHi)
	}
	for _, g := range guard {
		lo, hi = min(lo, g), max(hi, g)
	}
	return lo, hi
}
