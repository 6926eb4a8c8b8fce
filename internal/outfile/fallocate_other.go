//go:build !linux

package outfile

import "os"

// fallocate is Linux's; elsewhere reserve writes a probe file instead.
func fallocate(*os.File, int64) error { return errNoFallocate }
