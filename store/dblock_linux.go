//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/nccltune/nccltune/internal/outfile"
)

// livenessBase is where the per-process liveness bytes start: far past
// any real database size (byte-range locks may lie beyond a file's end,
// and bbolt never locks ranges, only the whole file with flock). The
// --out guard (outfile) looks for them there.
const livenessBase = outfile.LivenessBase

// holdLiveness marks this process as alive for readers of the database:
// an open-file-description lock on one byte of the database file, chosen
// by token. It belongs to the inode, whatever name reached it, lasts
// while f is open, and ends when the process dies however it dies (the
// kernel drops it), which is what tells a running study from one whose
// process was killed. Unlike a POSIX record lock, it is not dropped when
// bbolt closes its own descriptor of the same file, and flock (bbolt's
// lock) does not interact with it.
func holdLiveness(f *os.File, token uint32) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: livenessBase + int64(token), Len: 1}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// releaseLiveness drops the liveness byte of token before f closes: a
// child process forked at that moment shares f's open file description
// until it execs, and would hold the byte on, so that a study this
// closed store ran would read as running.
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
