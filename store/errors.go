package store

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors; the typed errors below match them with errors.Is.
var (
	// ErrLocked: another nccltune holds the database's write lock too
	// long, or runs the study this write would take over.
	ErrLocked         = errors.New("database in use by another nccltune")
	ErrNoDatabase     = errors.New("no database") // a read-only open found no file
	ErrNewerSchema    = errors.New("database written by a newer nccltune")
	ErrNotFound       = errors.New("not found")
	ErrDuplicateTrial = errors.New("duplicate trial")
	ErrReadOnly       = errors.New("database is read-only") // or its directory
	ErrDiskFull       = errors.New("disk full")
	ErrReplaced       = errors.New("database replaced") // under a running writer
	ErrDamaged        = errors.New("database damaged")
)

// errReplaced is an internal cause; Store maps it to a message.
var errReplaced = errors.New("the database file was replaced")

// LockedError says who holds the database.
type LockedError struct {
	Path   string
	Holder Holder
}

// Holder describes the process that holds a writer's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	Host    string    `json:"host,omitempty"`
}

func (e *LockedError) Error() string {
	detail := ""
	if who := e.Holder.words(false); len(who) > 0 {
		detail = " (" + strings.Join(who, ", ") + ")"
	}
	return fmt.Sprintf("database %s is in use by another nccltune%s — wait for it to finish, or use --db to pick another file", e.Path, detail)
}

// words name h for a message: its pid (also when unknown, with anyPID),
// command and since when.
func (h Holder) words(anyPID bool) []string {
	var who []string
	if anyPID || h.PID > 0 {
		who = append(who, fmt.Sprintf("pid %d", h.PID))
	}
	if h.Command != "" {
		who = append(who, "`"+h.Command+"`")
	}
	if !h.Since.IsZero() {
		who = append(who, "since "+clock(h.Since))
	}
	return who
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// clock writes a time as "10:02" when it is today, else "Nov 28 10:02".
func clock(t time.Time) string {
	t = t.Local()
	now := time.Now()
	if y, m, d := now.Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// DamagedError is a database file that bbolt cannot read safely.
type DamagedError struct {
	Path   string
	Detail string // what was found, in bbolt's words
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("database %s is damaged (%s); nccltune leaves it as it is — restore it from a backup, or use --db to pick another file", e.Path, e.Detail)
}

func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// SchemaError is a file whose schema this nccltune cannot use.
type SchemaError struct {
	Path     string
	Found    int // the file's schema version
	Readable int // the newest this nccltune reads
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("database %s was written by a newer nccltune (schema %d; this nccltune reads schema %d or older); upgrade nccltune or use --db another file",
		e.Path, e.Found, e.Readable)
}

func (e *SchemaError) Is(target error) bool { return target == ErrNewerSchema }

// StudyNotFoundError is a study name or ID the database does not hold.
type StudyNotFoundError struct {
	Path  string
	Query string
	// Closest are the most similar study names, best first.
	Closest []string
}

func (e *StudyNotFoundError) Error() string {
	msg := fmt.Sprintf("no study %q in %s", e.Query, e.Path)
	if len(e.Closest) > 0 {
		msg += "; closest: " + strings.Join(e.Closest, ", ")
	}
	return msg + " (nccltune history lists them all)"
}

func (e *StudyNotFoundError) Is(target error) bool { return target == ErrNotFound }

// DuplicateTrialError is a second trial with a config the study already
// has. Existing is that trial's ID, so a caller can add another launch to
// it instead.
type DuplicateTrialError struct {
	StudyID  uint64
	Key      string
	Existing uint64
}

func (e *DuplicateTrialError) Error() string {
	key := cmp.Or(e.Key, "NCCL defaults")
	return fmt.Sprintf("study %d already has trial %d for config %q; add a launch to it instead of a new trial", e.StudyID, e.Existing, key)
}

func (e *DuplicateTrialError) Is(target error) bool { return target == ErrDuplicateTrial }

// classifyWriteError turns operating-system write failures into errors
// that name the cause and the next step. Other errors pass through.
func classifyWriteError(path string, err error) error {
	if err == nil {
		return nil
	}
	errno, ok := errnoOf(err)
	if !ok {
		return err
	}
	switch errno {
	case syscall.EROFS:
		return fmt.Errorf("%w: cannot write %s: the file system is read-only (%v) — use --db to pick a file on a writable disk", ErrReadOnly, path, err)
	case syscall.EACCES, syscall.EPERM:
		return fmt.Errorf("%w: cannot write %s: permission denied (%v) — fix its permissions or use --db to pick another file", ErrReadOnly, path, err)
	case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
		return fmt.Errorf("%w: cannot write %s: no space left (%v); nothing from this write was stored and earlier data is intact — free some space or use --db to pick a file on another disk", ErrDiskFull, path, err)
	}
	return err
}

// errnoOf finds the system error behind err, also in the message: bbolt
// formats some errors with %s, which drops the syscall.Errno.
func errnoOf(err error) (syscall.Errno, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno, true
	}
	msg := err.Error()
	for _, e := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if strings.Contains(msg, e.Error()) {
			return e, true
		}
	}
	return 0, false
}
