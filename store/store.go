package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Options tune Open.
type Options struct {
	// ReadOnly opens for review: no sidecar lock, no writes, and a missing
	// file is ErrNoDatabase.
	ReadOnly bool
	// LockTimeout is how long each write waits for another process's
	// write before failing with a *LockedError. Zero means 5 s.
	LockTimeout time.Duration

	openFile func(string, int, os.FileMode) (*os.File, error) // tests inject errors here
}

// Other processes hold the file for one transaction each (milliseconds),
// so waiting seconds means something is stuck, and saying so beats hanging.
const (
	defaultLockTimeout = 5 * time.Second
	writerWait         = 30 * time.Second // for readers' shared locks
	readerWait         = 10 * time.Second // for a write transaction
	// readerAttempts retries a read-only open that failed for a reason
	// other than a timeout (e.g. a file replaced under us).
	readerAttempts = 3
)

// Store is an open nccltune database (see the package doc). A writer
// marks itself alive (holdLiveness) until Close. Methods are safe for
// concurrent use.
type Store struct {
	path     string
	readOnly bool
	openFile func(string, int, os.FileMode) (*os.File, error)

	mu      sync.Mutex
	lock    *writerLock
	timeout time.Duration
	closed  bool
	// token picks this process's liveness byte; studies it runs record it.
	token uint32
	// file holds the writer's liveness lock; ident notices the file being
	// replaced under a running study.
	file  *os.File
	ident fs.FileInfo
}

// DefaultPath is $XDG_DATA_HOME/nccltune/nccltune.db, or
// ~/.local/share/nccltune/nccltune.db. It creates nothing.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the default database location (%v) — pass --db FILE or set NCCLTUNE_DB", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "nccltune", "nccltune.db"), nil
}

// Open opens the database at path. A writer creates the file (0600) when
// it does not exist and migrates an older schema; a reader never creates
// or changes the file.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("no database path given — pass --db FILE")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	abs = canonicalPath(abs)
	keep(abs)
	if err := checkDatabaseFile(abs); err != nil {
		return nil, err
	}
	s := &Store{path: abs, readOnly: opts.ReadOnly, openFile: opts.openFile}
	if s.openFile == nil {
		s.openFile = os.OpenFile
	}
	if opts.ReadOnly {
		return s, s.openReader()
	}
	if err := ensureDir(abs); err != nil {
		return nil, err
	}
	s.timeout = opts.LockTimeout
	if s.timeout <= 0 {
		s.timeout = defaultLockTimeout
	}
	s.lock, err = openWriterLock(abs, s.openFile)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		s.lock.close()
		return nil, err
	}
	return s, nil
}

// ensureDir makes the directory of the default database only: a missing
// --db directory is more likely a slip (a typo, an unmounted volume).
func ensureDir(abs string) error {
	dir := filepath.Dir(abs)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if def, err := DefaultPath(); err == nil && canonicalPath(def) == abs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return classifyWriteError(abs, fmt.Errorf("create directory for %s: %w", abs, err))
		}
		return nil
	}
	return vocab.UsageErrorf("database %s: its directory %s does not exist — create it (mkdir -p %s) or give --db a file in a directory that exists; only the default location (%s) is created for you", abs, dir, dir, defaultPathText())
}

func defaultPathText() string {
	if p, err := DefaultPath(); err == nil {
		return p
	}
	return "nccltune/nccltune.db under $XDG_DATA_HOME or ~/.local/share"
}

// Keep marks the database at path and its lock file as this process's, so
// no --out may name them (outfile.Keep), also for a command that never
// opens it.
func Keep(path string) {
	if abs, err := filepath.Abs(path); err == nil {
		keep(canonicalPath(abs))
	}
}

func keep(abs string) { outfile.Keep(abs, lockPath(abs)) }

// canonicalPath resolves symlinks, so that every name of one database
// leads to one sidecar lock.
func canonicalPath(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// checkDatabaseFile refuses what cannot be a database before anything
// opens it, saying what is there: opening a FIFO blocks forever, and a
// dangling symlink is not a missing database.
func checkDatabaseFile(path string) error {
	if link, err := os.Lstat(path); err == nil && link.Mode()&fs.ModeSymlink != 0 {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			target, _ := os.Readlink(path)
			return fmt.Errorf("database %s is a symlink to %s, which does not exist; nccltune does not create a link's target — point the link at a database, remove it (a writer then creates a new database there), or use --db another file", path, target)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil // a missing file is created (writer) or reported (reader)
	}
	if info.Mode().IsRegular() {
		return checkDatabaseSize(path, info.Size())
	}
	return fmt.Errorf("%s is %s, not an nccltune database — use --db to pick a regular file", path, input.Describe(info.Mode()))
}

// checkDatabaseSize refuses an empty file, and a bbolt file shorter than
// the four pages every database has (its first meta page gives the page
// size): bbolt's own words for them are obscure.
func checkDatabaseSize(path string, size int64) error {
	if size == 0 {
		return fmt.Errorf("database %s is an empty file (0 bytes), not an nccltune database — remove it (a writer then creates a new database there), or use --db another file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // reported by the open that follows
	}
	defer f.Close()
	var head [32]byte
	if n, _ := io.ReadFull(f, head[:]); n < len(head) {
		return &DamagedError{Path: path, Detail: fmt.Sprintf("the file is %d bytes, too short to be a database", size)}
	}
	magic := binary.LittleEndian.Uint32(head[16:20])
	pageSize := int64(binary.LittleEndian.Uint32(head[24:28]))
	if magic == outfile.BoltMagic && pageSize > 0 && size < 4*pageSize {
		return &DamagedError{Path: path, Detail: fmt.Sprintf("the file is %d bytes, shorter than the 4 pages of %d bytes every database has: it was truncated", size, pageSize)}
	}
	return nil
}

// Close ends the writer's liveness mark: a study it left running reads as
// interrupted from now on.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.file != nil {
		releaseLiveness(s.file, s.token)
		s.file.Close()
		s.file = nil
	}
	return s.lock.close()
}

