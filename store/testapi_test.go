package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// What only tests ask of a store: nccltune itself reads launches by study
// and settles trials together.

// Path is the database file's absolute path.
func (s *Store) Path() string { return s.path }

// UpdateTrial is UpdateTrials for one trial.
func (s *Store) UpdateTrial(t *Trial) error {
	return s.UpdateTrials([]*Trial{t})
}

// TrialLaunches lists one trial's launches in order.
func (s *Store) TrialLaunches(trialID uint64) ([]*Launch, error) {
	var out []*Launch
	err := s.view(func(tx *bolt.Tx) error {
		studyID := btoi(bucketGet(tx, bucketTrialStudy, itob(trialID)))
		if studyID == 0 {
			return fmt.Errorf("%w: no trial with ID %d", ErrNotFound, trialID)
		}
		launches := tx.Bucket(bucketLaunches)
		return forPrefix(tx.Bucket(bucketTrialLaunches), itob(trialID), func(k, _ []byte) error {
			key := pair(studyID, btoi(k[8:]))
			l, err := decodeRecord[Launch]("launch", key, launches.Get(key))
			if err == nil {
				out = append(out, l)
			}
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("launches of trial %d: %w", trialID, err)
	}
	return out, nil
}
