//go:build linux

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// The sidecar lock is found by name, so two names of one database (hard
// links) would each have their own. A writer therefore also holds an
// open-file-description lock on the database file itself: it belongs to
// the inode, whatever the name, and (unlike a POSIX record lock) is not
// dropped when bbolt closes its own descriptor of the same file. bbolt
// uses flock, which does not interact with it.
var dbLockRange = unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 1}

// lockDBFile takes the inode lock on an open database file; errDBLocked
// when another process holds it.
func lockDBFile(f *os.File) error {
	lk := dbLockRange
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errDBLocked
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return nil // no OFD locks here (an old kernel): the sidecar lock alone
	}
	return err
}

// dbLockedElsewhere reports whether a writer holds the inode lock of the
// database at path.
func dbLockedElsewhere(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	lk := dbLockRange
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
