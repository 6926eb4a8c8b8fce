package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/vocab"
)

// AddTrial stores a new trial of t.StudyID, assigning ID, Number, Key,
// times, and State (running) when empty. A config the study already has
// is a *DuplicateTrialError naming the existing trial.
func (s *Store) AddTrial(t *Trial) error {
	c := newTrialRecord(t)
	err := s.update(func(tx *bolt.Tx) error {
		if err := s.checkNotRunElsewhere(tx, c.StudyID, ""); err != nil {
			return err
		}
		return addTrialTx(tx, c)
	})
	if err != nil {
		return fmt.Errorf("add trial to study %d: %w", c.StudyID, err)
	}
	*t = *c
	return nil
}

func newTrialRecord(t *Trial) *Trial {
	c := *t
	c.Config = t.Config.Clone()
	c.Key = c.Config.Key()
	c.State = cmp.Or(c.State, vocab.TrialRunning)
	return &c
}

func addTrialTx(tx *bolt.Tx, c *Trial) error {
	if tx.Bucket(bucketStudies).Get(itob(c.StudyID)) == nil {
		return fmt.Errorf("%w: no study with ID %d", ErrNotFound, c.StudyID)
	}
	keys := tx.Bucket(bucketTrialKeys)
	keyKey := trialKeyKey(c.StudyID, c.Key)
	if v := keys.Get(keyKey); v != nil {
		return &DuplicateTrialError{StudyID: c.StudyID, Key: c.Key, Existing: btoi(v)}
	}
	index := tx.Bucket(bucketTrialStudy)
	id, err := index.NextSequence()
	if err != nil {
		return err
	}
	t := now()
	sum, err := bumpSummary(tx, c.StudyID, 1, 0, t)
	if err != nil {
		return err
	}
	c.ID, c.Number, c.Launches = id, sum.Trials-1, 0
	if c.Created.IsZero() {
		c.Created = t
	}
	c.Updated = t
	if err := index.Put(itob(id), itob(c.StudyID)); err != nil {
		return err
	}
	if err := keys.Put(keyKey, itob(id)); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bucketTrials), pair(c.StudyID, id), c)
}

// trialKeyKey is studyID|"k="+key: bbolt keys cannot be empty, and the
// defaults' key is "".
func trialKeyKey(studyID uint64, key string) []byte {
	return append(itob(studyID), "k="+key...)
}

// UpdateTrials writes trials' State, Reason, Role and ScoreUS in one
// transaction; the rest stays as stored, and each trial is refreshed.
func (s *Store) UpdateTrials(ts []*Trial) error {
	out := make([]Trial, len(ts))
	err := s.update(func(tx *bolt.Tx) error {
		for i, t := range ts {
			c := *t
			old, err := getTrial(tx, c.ID)
			if err != nil {
				return fmt.Errorf("update trial %d: %w", c.ID, err)
			}
			if err := s.checkNotRunElsewhere(tx, old.StudyID, ""); err != nil {
				return err
			}
			if key := c.Config.Key(); key != old.Key {
				return fmt.Errorf("update trial %d: its config cannot change (from %q to %q); add a new trial instead", c.ID, old.Key, key)
			}
			c.StudyID, c.Number, c.Config, c.Key = old.StudyID, old.Number, old.Config, old.Key
			c.Created, c.Launches = old.Created, old.Launches
			c.Updated = now()
			if _, err := bumpSummary(tx, c.StudyID, 0, 0, c.Updated); err != nil {
				return err
			}
			if err := putJSON(tx.Bucket(bucketTrials), pair(c.StudyID, c.ID), &c); err != nil {
				return fmt.Errorf("update trial %d: %w", c.ID, err)
			}
			out[i] = c
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, t := range ts {
		*t = out[i]
	}
	return nil
}

// Trial returns one trial by ID.
func (s *Store) Trial(id uint64) (*Trial, error) {
	var t *Trial
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		t, err = getTrial(tx, id)
		return err
	})
	return t, err
}

func getTrial(tx *bolt.Tx, id uint64) (*Trial, error) {
	studyID := btoi(bucketGet(tx, bucketTrialStudy, itob(id)))
	if studyID == 0 {
		return nil, fmt.Errorf("%w: no trial with ID %d", ErrNotFound, id)
	}
	var t Trial
	if err := getJSON(tx.Bucket(bucketTrials), pair(studyID, id), &t); err != nil {
		if errors.Is(err, errMissing) {
			return nil, fmt.Errorf("%w: trial %d is indexed but missing (damaged database)", ErrNotFound, id)
		}
		return nil, fmt.Errorf("trial %d: %w", id, err)
	}
	return &t, nil
}

// TrialsAndLaunches is Trials and Launches of one study.
func (s *Store) TrialsAndLaunches(studyID uint64) ([]*Trial, []*Launch, error) {
	trials, err := s.Trials(studyID)
	if err != nil {
		return nil, nil, err
	}
	launches, err := s.Launches(studyID)
	return trials, launches, err
}

// Trials lists a study's trials by number.
func (s *Store) Trials(studyID uint64) ([]*Trial, error) {
	return studyRecords[Trial](s, bucketTrials, studyID, "trial", "trials")
}

// studyRecords are the records of a study in bucket, in key order; what
// and whats name one and several in errors.
func studyRecords[T any](s *Store, bucket []byte, studyID uint64, what, whats string) ([]*T, error) {
	var out []*T
	err := s.view(func(tx *bolt.Tx) error {
		return forPrefix(tx.Bucket(bucket), itob(studyID), func(k, v []byte) error {
			x, err := decodeRecord[T](what, k, v)
			if err == nil {
				out = append(out, x)
			}
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%s of study %d: %w", whats, studyID, err)
	}
	return out, nil
}

// decodeRecord decodes the record v at key k (a pair of IDs).
func decodeRecord[T any](what string, k, v []byte) (*T, error) {
	if v == nil {
		return nil, fmt.Errorf("%s %d is indexed but missing (damaged database)", what, btoi(k[8:]))
	}
	var x T
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, fmt.Errorf("%s %d: damaged record: %w", what, btoi(k[8:]), err)
	}
	return &x, nil
}

// forPrefix calls fn for each key of b that starts with prefix, in order
// (none in a missing bucket).
func forPrefix(b *bolt.Bucket, prefix []byte, fn func(k, v []byte) error) error {
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func bucketGet(tx *bolt.Tx, bucket, key []byte) []byte {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Get(key)
}
