//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/nccltune/nccltune/internal/outfile"
)

// livenessBase is far past any real database size (byte-range locks may
// lie beyond a file's end; bbolt only flocks the whole file).
const livenessBase = outfile.LivenessBase

// holdLiveness marks this process as alive for readers of the database:
// an open-file-description lock on the byte of token. The kernel drops it
// when the process dies however it dies, and unlike a POSIX record lock
// it survives bbolt closing its own descriptor of the same file.
func holdLiveness(f *os.File, token uint32) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: livenessBase + int64(token), Len: 1}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// releaseLiveness drops the byte before f closes: a child forked at that
// moment would share f's open file description until it execs.
func releaseLiveness(f *os.File, token uint32) {
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: livenessBase + int64(token), Len: 1}
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// livenessHeld reports whether a process other than the one owning f's
// open file description holds the liveness byte of token.
func livenessHeld(f *os.File, token uint32) bool {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: livenessBase + int64(token), Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
