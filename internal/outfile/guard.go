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

// The signs of the files a database is made of. They live here, beside
// the guard that must recognise them in any process, and store writes its
// files by them (store imports this package, not the other way round).
const (
	// BoltMagic starts every bbolt meta page, after its 16-byte page
	// header: the sign of a database, nccltune's or another program's.
	BoltMagic = 0xED0CDAED
	// LockSuffix names a database's sidecar lock file: DB + LockSuffix.
	LockSuffix = ".lock"
	// LivenessBase is where the liveness bytes of a database start: a
	// writer holds an open-file-description lock on byte LivenessBase +
	// token for as long as it runs (store's holdLiveness). Far past any
	// real file's size: byte-range locks may lie beyond a file's end.
	LivenessBase = 1 << 40
	// livenessSpan covers every token (a uint32).
	livenessSpan = 1 << 32
	// maxHolderRecord bounds a lock file's holder record (one JSON line).
	maxHolderRecord = 4096
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
// replace, whichever process uses it: a database, a database's lock
// file, or a file a running nccltune holds.
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
// it is (a) a bbolt database, (b) a database's lock file, or (c) held by
// a running nccltune (its liveness lock). Keep covers only the files this
// process uses; this covers every other process's, by what the file is.
// It reads a few bytes and never opens the file as a database. A file it
// cannot open for reading is left to the write to decide.
func checkNotProtected(path string, size int64) error {
	// O_NONBLOCK: should the name have become a FIFO since it was
	// looked at, the open does not wait for a writer.
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
// bbolt's magic: the first at offset 0, the second one page later (a
// database whose first page was damaged is still one), for the page
// sizes bbolt uses (4 KiB to 64 KiB). At most six 4-byte reads.
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
// judged by name and content together: DB.lock (by its real name, links
// followed: store names the lock after the database's real path) holding
// a writer's holder record, or empty (as between writes) beside a bbolt
// file DB. A holder record in a file of several names is a lock reached
// through a hard link under another name: a file of several names is
// written in place, into the lock itself, so its content decides.
func lockFileOf(f *os.File, path string, size int64) (string, bool) {
	name := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		name = real
	}
	if size > maxHolderRecord {
		return "", false
	}
	if !strings.HasSuffix(name, LockSuffix) {
		if size == 0 || !manyNames(f) {
			return "", false
		}
		b := make([]byte, size)
		n, _ := f.ReadAt(b, 0)
		return "", IsHolderRecord(b[:n]) // which database's, its name no longer says
	}
	db := strings.TrimSuffix(name, LockSuffix)
	if size > 0 {
		b := make([]byte, size)
		n, _ := f.ReadAt(b, 0)
		return db, IsHolderRecord(b[:n])
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

// manyNames reports whether the open file has more than one name (hard
// links), as outfile.Write decides to write a file in place.
func manyNames(f *os.File) bool {
	info, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
