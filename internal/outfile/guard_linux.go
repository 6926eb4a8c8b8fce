//go:build linux

package outfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// livenessHeld reports whether another open file description holds a
// lock on any liveness byte of f: a running nccltune's mark on its
// database (store's holdLiveness).
func livenessHeld(f *os.File) bool {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: LivenessBase, Len: livenessSpan}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
