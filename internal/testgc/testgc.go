// Package testgc makes a test binary collect garbage less often. The test
// files of the packages whose tests allocate the most (cmd/nccltune,
// search, model) import it for that alone:
//
//	import _ "github.com/nccltune/nccltune/internal/testgc"
//
// Their tests run thousands of searches, launches and statistical draws in
// a few seconds, and at Go's default (GOGC=100) the collector took a
// tenth to a sixth of their CPU. A test binary lives for seconds with a
// live heap of tens of megabytes, so letting the heap grow further between
// collections costs little memory. nccltune itself never imports this.
package testgc

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC the tests run with: the heap may grow to five times
// what is live before a collection, where Go's default allows two.
const Percent = 400

func init() {
	if os.Getenv("GOGC") == "" { // a GOGC set by hand still wins
		debug.SetGCPercent(Percent)
	}
}
