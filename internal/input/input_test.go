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

	"github.com/nccltune/nccltune/internal/vocab"
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

// TestReadFileClosesOnCancel: a FIFO whose writer opens it and never
// writes; once the context is cancelled, ReadFile's fd on it is closed.
func TestReadFileClosesOnCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip(err)
	}
	// The fds of this process open on fifo.
	opened := func() int {
		n := 0
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			if dest, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); dest == fifo {
				n++
			}
		}
		return n
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(ctx, fifo, nil, 1<<20)
		done <- err
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for deadline := time.Now().Add(5 * time.Second); opened() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d fds on the FIFO, want the reader's and the writer's", opened())
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadFile: %v, want context.Canceled", err)
	}
	for deadline := time.Now().Add(5 * time.Second); opened() > 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the reader's fd on the FIFO is still open after cancel")
		}
	}
}

// TestReadSaved checks parse's refusals: what the user can fix is a usage
// error naming the file, Ctrl-C is an interruption.
func TestReadSaved(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "run.txt")
	os.WriteFile(good, []byte("# nccl-tests"), 0o644)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		name string
		kind error // nil: read
		says string
	}{
		{context.Background(), good, nil, ""},
		{context.Background(), filepath.Join(dir, "none.txt"), vocab.ErrUsage, "no such file; give the path of saved nccl-tests output"},
		{context.Background(), dir, vocab.ErrUsage, "is a directory; give the files of saved nccl-tests output inside it"},
		{cancelled, good, vocab.ErrInterrupted, "interrupted"},
	} {
		data, err := ReadSaved(tc.ctx, tc.name, nil)
		switch {
		case tc.kind == nil && (err != nil || string(data) != "# nccl-tests"):
			t.Errorf("ReadSaved(%s) = %q, %v", tc.name, data, err)
		case tc.kind != nil && (!errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("ReadSaved(%s): %v, want %v saying %q", tc.name, err, tc.kind, tc.says)
		}
	}
}

// One run reads each file once and all of them within one budget: the
// same path twice, a symbolic link or another path to a file already read
// is a *DuplicateError (not read again); stdin named twice and a file past
// what is left of the budget are usage errors that say what to do.
func TestInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("a", 40), write("b", 40), write("c", 40)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	in := NewInputs(100)
	for _, tc := range []struct {
		name, stdin string
		same        string // a *DuplicateError of this input
		usage       string // a usage error saying this
	}{
		{name: a},
		{name: a, same: a},
		{name: link, same: a},
		{name: filepath.Join(dir, ".", "a"), same: a},
		{name: "-", stdin: "0123456789"},
		{name: "-", stdin: "more", usage: "standard input (-) is named twice: it can be read once"},
		{name: b},
		{name: c, usage: "c: the inputs together are larger than 100 bytes, the most one nccltune command reads (3 files read before it); pass fewer files"},
		{name: filepath.Join(dir, "none"), usage: "no such file"},
	} {
		data, err := in.Read(context.Background(), tc.name, strings.NewReader(tc.stdin), "a log")
		var dup *DuplicateError
		switch {
		case tc.same != "":
			if !errors.As(err, &dup) || dup.Same != tc.same || data != nil {
				t.Errorf("%s: %v, want the same file as %s", tc.name, err, tc.same)
			}
		case tc.usage != "":
			if !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), tc.usage) {
				t.Errorf("%s: %v, want a usage error saying %q", tc.name, err, tc.usage)
			}
		case err != nil || len(data) == 0:
			t.Errorf("%s: %q, %v", tc.name, data, err)
		}
	}
	if in.left != 10 {
		t.Errorf("%d bytes of the budget left, want 10 (100 - 40 - 10 - 40)", in.left)
	}
}
