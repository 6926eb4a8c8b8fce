package input

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/nccltune/nccltune/internal/vocab"
)

// NotRegularError is a file nccltune would run, hand to a process or load
// that is not a regular file.
type NotRegularError struct {
	Path string
	What string // "a FIFO", "a directory", … (Describe)
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; nccltune runs and loads only regular files (a FIFO or a device blocks whoever opens it, or is read once) — give the file itself", e.Path, e.What)
}

// Is makes a NotRegularError a usage error (exit 2): the user named it.
func (e *NotRegularError) Is(target error) bool { return target == vocab.ErrUsage }

// Regular is the one check for a file nccltune runs, hands to a process
// or loads: it must be a regular file, links followed (a FIFO there made
// every launch wait until its timeout). A missing file is os.Stat's
// error; anything else is a *NotRegularError.
func Regular(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, What: Describe(info.Mode())}
	}
	return info, nil
}

// Describe names a file's type as a message says it: "a FIFO", …
func Describe(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a " + strings.TrimPrefix(fmt.Sprint(mode.Type()), "-")
}

// Load reads a file nccltune loads up to limit bytes: Regular, then ReadFile.
func Load(ctx context.Context, path string, limit int64) ([]byte, error) {
	if _, err := Regular(path); err != nil {
		return nil, err
	}
	return ReadFile(ctx, path, nil, limit)
}
