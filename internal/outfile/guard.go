package outfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nccltune/nccltune/internal/vocab"
)

// The signs of the files a database is made of, here beside the guard
// that recognises them (store imports this package).
const (
	// BoltMagic starts every bbolt meta page, after its 16-byte header.
	BoltMagic = 0xED0CDAED
	// LockSuffix names a database's sidecar lock file: DB + LockSuffix.
	LockSuffix = ".lock"
	// LivenessBase is where the liveness bytes of a database start: a
	// writer holds an OFD lock on byte LivenessBase + token while it runs,
	// past any real file's end (byte-range locks may lie beyond it).
	LivenessBase    = 1 << 40
	livenessSpan    = 1 << 32 // every token (a uint32)
	maxHolderRecord = 4096    // a lock file's holder record (one JSON line)
)

// IsHolderRecord reports whether b is what a writer records in a
// database's lock file while it writes: one JSON object with a pid
// (fields a later nccltune may add are allowed).
func IsHolderRecord(b []byte) bool {
	if len(b) > maxHolderRecord {
		return false
	}
	var h struct {
		PID int `json:"pid"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	return dec.Decode(&h) == nil && h.PID > 0 && !dec.More()
}

// ProtectedError is a --out target that holds data nccltune must never
// replace, whichever process uses it.
type ProtectedError struct {
	Path string
	What string // "a bbolt database (…)", said after "Path is"
}

func (e *ProtectedError) Error() string {
	return fmt.Sprintf("%s is %s; nccltune never writes over it — choose another --out", e.Path, e.What)
}

// Is makes a ProtectedError a usage error (exit 2): the user named the
// wrong file.
func (e *ProtectedError) Is(target error) bool { return target == vocab.ErrUsage }

// checkNotProtected refuses to write over the regular file at path when
// it is a bbolt database, a database's lock file, or held by a running
// nccltune: every other process's files, by what the file is. A file it
// cannot open for reading is left to the write to decide.
func checkNotProtected(path string, size int64) error {
	// O_NONBLOCK: should the name have become a FIFO, do not wait.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if isBolt(f, size) {
		return &ProtectedError{Path: path, What: "a bbolt database (the format nccltune keeps its studies in)"}
	}
	if db, ok := lockFileOf(f, path, size); ok {
		what := fmt.Sprintf("the lock file of the nccltune database %s", db)
		if db == "" {
			what = "the lock file of an nccltune database, through another name (a hard link)"
		}
		return &ProtectedError{Path: path, What: what + " (every writer of it takes its turn there)"}
	}
	if livenessHeld(f) {
		return &ProtectedError{Path: path, What: "in use by a running nccltune (it holds the file's liveness lock, as a study's process does on its database)"}
	}
	return nil
}

// isBolt reports whether either meta page of the file starts with
// bbolt's magic (a database whose first page was damaged is still one),
// for the page sizes bbolt uses (4 KiB to 64 KiB).
func isBolt(f *os.File, size int64) bool {
	magicAt := func(page int64) bool {
		var b [4]byte
		n, _ := f.ReadAt(b[:], page+16)
		return n == len(b) && binary.LittleEndian.Uint32(b[:]) == BoltMagic
	}
	if magicAt(0) {
		return true
	}
	for page := int64(4 << 10); page <= 64<<10 && page+20 <= size; page <<= 1 {
		if magicAt(page) {
			return true
		}
	}
	return false
}

// lockFileOf returns the database whose lock file the file at path is,
// judged by name and content: DB.lock holding a holder record, or empty
// beside a bbolt file DB. A holder record in a file of several names is a
// lock reached through a hard link: such a file is written in place, into
// the lock itself.
func lockFileOf(f *os.File, path string, size int64) (string, bool) {
	name := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		name = real
	}
	if size > maxHolderRecord {
		return "", false
	}
	holder := func() bool {
		b := make([]byte, size)
		n, _ := f.ReadAt(b, 0)
		return IsHolderRecord(b[:n])
	}
	if !strings.HasSuffix(name, LockSuffix) {
		if size == 0 || !manyNames(f) {
			return "", false
		}
		return "", holder() // which database's, its name no longer says
	}
	db := strings.TrimSuffix(name, LockSuffix)
	if size > 0 {
		return db, holder()
	}
	info, err := os.Stat(db)
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	g, err := os.OpenFile(db, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer g.Close()
	return db, isBolt(g, info.Size())
}

// manyNames reports whether the open file has more than one name.
func manyNames(f *os.File) bool {
	info, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
