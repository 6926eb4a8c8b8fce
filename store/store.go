package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Options tune Open.
type Options struct {
	// ReadOnly opens for review (history, show, export): no sidecar lock,
	// no writes, and a missing file is ErrNoDatabase rather than created.
	ReadOnly bool
	// LockTimeout is how long a writer waits for another writer to release
	// the database before failing with a *LockedError. Zero means 1 s.
	LockTimeout time.Duration

	// openFile replaces os.OpenFile in tests (to inject EROFS and the like).
	openFile func(string, int, os.FileMode) (*os.File, error)
}

const (
	defaultLockTimeout = time.Second
	// writerWait bounds how long a write waits for readers' shared locks:
	// readers hold the file for one read (milliseconds), so reaching it
	// means something is wrong, and saying so beats hanging.
	writerWait = 30 * time.Second
	// readerWait bounds how long a read waits for a write transaction.
	readerWait = 10 * time.Second
	// readerAttempts retries a read-only open that failed for a reason
	// other than a timeout (e.g. a file replaced under us).
	readerAttempts = 3
)

// Store is an open nccltune database. A writer Store holds the sidecar
// lock until Close; every method opens the bbolt file only for its own
// transaction. Methods are safe for concurrent use.
type Store struct {
	path     string
	readOnly bool
	openFile func(string, int, os.FileMode) (*os.File, error)

	mu     sync.Mutex
	lock   *writerLock
	closed bool
}

// DefaultPath is where the database lives when --db is not given:
// $XDG_DATA_HOME/nccltune/nccltune.db, or ~/.local/share/nccltune/nccltune.db.
// It creates the directory (0700) so a writer can create the file there.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the default database location (%v) — pass --db FILE or set NCCLTUNE_DB", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, "nccltune")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s for the database: %w — pass --db FILE or set NCCLTUNE_DB", dir, classifyWriteError(dir, err))
	}
	return filepath.Join(dir, "nccltune.db"), nil
}

// Open opens the database at path. A writer creates the file (0600) when it
// does not exist, migrates an older schema, and holds the file against
// other writers until Close; a second writer gets a *LockedError after
// opts.LockTimeout. A reader never creates or changes the file.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("no database path given — pass --db FILE")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	s := &Store{path: abs, readOnly: opts.ReadOnly, openFile: opts.openFile}
	if s.openFile == nil {
		s.openFile = os.OpenFile
	}
	if opts.ReadOnly {
		return s, s.openReader()
	}
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, classifyWriteError(abs, fmt.Errorf("create directory for %s: %w", abs, err))
	}
	s.lock, err = acquireWriterLock(abs, timeout, s.openFile)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		s.lock.release()
		return nil, err
	}
	return s, nil
}

// Path is the database file's absolute path.
func (s *Store) Path() string { return s.path }

// ReadOnly reports whether the store was opened for review only.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Close releases the writer's lock. The data is already on disk.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.lock.release()
}

// openReader checks that a reader can use the file: it exists, it is an
// nccltune database, and its schema is not newer than ours.
func (s *Store) openReader() error {
	if _, err := os.Stat(s.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s does not exist yet", ErrNoDatabase, s.path)
		}
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	return s.view(func(*bolt.Tx) error { return nil })
}

// prepare creates the file when missing, else checks and migrates it.
// The caller holds the writer lock.
func (s *Store) prepare() error {
	if _, err := os.Stat(s.path); errors.Is(err, fs.ErrNotExist) {
		return s.create()
	}
	return s.update(nil)
}

// create builds a new database in a temporary file and renames it into
// place, so no reader (and no crash) ever sees a half-built file.
func (s *Store) create() error {
	tmp := s.path + ".init"
	_ = os.Remove(tmp) // left by a writer killed while creating; we hold the lock
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
		err = os.Rename(tmp, s.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(s.path))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return classifyWriteError(s.path, fmt.Errorf("create database %s: %w", s.path, err))
	}
	return nil
}

// syncDir makes a rename inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// update runs fn in one read-write transaction on a freshly opened bbolt
// handle, after checking (and if needed migrating) the schema. fn == nil
// only checks and migrates.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.readOnly:
		return fmt.Errorf("database %s was opened read-only", s.path)
	case s.closed:
		return fmt.Errorf("database %s is closed", s.path)
	}
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: writerWait, OpenFile: s.openExisting})
	if err != nil {
		return s.openError(err, writerWait)
	}
	err = db.Update(func(tx *bolt.Tx) error {
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
// A file with no nccltune buckets yet (schema 0) reads as empty.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	for attempt := 0; attempt < readerAttempts; attempt++ {
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
		if _, err := schemaVersion(tx, s.path); err != nil {
			return err
		}
		return fn(tx)
	})
}

// sharedLock takes a shared flock on f, waiting up to timeout (then
// bbolt's ErrTimeout, so the caller reports the file as busy). The wait
// blocks in the kernel, which wakes it the moment the writer unlocks: a
// writer adding launches back to back leaves gaps of well under a
// millisecond, and polling (bbolt polls every 50 ms) kept readers out for
// seconds. If the wait times out, f is closed once the lock call returns.
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
	return s.openFile(name, flag&^os.O_CREATE, perm)
}

// openError explains why bbolt could not open the file.
func (s *Store) openError(err error, waited time.Duration) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("database %s is busy: another nccltune kept it for over %s — try again", s.path, waited)
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
