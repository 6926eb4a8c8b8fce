package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.txt")
	os.WriteFile(small, []byte("hello"), 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("x", 100)), 0o644)
	cases := []struct {
		name    string
		stdin   string
		want    string
		wantErr string
	}{
		{small, "", "hello", ""},
		{big, "", "", "larger than"},
		{"/dev/zero", "", "", "larger than"},
		{"-", "from stdin", "from stdin", ""},
		{"-", strings.Repeat("y", 65), "", "standard input is larger"},
		{dir, "", "", "not a file"},
		{filepath.Join(dir, "missing"), "", "", "no such file"},
	}
	for _, tc := range cases {
		got, err := ReadFile(context.Background(), tc.name, strings.NewReader(tc.stdin), 64)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
}

// TestReadFileStopsOnCancel: a FIFO nobody writes, and an endless
// device, end when the context is cancelled.
func TestReadFileStopsOnCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, name := range []string{fifo, "/dev/zero"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := ReadFile(ctx, name, nil, 1<<40)
		if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
			t.Errorf("%s: %v after %s", name, err, time.Since(start))
		}
	}
}
