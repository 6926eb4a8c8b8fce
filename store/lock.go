package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nccltune/nccltune/internal/outfile"
)

const (
	lockRetry = 50 * time.Millisecond // a reader's retry of a failed open
	lockPoll  = 5 * time.Millisecond  // a waiting writer's retry of the lock
)

// writerLock is the sidecar lock PATH.lock, held (flock LOCK_EX) only
// during a write transaction. While held, the file records who holds it,
// so a writer that waited too long can name the process in its way. It is
// never removed (removing a flock'ed file lets two processes each lock a
// different inode); it is emptied when released.
type writerLock struct {
	file *os.File
	path string
}

// otherOwner names the owner of path when it is not this process's user.
func otherOwner(path string) (string, bool) {
	info, err := os.Lstat(path)
	if err != nil {
		return "", false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return "", false
	}
	return userName(int(st.Uid)), true
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func lockPath(dbPath string) string { return dbPath + outfile.LockSuffix }

// openWriterLock opens (creating it) the sidecar lock file of dbPath and
// checks that it is nccltune's; it locks nothing.
func openWriterLock(dbPath string, openFile func(string, int, os.FileMode) (*os.File, error)) (*writerLock, error) {
	path := lockPath(dbPath)
	// O_NOFOLLOW: a symlink planted at PATH.lock must not make nccltune
	// write its holder record into the file it points to.
	f, err := openFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, not nccltune's lock file; nccltune does not follow it — remove it if it is stale, or use --db another file", path)
	}
	if err != nil {
		if owner, ok := otherOwner(path); ok && errors.Is(err, fs.ErrPermission) {
			// Another user's lock file (root ran nccltune here once), not
			// a read-only database.
			return nil, fmt.Errorf("the lock file %s belongs to %s, and nccltune (running as %s) cannot open it to take its turn; the database itself is not changed and readers still work — remove the lock file (it holds nothing but the last writer's note; its owner or root can remove it, or you if the directory is yours), then run the command again", path, owner, userName(os.Geteuid()))
		}
		return nil, classifyWriteError(path, fmt.Errorf("open lock file: %w", err))
	}
	if err := checkLockFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return &writerLock{file: f, path: path}, nil
}

// lock takes the sidecar lock, waiting up to timeout (then a *LockedError
// naming the holder).
func (l *writerLock) lock(dbPath string, timeout time.Duration) error {
	if l == nil || l.file == nil {
		return fmt.Errorf("database %s is closed", dbPath)
	}
	f := l.file
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", l.path, err)
		}
		if !time.Now().Before(deadline) {
			return &LockedError{Path: dbPath, Holder: readHolder(f)}
		}
		time.Sleep(min(lockPoll, time.Until(deadline)+time.Millisecond))
	}
	// Under the lock the file is empty or a holder record; anything else
	// is some other program's file, which nccltune must not overwrite.
	if !isHolderRecord(f) {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return fmt.Errorf("%s exists and is not nccltune's lock file (it holds other data); nccltune leaves it untouched — move it away, or use --db another file", l.path)
	}
	if err := writeHolder(f); err != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return classifyWriteError(l.path, fmt.Errorf("write lock file: %w", err))
	}
	return nil
}

func (l *writerLock) unlock() {
	_ = l.file.Truncate(0)
	syscall.Flock(int(l.file.Fd()), syscall.LOCK_UN)
}

// checkLockFile refuses a lock file that cannot be nccltune's: not a
// regular file, or one with other names (a hard link to someone's file,
// whose contents the holder record would replace).
func checkLockFile(f *os.File, path string) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("lock file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s), so it is not nccltune's lock file — remove it, or use --db another file", path, info.Mode().Type())
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%s has %d names (a hard link), so it is not nccltune's lock file; nccltune leaves it untouched — remove this name, or use --db another file", path, st.Nlink)
	}
	return nil
}

func isHolderRecord(f *os.File) bool {
	info, err := f.Stat()
	if err != nil {
		return false
	}
	if info.Size() == 0 {
		return true
	}
	if info.Size() > 4096 {
		return false
	}
	b := make([]byte, info.Size())
	n, _ := f.ReadAt(b, 0)
	return outfile.IsHolderRecord(b[:n]) // the --out guard's rule too
}

func writeHolder(f *os.File) error {
	h := Holder{PID: os.Getpid(), Command: commandLine(os.Args), Since: time.Now().UTC().Truncate(time.Second)}
	h.Host, _ = os.Hostname()
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(b, '\n'), 0)
	return err
}

// readHolder is zero when the holder has not written yet.
func readHolder(f *os.File) Holder {
	var h Holder
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	_ = json.Unmarshal(b[:n], &h)
	return h
}

// commandLine is a process's command line, shortened for messages, without
// --db PATH (the message names the database already).
func commandLine(argv []string) string {
	var args []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case i == 0:
			a = a[strings.LastIndexByte(a, '/')+1:] // the program's base name
		case a == "--db" || a == "-db":
			i++
			continue
		case strings.HasPrefix(a, "--db=") || strings.HasPrefix(a, "-db="):
			continue
		}
		args = append(args, a)
	}
	s := strings.Join(args, " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

func (l *writerLock) close() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}
