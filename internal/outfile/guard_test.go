package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/nccltune/nccltune/internal/vocab"
)

// newBolt makes a real bbolt database at path, with one key in it.
func newBolt(t *testing.T, path string, pageSize int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("studies"))
		if err != nil {
			return err
		}
		return b.Put([]byte("s1"), []byte("every launch of a study"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteNeverReplacesAnotherDatabase: --out onto a database another
// command or process uses — a bbolt file, a database's lock file, a file
// a running nccltune holds — is a usage error naming what the file is,
// and the file is byte for byte what it was (was: replaced, every study
// in it gone; a lock file replaced kept every later writer out). A plain
// file, also one named *.lock, is replaced as before.
func TestWriteNeverReplacesAnotherDatabase(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	file := func(name, content string) string {
		p := path(name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string
		want  string // in the refusal; "" means the write replaces the file
	}{
		{"bbolt database", func(t *testing.T) string { p := path("live.db"); newBolt(t, p, 4096); return p }, "live.db is a bbolt database"},
		{"bbolt database of 16 KiB pages, first meta page damaged", func(t *testing.T) string {
			p := path("big-pages.db")
			newBolt(t, p, 16<<10)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(make([]byte, 64), 0); err != nil {
				t.Fatal(err)
			}
			return p
		}, "is a bbolt database"},
		{"symlink to a bbolt database", func(t *testing.T) string {
			p, link := path("linked.db"), path("report.html")
			newBolt(t, p, 4096)
			if err := os.Symlink(p, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "report.html is a bbolt database"},
		{"empty lock file beside its database", func(t *testing.T) string {
			newBolt(t, path("other.db"), 4096)
			return file("other.db.lock", "")
		}, "other.db.lock is the lock file of the nccltune database " + path("other.db")},
		{"lock file holding a writer's record", func(t *testing.T) string {
			return file("gone.db.lock", `{"pid":4242,"command":"nccltune search --band 1M","since":"2026-01-02T03:04:05Z","host":"h"}`+"\n")
		}, "gone.db.lock is the lock file"},
		// Round five of issue 38: the same lock reached by another name
		// (a hard link, written in place) was written over by content.
		{"hard link to a lock file holding a writer's record", func(t *testing.T) string {
			lock := file("linked.db.lock", `{"pid":4243,"command":"nccltune search --band 1M","since":"2026-01-02T03:04:05Z","host":"h"}`+"\n")
			p := path("notes.txt")
			if err := os.Link(lock, p); err != nil {
				t.Skip(err)
			}
			return p
		}, "notes.txt is the lock file"},
		{"file a running nccltune holds", func(t *testing.T) string {
			p := file("held", "a database whose first page is lost\n")
			// What store's holdLiveness does in a running study's process:
			// an open-file-description lock on one liveness byte.
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			lk := unix.Flock_t{Type: unix.F_WRLCK, Start: LivenessBase + 12345, Len: 1}
			if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
				t.Skipf("no open-file-description locks here: %v", err)
			}
			return p
		}, "held is in use by a running nccltune"},
		{"plain file", func(t *testing.T) string { return file("notes.env", "A=1\n") }, ""},
		{"empty *.lock without a database beside it", func(t *testing.T) string { return file("app.lock", "") }, ""},
		{"*.lock of another program", func(t *testing.T) string {
			newBolt(t, path("third.db"), 4096)
			return file("third.db.lock", "12345\n")
		}, ""},
		{"JSON without a pid, named *.lock", func(t *testing.T) string { return file("cfg.lock", `{"version":2}`) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t)
			before, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			err = WriteOut(p, writeString("exported\n"))
			after, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tc.want == "" {
				if err != nil || string(after) != "exported\n" {
					t.Errorf("err %v, content %q; want it replaced", err, after)
				}
				return
			}
			if err == nil || !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "choose another --out") {
				t.Errorf("err %v; want a usage error with %q and the next step", err, tc.want)
			}
			if string(after) != string(before) {
				t.Errorf("the file changed (%d bytes → %d)", len(before), len(after))
			}
		})
	}
}

func TestIsHolderRecord(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"pid":7,"command":"nccltune search","since":"2026-01-02T03:04:05Z"}` + "\n", true},
		{`{"pid":7,"future_field":1}`, true},
		{`{"pid":0}`, false},
		{`{"command":"x"}`, false},
		{`{"pid":7}{"pid":8}`, false},
		{"12345\n", false},
		{"", false},
	} {
		if got := IsHolderRecord([]byte(tc.in)); got != tc.want {
			t.Errorf("IsHolderRecord(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