// openReader checks that a reader can use the file.
func (s *Store) openReader() error {
	if _, err := os.Stat(s.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s does not exist yet", ErrNoDatabase, s.path)
		}
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	return s.Check() // milliseconds for tens of megabytes
}

// prepare creates, or checks and migrates, the file and marks this
// process alive on it, under the sidecar lock.
func (s *Store) prepare() error {
	if err := s.lock.lock(s.path, s.timeout); err != nil {
		return err
	}
	defer s.lock.unlock()
	if _, err := os.Lstat(s.path); errors.Is(err, fs.ErrNotExist) {
		if err := s.create(); err != nil {
			return err
		}
	}
	f, err := s.openFile(s.path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return s.openError(err, 0)
	}
	info, err := f.Stat()
	if err == nil {
		err = s.markAlive(f)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	s.file, s.ident = f, info
	// A damaged file is left exactly as it is: checked before the first
	// write (even a write that changes nothing rewrites a meta page).
	err = s.Check()
	if err == nil {
		err = s.transact(nil)
	}
	if err != nil {
		s.file.Close()
		s.file = nil
		return err
	}
	return nil
}

// markAlive picks a random liveness token that no other process holds and
// holds its byte on f. A kernel without open-file-description locks
// leaves the process unmarked rather than failing.
func (s *Store) markAlive(f *os.File) error {
	var b [4]byte
	for range 8 {
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		token := binary.LittleEndian.Uint32(b[:])
		if token == 0 {
			continue // 0 is "no owner" in old records
		}
		err := holdLiveness(f, token)
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
			return nil
		}
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			continue // another process drew the same token
		}
		if err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		s.token = token
		return nil
	}
	return errors.New("could not pick a liveness token")
}

// create builds a new database in a temporary file and links it into
// place, so no reader (or crash) sees a half-built file, and a file that
// appeared at the path meanwhile is never replaced.
func (s *Store) create() error {
	dir, base := filepath.Dir(s.path), filepath.Base(s.path)
	f, err := os.CreateTemp(dir, "."+base+".nccltune-new-*")
	if err != nil {
		return classifyWriteError(s.path, fmt.Errorf("create database %s: %w", s.path, err))
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp) // ours: a unique name made above
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: writerWait, OpenFile: s.openFile})
	if err != nil {
		return classifyWriteError(s.path, fmt.Errorf("create database %s: %w", s.path, err))
	}
	err = db.Update(func(tx *bolt.Tx) error { return migrate(tx, s.path) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Link(tmp, s.path)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// A file system without hard links: rename, having checked
			// that nothing is there (the sidecar lock keeps other
			// nccltunes out; only a foreign program could race us).
			if _, lerr := os.Lstat(s.path); errors.Is(lerr, fs.ErrNotExist) {
				err = os.Rename(tmp, s.path)
			}
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("database %s was created by another program while nccltune was creating it; nccltune leaves it untouched — try again, or use --db another file", s.path)
		}
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return classifyWriteError(s.path, fmt.Errorf("create database %s: %w", s.path, err))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// update runs fn in one read-write transaction on a freshly opened bbolt
// handle, holding the sidecar lock for just that long, after migrating
// the schema. fn == nil only migrates.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.readOnly:
		return fmt.Errorf("database %s was opened read-only", s.path)
	case s.closed:
		return fmt.Errorf("database %s is closed", s.path)
	}
	if err := s.lock.lock(s.path, s.timeout); err != nil {
		return err
	}
	defer s.lock.unlock()
	return s.transact(fn)
}

// SkipSync commits write transactions without fdatasync. Only tests set
// it: a killed process still loses at most the transaction in flight,
// only a power cut could lose more.
var SkipSync bool

