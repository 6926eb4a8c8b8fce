// Package outfile writes the file a command's --out names without
// harming what is already there: a new or plain file is replaced
// atomically (a reader never sees half of it), while links, shared files,
// devices and FIFOs are written through and keep their nature. It is the
// one file writer of nccltune's commands (export, plot, report, replay).
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write writes what write produces to path, which the user named with
// --out. nccltune owns only the files it creates, so what already
// exists at path keeps its nature:
//
//   - "-" is stdout (an error where stdout is nil: the command cannot
//     write there);
//   - a path that does not exist, or a regular file with one link that the
//     user owns, is replaced atomically (a temporary file beside it,
//     renamed over it), keeping the old file's permission bits, so a
//     reader never sees half a file;
//   - a symlink, a regular file with several links or another owner is
//     written in place, so the link and the target's mode and owner
//     survive;
//   - a character device (/dev/null, /dev/stdout's target) or a FIFO is
//     written to, never replaced (a FIFO without a reader is refused
//     rather than waited on);
//   - a directory, block device or socket is refused.
func Write(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		if stdout == nil {
			return errors.New("this command cannot write to stdout (-): name a file")
		}
		return write(stdout)
	}
	link, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeReplacing(path, 0o644, write)
	case err != nil:
		return err
	}
	info := link
	if link.Mode()&fs.ModeSymlink != 0 {
		if info, err = os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				target, _ := os.Readlink(path)
				return fmt.Errorf("it is a symlink to %s, which does not exist; nccltune writes through links but does not create their targets", target)
			}
			return err
		}
	}
	mode := info.Mode()
	switch {
	case mode.IsDir():
		return errors.New("it is a directory")
	case mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0:
		return errors.New("it is a block device; nccltune writes only files, character devices and FIFOs")
	case mode&fs.ModeSocket != 0:
		return errors.New("it is a socket; nccltune writes only files, character devices and FIFOs")
	case mode&fs.ModeNamedPipe != 0:
		return writeInPlace(path, os.O_WRONLY|syscall.O_NONBLOCK, write)
	case mode&fs.ModeCharDevice != 0:
		return writeInPlace(path, os.O_WRONLY, write)
	case !mode.IsRegular():
		return fmt.Errorf("it is not a regular file (%s)", mode.Type())
	}
	if link.Mode()&fs.ModeSymlink == 0 && ownedAlone(info) {
		return writeReplacing(path, mode.Perm(), write)
	}
	return writeInPlace(path, os.O_WRONLY|os.O_TRUNC, write)
}

// ownedAlone reports whether a regular file has one name and belongs to
// this user: only then does replacing it keep everything about it.
func ownedAlone(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return st.Nlink == 1 && int(st.Uid) == os.Geteuid()
}

// writeReplacing writes a temporary file beside path and renames it over
// path with the permission bits perm.
func writeReplacing(path string, perm fs.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("its directory %s does not exist", dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	werr := write(f)
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp) // ours: created above with a name nobody else uses
	}
	return werr
}

// writeInPlace opens what exists at path (never creating it) and writes.
func writeInPlace(path string, flag int, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return errors.New("it is a FIFO with no reader; start the reader first")
		}
		return err
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// WriteOut is Write for a command's --out FILE (no stdout: "-" is the
// caller's to handle), with an error that names the path and the next
// step: every command that writes a file (export, plot, report, replay
// build) writes it here.
func WriteOut(path string, write func(io.Writer) error) error {
	if err := Write(path, nil, write); err != nil {
		return fmt.Errorf("cannot write %s: %w; pass --out with a path you can write", path, UnwrapPath(err))
	}
	return nil
}

// UnwrapPath drops the *PathError's operation and path, which a message
// that names the path already says.
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
