// Package testgc makes a test binary collect garbage less often: at Go's
// default the collector took a tenth to a sixth of the CPU of the tests
// that import it. nccltune itself never imports this.
package testgc

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC the tests run with.
const Percent = 400

func init() {
	if os.Getenv("GOGC") == "" { // a GOGC set by hand still wins
		debug.SetGCPercent(Percent)
	}
}
