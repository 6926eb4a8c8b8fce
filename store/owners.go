package store

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// bucketOwners maps studyID → owner JSON of each running study, created
// by the first write that needs it (no migration); a running study
// without an owner reads as interrupted.
var bucketOwners = []byte("owners")

// owner is the process that runs a study: its liveness token
// (holdLiveness) and, for messages, who it is.
type owner struct {
	Token uint32 `json:"token"`
	Holder
}

// claimStudy records this process as the runner of study id, refusing a
// study that another live process runs.
func (s *Store) claimStudy(tx *bolt.Tx, id uint64, name string) error {
	if err := s.checkNotRunElsewhere(tx, id, name); err != nil {
		return err
	}
	b, err := tx.CreateBucketIfNotExists(bucketOwners)
	if err != nil {
		return err
	}
	o := owner{Token: s.token, Holder: Holder{PID: os.Getpid(), Command: commandLine(os.Args), Since: now().Truncate(1e9)}}
	o.Host, _ = os.Hostname()
	return putJSON(b, itob(id), &o)
}

func (s *Store) releaseStudy(tx *bolt.Tx, id uint64) error {
	if b := tx.Bucket(bucketOwners); b != nil {
		return b.Delete(itob(id))
	}
	return nil
}

// checkNotRunElsewhere refuses to change a study that another live
// nccltune runs. name is the study's, or empty to look it up.
func (s *Store) checkNotRunElsewhere(tx *bolt.Tx, id uint64, name string) error {
	var o owner
	if getJSON(tx.Bucket(bucketOwners), itob(id), &o) != nil {
		return nil
	}
	if o.Token == 0 || o.Token == s.token || !livenessHeld(s.file, o.Token) {
		return nil
	}
	if name == "" {
		var st Study
		name = fmt.Sprint(id)
		if getJSON(tx.Bucket(bucketStudies), itob(id), &st) == nil {
			name = st.Name
		}
	}
	return &StudyBusyError{Study: name, Holder: o.Holder}
}

// ownersAlive reports whether each owner's process is alive.
func (s *Store) ownersAlive(owners map[uint64]owner) map[uint64]bool {
	alive := map[uint64]bool{}
	if len(owners) == 0 {
		return alive
	}
	f, err := os.OpenFile(s.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return alive
	}
	defer f.Close()
	for id, o := range owners {
		alive[id] = o.Token != 0 && livenessHeld(f, o.Token)
	}
	return alive
}

func readOwners(tx *bolt.Tx, ids []uint64) map[uint64]owner {
	out := map[uint64]owner{}
	b := tx.Bucket(bucketOwners)
	for _, id := range ids {
		var o owner
		if getJSON(b, itob(id), &o) == nil {
			out[id] = o
		}
	}
	return out
}

// StudyBusyError: the study is being run by another live nccltune.
type StudyBusyError struct {
	Study  string
	Holder Holder
}

func (e *StudyBusyError) Error() string {
	who := strings.Join(e.Holder.words(true), ", ")
	return fmt.Sprintf("study %s is being run by another nccltune (%s) — wait for it to finish (nccltune history shows it running), or stop that process first", e.Study, who)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *StudyBusyError) Is(target error) bool { return target == ErrLocked }
