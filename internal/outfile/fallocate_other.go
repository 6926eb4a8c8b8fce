//go:build !linux

package outfile

import (
	"errors"
	"os"
)

// errNoFallocate: the file system cannot reserve space (reserve probes).
var errNoFallocate = errors.New("fallocate is not supported here")

// fallocate is Linux's; elsewhere reserve writes a probe file instead.
func fallocate(*os.File, int64) error { return errNoFallocate }