// transact is update's transaction; the caller holds the sidecar lock.
func (s *Store) transact(fn func(tx *bolt.Tx) error) (err error) {
	defer s.survive(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: writerWait, OpenFile: s.openExisting, NoSync: SkipSync})
	if err != nil {
		return s.openError(err, writerWait)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := s.checkSize(tx); err != nil {
			return err
		}
		if err := migrate(tx, s.path); err != nil {
			return err
		}
		if fn == nil {
			return nil
		}
		return fn(tx)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return classifyWriteError(s.path, err)
}

// view runs fn in one read-only transaction on a freshly opened handle.
func (s *Store) view(fn func(tx *bolt.Tx) error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.survive(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if s.closed {
		return fmt.Errorf("database %s is closed", s.path)
	}
	// Take the shared lock ourselves first (see sharedLock); bbolt's own
	// shared lock on its descriptor is then granted at once.
	pre, err := s.openFile(s.path, os.O_RDONLY, 0)
	if err != nil {
		return s.openError(err, readerWait)
	}
	if err := sharedLock(pre, readerWait); err != nil {
		if !errors.Is(err, bolterrors.ErrTimeout) {
			pre.Close()
		}
		return s.openError(err, readerWait)
	}
	defer pre.Close()
	var db *bolt.DB
	for range readerAttempts {
		db, err = bolt.Open(s.path, 0o600, &bolt.Options{ReadOnly: true, Timeout: readerWait, OpenFile: s.openFile})
		if err == nil || errors.Is(err, bolterrors.ErrTimeout) || errors.Is(err, fs.ErrNotExist) {
			break
		}
		time.Sleep(lockRetry)
	}
	if err != nil {
		return s.openError(err, readerWait)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if err := s.checkSize(tx); err != nil {
			return err
		}
		if _, err := schemaVersion(tx, s.path); err != nil {
			return err
		}
		return fn(tx)
	})
}

// sharedLock takes a shared flock on f, waiting up to timeout (then
// bbolt's ErrTimeout). The wait blocks in the kernel, which wakes it the
// moment the writer unlocks: bbolt's 50 ms polling kept readers out for
// seconds behind a writer adding launches back to back. If the wait
// times out, f is closed once the lock call returns.
func sharedLock(f *os.File, timeout time.Duration) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil || !errors.Is(err, syscall.EWOULDBLOCK) {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		go func() { <-done; f.Close() }()
		return bolterrors.ErrTimeout
	}
}

// openExisting opens the database file without creating it: a writer
// whose file was deleted under it must say so, not start an empty one.
func (s *Store) openExisting(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := s.openFile(name, flag&^os.O_CREATE, perm)
	if err != nil || s.ident == nil {
		return f, err
	}
	info, err := f.Stat()
	if err == nil && !os.SameFile(info, s.ident) {
		err = errReplaced
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (s *Store) openError(err error, waited time.Duration) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("database %s is busy: another nccltune kept it for over %s — try again", s.path, waited)
	case errors.Is(err, errReplaced):
		return fmt.Errorf("%w: %s was replaced by another file while nccltune was using it (moved, copied or restored over it); nothing more was written to either file — check which file holds your studies, then run the command again", ErrReplaced, s.path)
	case errors.Is(err, fs.ErrNotExist):
		if s.readOnly {
			return fmt.Errorf("%w: %s does not exist", ErrNoDatabase, s.path)
		}
		return fmt.Errorf("database %s disappeared while nccltune was using it — was it moved or deleted?", s.path)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
		return fmt.Errorf("%s is not an nccltune database or is damaged (bbolt: %v) — use --db to pick another file", s.path, err)
	}
	if s.readOnly {
		return fmt.Errorf("open database %s: %w", s.path, err)
	}
	return classifyWriteError(s.path, fmt.Errorf("open database %s: %w", s.path, err))
}

// survive turns a panic inside bbolt (it asserts on damaged pages) or a
// fault reading its memory map (with debug.SetPanicOnFault) into a
// "damaged" error: a damaged file must not crash nccltune.
func (s *Store) survive(err *error) {
	if r := recover(); r != nil {
		*err = s.damaged(fmt.Sprint(r))
	}
}

func (s *Store) damaged(detail string) error {
	return &DamagedError{Path: s.path, Detail: detail}
}

// checkSize catches a truncated file before bbolt reads past its end:
// the file must hold every page up to the transaction's high-water mark.
func (s *Store) checkSize(tx *bolt.Tx) error {
	info, err := os.Stat(s.path)
	if err != nil {
		return nil // reported by whatever reads next
	}
	if need := tx.Size(); info.Size() < need {
		return s.damaged(fmt.Sprintf("the file is %d bytes but its pages reach %d: it was truncated", info.Size(), need))
	}
	return nil
}

// Check reads every page of the database and reports the first damage
// found (ErrDamaged).
func (s *Store) Check() error {
	return s.view(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err // and read on, so the checking goroutine ends
			}
		}
		if first != nil {
			return s.damaged(first.Error())
		}
		return nil
	})
}
