package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ErrNameTaken is the error of a study name another study has.
var ErrNameTaken = errors.New("study name taken")

// NameTakenError names the study name that is taken.
type NameTakenError struct{ Name string }

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("a study named %q already exists; pick another name", e.Name)
}

// Is makes errors.Is(err, ErrNameTaken) true.
func (e *NameTakenError) Is(target error) bool { return target == ErrNameTaken }

// DeleteStudy removes a study (by name, ID or "s<ID>") with everything
// stored under it: its trials, launches and raw output. It returns the
// removed study. The database file does not shrink (bbolt reuses the
// pages for later writes).
func (s *Store) DeleteStudy(nameOrID string) (*Study, error) {
	var st Study
	err := s.update(func(tx *bolt.Tx) error {
		id, err := s.findStudy(tx, nameOrID, &st)
		if err != nil {
			return err
		}
		if err := s.checkNotRunElsewhere(tx, id, st.Name); err != nil {
			return err
		}
		if err := s.releaseStudy(tx, id); err != nil {
			return err
		}
		prefix := itob(id)
		// Trials: their IDs lead to the trial→study index and the
		// trial→launch pairs.
		trialKeys, err := keysWithPrefix(tx.Bucket(bucketTrials), prefix)
		if err != nil {
			return err
		}
		for _, k := range trialKeys {
			trialID := k[8:]
			if err := tx.Bucket(bucketTrialStudy).Delete(trialID); err != nil {
				return err
			}
			if err := deletePrefix(tx.Bucket(bucketTrialLaunches), trialID); err != nil {
				return err
			}
		}
		// Launches: their IDs lead to the raw output.
		launchKeys, err := keysWithPrefix(tx.Bucket(bucketLaunches), prefix)
		if err != nil {
			return err
		}
		for _, k := range launchKeys {
			if err := deletePrefix(tx.Bucket(bucketRaw), k[8:]); err != nil {
				return err
			}
		}
		for _, b := range [][]byte{bucketTrials, bucketTrialKeys, bucketLaunches} {
			if err := deletePrefix(tx.Bucket(b), prefix); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketNames).Delete([]byte(st.Name)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketSummaries).Delete(prefix); err != nil {
			return err
		}
		return tx.Bucket(bucketStudies).Delete(prefix)
	})
	return manageResult(&st, "delete", nameOrID, err)
}

// manageResult is st, or err in the words of what failed on study q.
func manageResult(st *Study, what, q string, err error) (*Study, error) {
	if _, notFound := err.(*StudyNotFoundError); notFound {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s study %s: %w", what, q, err)
	}
	return st, nil
}

// RenameStudy gives a study (by name, ID or "s<ID>") a new name, refusing
// a name another study has. It returns the renamed study.
func (s *Store) RenameStudy(nameOrID, newName string) (*Study, error) {
	if err := CheckName(newName); err != nil {
		return nil, err
	}
	var st Study
	err := s.update(func(tx *bolt.Tx) error {
		id, err := s.findStudy(tx, nameOrID, &st)
		if err != nil || st.Name == newName {
			return err
		}
		studies, names, sums := tx.Bucket(bucketStudies), tx.Bucket(bucketNames), tx.Bucket(bucketSummaries)
		// The process running it writes its ending under the old name.
		if err := s.checkNotRunElsewhere(tx, id, st.Name); err != nil {
			return err
		}
		if names.Get([]byte(newName)) != nil {
			return &NameTakenError{Name: newName}
		}
		if err := names.Delete([]byte(st.Name)); err != nil {
			return err
		}
		if err := names.Put([]byte(newName), itob(id)); err != nil {
			return err
		}
		st.Name = newName
		st.Updated = now()
		if err := putJSON(studies, itob(id), &st); err != nil {
			return err
		}
		var sum StudySummary
		if err := getJSON(sums, itob(id), &sum); err != nil {
			return err
		}
		sum.Name, sum.Updated = newName, st.Updated
		return putJSON(sums, itob(id), &sum)
	})
	return manageResult(&st, "rename", nameOrID, err)
}

// keysWithPrefix copies the keys under prefix (bbolt's bytes are only
// valid inside the transaction, and a bucket must not change under its
// cursor).
func keysWithPrefix(b *bolt.Bucket, prefix []byte) ([][]byte, error) {
	var keys [][]byte
	err := forPrefix(b, prefix, func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	return keys, err
}

// deletePrefix deletes every key under prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	keys, err := keysWithPrefix(b, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
