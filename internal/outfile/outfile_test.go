package outfile

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// TestWriteKeepsWhatExists: --out writes through to what exists
// (links, devices, FIFOs) and keeps modes and hard links; it replaces
// only a file it may replace without losing anything.
func TestWriteKeepsWhatExists(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }

	t.Run("new file", func(t *testing.T) {
		p := path("new.env")
		if err := Write(p, nil, writeString("A=1\n")); err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(p)
		if got, _ := os.ReadFile(p); string(got) != "A=1\n" || info.Mode().Perm() != 0o644 {
			t.Errorf("got %q mode %v", got, info.Mode())
		}
	})
	t.Run("private file keeps its mode", func(t *testing.T) {
		p := path("private.env")
		os.WriteFile(p, []byte("old"), 0o600)
		os.Chmod(p, 0o600)
		if err := Write(p, nil, writeString("new")); err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(p)
		if got, _ := os.ReadFile(p); string(got) != "new" || info.Mode().Perm() != 0o600 {
			t.Errorf("got %q mode %v, want new 0600", got, info.Mode())
		}
	})
	t.Run("hard link survives", func(t *testing.T) {
		p, other := path("linked.env"), path("other-name.env")
		os.WriteFile(p, []byte("old"), 0o644)
		if err := os.Link(p, other); err != nil {
			t.Skip(err)
		}
		if err := Write(p, nil, writeString("new")); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(other); string(got) != "new" {
			t.Errorf("the other name reads %q: the link was split", got)
		}
	})
	t.Run("symlink is written through", func(t *testing.T) {
		target, link := path("target.env"), path("link.env")
		os.WriteFile(target, []byte("old"), 0o640)
		os.Chmod(target, 0o640)
		os.Symlink(target, link)
		if err := Write(link, nil, writeString("new")); err != nil {
			t.Fatal(err)
		}
		li, _ := os.Lstat(link)
		ti, _ := os.Stat(target)
		got, _ := os.ReadFile(target)
		if li.Mode()&fs.ModeSymlink == 0 || string(got) != "new" || ti.Mode().Perm() != 0o640 {
			t.Errorf("link mode %v, target %q mode %v", li.Mode(), got, ti.Mode())
		}
	})
	t.Run("dangling symlink is refused", func(t *testing.T) {
		link := path("dangling.env")
		os.Symlink(path("missing/x.env"), link)
		err := Write(link, nil, writeString("new"))
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("directory is refused", func(t *testing.T) {
		if err := Write(dir, nil, writeString("x")); err == nil || !strings.Contains(err.Error(), "directory") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("dash is stdout", func(t *testing.T) {
		var out bytes.Buffer
		if err := Write("-", &out, writeString("A=1\n")); err != nil || out.String() != "A=1\n" {
			t.Errorf("err %v, stdout %q", err, out.String())
		}
		if _, err := os.Stat("-"); err == nil {
			t.Error("a file named - was created")
		}
	})
	t.Run("character device stays one", func(t *testing.T) {
		dev := path("null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("cannot make a device node here: %v", err)
		}
		if err := Write(dev, nil, writeString("x")); err != nil {
			t.Fatal(err)
		}
		if info, _ := os.Lstat(dev); info.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("the device node became %v", info.Mode())
		}
	})
	t.Run("fifo with a reader", func(t *testing.T) {
		fifo := path("pipe")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- string(b)
		}()
		deadline := time.Now().Add(5 * time.Second)
		var err error
		for {
			err = Write(fifo, nil, writeString("through"))
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond) // the reader is not open yet
		}
		if err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "through" {
			t.Errorf("reader got %q", s)
		}
		if info, _ := os.Lstat(fifo); info.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO became %v", info.Mode())
		}
	})
	t.Run("fifo without a reader is refused, not waited on", func(t *testing.T) {
		fifo := path("lonely")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		err := Write(fifo, nil, writeString("x"))
		if err == nil || !strings.Contains(err.Error(), "no reader") {
			t.Errorf("err %v", err)
		}
	})
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Error("no files")
	} else {
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary file left: %s", e.Name())
			}
		}
	}
}

// TestWriteOutSaysWhatToDo: WriteOut's refusal names the path and the
// next step, without the *PathError's repetition of them.
func TestWriteOutSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "missing", "x.png")
	err := WriteOut(p, writeString("x"))
	want := "cannot write " + p + ": its directory " + filepath.Dir(p) + " does not exist; pass --out with a path you can write"
	if err == nil || err.Error() != want {
		t.Errorf("WriteOut into a missing directory: %v\nwant %s", err, want)
	}
	if err := WriteOut("-", writeString("x")); err == nil || !strings.Contains(err.Error(), "cannot write -") {
		t.Errorf("WriteOut(-): %v, want a refusal (it has no stdout)", err)
	}
	if got := UnwrapPath(&fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}); got != syscall.EACCES {
		t.Errorf("UnwrapPath = %v, want EACCES alone", got)
	}
}
