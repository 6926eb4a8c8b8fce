package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/vocab"
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

// TestWriteRefusesKeptFiles: a file Keep marked (the database, its lock,
// an input) is refused under any name — itself, a symlink, a hard link, a
// relative path — and stays byte for byte what it was.
func TestWriteRefusesKeptFiles(t *testing.T) {
	dir := t.TempDir()
	db, lock := filepath.Join(dir, "st.db"), filepath.Join(dir, "st.db.lock")
	for _, p := range []string{db, lock} {
		if err := os.WriteFile(p, []byte("precious "+p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	Keep(db, lock)
	sym, hard := filepath.Join(dir, "sym.db"), filepath.Join(dir, "hard.db")
	if err := os.Symlink(db, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, target := range []string{db, lock, sym, hard, "st.db", "./st.db.lock"} {
		err := WriteOut(target, writeString("overwritten"))
		var kerr *KeptError
		if !errors.As(err, &kerr) || !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), "never writes over a file it reads or holds") {
			t.Errorf("--out %s: %v, want a usage error naming the kept file", target, err)
		}
	}
	for _, p := range []string{db, lock} {
		if got, _ := os.ReadFile(p); string(got) != "precious "+p {
			t.Errorf("%s now holds %q", p, got)
		}
	}
	// A file created after Keep (a new database) is compared when written.
	later := filepath.Join(dir, "later.db")
	Keep(later)
	os.WriteFile(later, []byte("new db"), 0o600)
	if err := Write(later, nil, writeString("x")); err == nil {
		t.Error("a kept file created after Keep was written")
	}
	if err := Write(filepath.Join(dir, "other.env"), nil, writeString("x")); err != nil {
		t.Errorf("another file: %v", err)
	}
}

// TestInPlaceWriteOnAFullDisk: a hard-linked or symlinked --out on a
// full file system (a 64 KiB tmpfs, mounted when the test runs as root)
// is left byte for byte as it was, and the error says so (was: cut to a
// 4096-byte fragment of the new content, the old one lost). With room,
// the same write succeeds through both names.
func TestInPlaceWriteOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, 0) })
	target, hard, sym := filepath.Join(mnt, "report.html"), filepath.Join(mnt, "hl.html"), filepath.Join(t.TempDir(), "sl.html")
	old := bytes.Repeat([]byte("old report\n"), 300) // 3300 bytes
	if err := os.WriteFile(target, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, sym); err != nil {
		t.Fatal(err)
	}
	// Fill the disk.
	filler, _ := os.Create(filepath.Join(mnt, "filler"))
	for {
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	filler.Close()
	big := strings.Repeat("new report\n", 2000) // 22000 bytes: no room
	for _, name := range []string{hard, sym} {
		err := WriteOut(name, writeString(big))
		if err == nil || !strings.Contains(err.Error(), "the file is unchanged") {
			t.Errorf("--out %s on a full disk: %v, want a refusal saying the file is unchanged", name, err)
		}
		if got, _ := os.ReadFile(target); !bytes.Equal(got, old) {
			t.Fatalf("--out %s on a full disk left %d bytes (%.20q…), want the old %d", name, len(got), got, len(old))
		}
	}
	os.Remove(filepath.Join(mnt, "filler"))
	for _, name := range []string{hard, sym} {
		if err := WriteOut(name, writeString(big+name)); err != nil {
			t.Fatalf("--out %s with room: %v", name, err)
		}
		if got, _ := os.ReadFile(target); string(got) != big+name {
			t.Errorf("--out %s with room: %d bytes, want %d", name, len(got), len(big+name))
		}
	}
	if entries, _ := os.ReadDir(mnt); len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
