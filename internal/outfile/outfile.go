// Package outfile writes the file a command's --out names without
// harming what is already there: a new or plain file is replaced
// atomically, while links, shared files, devices and FIFOs are written
// through. It never writes a file this process uses (Keep) nor a database,
// lock file or file another nccltune holds, and never cuts a file it
// writes in place before the new content is known to fit.
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/nccltune/nccltune/internal/vocab"
)

// kept are the files this process has open, locked or read (Keep).
var kept struct {
	sync.Mutex
	paths []string
}

// Keep marks files this process uses (its database and lock, its inputs)
// so that Write refuses them whatever name --out gives them. Identity is
// compared when writing, so a file created after Keep is covered too.
func Keep(paths ...string) {
	kept.Lock()
	defer kept.Unlock()
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		kept.paths = append(kept.paths, p)
	}
}

// KeptError is a --out target that is a file this process uses.
type KeptError struct{ Kept string }

func (e *KeptError) Error() string {
	return fmt.Sprintf("it is %s, which this command uses (its database, the database's lock, or an input); nccltune never writes over a file it reads or holds", e.Kept)
}

// Is makes a KeptError a usage error (exit 2): the user named the wrong file.
func (e *KeptError) Is(target error) bool { return target == vocab.ErrUsage }

// checkNotKept refuses a target that is (by device and inode) a file Keep
// marked.
func checkNotKept(info fs.FileInfo) error {
	kept.Lock()
	defer kept.Unlock()
	for _, p := range kept.paths {
		if k, err := os.Stat(p); err == nil && os.SameFile(info, k) {
			return &KeptError{Kept: p}
		}
	}
	return nil
}

// Write writes what write produces to path, which the user named with
// --out; what already exists at path keeps its nature:
//
//   - "-" is stdout (an error where stdout is nil);
//   - a new path, or a regular file with one link that the user owns, is
//     replaced atomically, keeping its permission bits;
//   - a symlink, a file with several links or another owner is written in
//     place, the space for the new content reserved first;
//   - a character device or a FIFO is written to (a FIFO without a reader
//     is refused);
//   - a directory, block device or socket is refused, and so is a file
//     Keep marked or checkNotProtected refuses.
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
	if err := checkNotKept(info); err != nil {
		return err
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
	if err := checkNotProtected(path, info.Size()); err != nil {
		return err
	}
	if link.Mode()&fs.ModeSymlink == 0 && ownedAlone(info) {
		return writeReplacing(path, mode.Perm(), write)
	}
	return rewriteInPlace(path, write)
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
	defer RemoveAtExit(tmp)() // once renamed, the name is gone
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
	return werr
}

// rewriteInPlace replaces the content of the regular file at path without
// ever leaving it cut short: room for the new content is reserved first,
// and the old content is put back if a write fails.
func rewriteInPlace(path string, write func(io.Writer) error) error {
	var content bytes.Buffer
	if err := write(&content); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	n := int64(content.Len())
	if err := reserve(f, path, n); err != nil {
		return fmt.Errorf("no room for the new %d bytes (%w); the file is unchanged — free some space", n, UnwrapPath(err))
	}
	old, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading its old content: %w; the file is unchanged", err)
	}
	werr := overwrite(f, content.Bytes())
	if werr == nil {
		return nil
	}
	if rerr := overwrite(f, old); rerr != nil {
		return fmt.Errorf("%w; putting the old content back failed too (%v): the file is damaged — restore it from a copy", UnwrapPath(werr), UnwrapPath(rerr))
	}
	return fmt.Errorf("%w; the old content was put back, the file is unchanged", UnwrapPath(werr))
}

// overwrite makes f hold exactly data.
func overwrite(f *os.File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return err
	}
	return f.Sync()
}

// errNoFallocate: the file system cannot reserve space (reserve probes).
var errNoFallocate = errors.New("fallocate is not supported here")

// reserve makes sure n bytes of f can be written: fallocate where the
// file system has it, else a probe file of n bytes written beside it.
func reserve(f *os.File, path string, n int64) error {
	if n == 0 {
		return nil
	}
	err := fallocate(f, n)
	if err == nil || !errors.Is(err, errNoFallocate) {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	probe, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".room-*")
	if err != nil {
		return err
	}
	defer os.Remove(probe.Name()) // ours: a name nobody else uses
	defer probe.Close()
	if _, err := probe.Write(make([]byte, n)); err != nil {
		return err
	}
	return probe.Sync()
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

// WriteOut is Write for a command's --out FILE (no stdout), with an
// error that names the path and the next step.
func WriteOut(path string, write func(io.Writer) error) error {
	if err := Write(path, nil, write); err != nil {
		var protected *ProtectedError
		if errors.As(err, &protected) {
			return err // it names the path and the next step already
		}
		return fmt.Errorf("cannot write %s: %w; pass --out with a path you can write", path, UnwrapPath(err))
	}
	return nil
}

// UnwrapPath drops the *PathError's operation and path.
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
