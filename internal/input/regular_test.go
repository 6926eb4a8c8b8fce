package input

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/vocab"
)

// TestRegular: what Regular accepts (a regular file, links followed) and
// how it names what it refuses; Load refuses a FIFO at once instead of
// waiting for a writer.
func TestRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "env")
	os.WriteFile(file, []byte("A=1\n"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		path string
		want string // "" accepted; else in the error
	}{
		{file, ""},
		{link, ""},
		{fifo, fifo + " is a FIFO, not a regular file"},
		{dir, dir + " is a directory, not a regular file"},
		{"/dev/null", "/dev/null is a character device, not a regular file"},
	} {
		_, err := Regular(tc.path)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("%s: %v; want a usage error with %q", tc.path, err, tc.want)
		}
	}
	if _, err := Regular(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want fs.ErrNotExist for the caller to word", err)
	}
	start := time.Now()
	if _, err := Load(context.Background(), fifo, MaxBytes); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("Load of a FIFO: %v after %s", err, time.Since(start))
	}
	if data, err := Load(context.Background(), link, MaxBytes); err != nil || string(data) != "A=1\n" {
		t.Errorf("Load through a link: %q, %v", data, err)
	}
}
