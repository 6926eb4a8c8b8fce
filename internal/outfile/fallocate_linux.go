package outfile

import (
	"os"
	"syscall"
)

// fallocate reserves n bytes from the start of f without changing its
// size (FALLOC_FL_KEEP_SIZE): a later write of n bytes cannot run out of
// disk.
func fallocate(f *os.File, n int64) error {
	const keepSize = 0x1 // FALLOC_FL_KEEP_SIZE
	for {
		err := syscall.Fallocate(int(f.Fd()), keepSize, 0, n)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EOPNOTSUPP || err == syscall.ENOSYS:
			return errNoFallocate
		case err != nil:
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
		return nil
	}
}
