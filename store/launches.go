package store

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Raw output streams, the last byte of a raw key.
const (
	streamStdout = 'o'
	streamStderr = 'e'
	streamJSON   = 'j'
)

// AddLaunch stores a launch and its raw output (nil for none) in one
// transaction with its trial's count and score and the study's counts,
// assigning l.ID and l.Seq.
func (s *Store) AddLaunch(l *Launch, raw *Raw) error {
	return s.addLaunch(l, raw, nil, nil)
}

// TrialUpdate is what a launch changes about its trial, in the launch's
// transaction (one commit per launch).
type TrialUpdate struct {
	State   vocab.TrialState
	Reason  string
	ScoreUS float64 // when positive, replaces the trial's score
}

// AddLaunchUpdatingTrial is AddLaunch that also applies u to the launch's
// trial (after the launch's own score), in the same transaction.
func (s *Store) AddLaunchUpdatingTrial(l *Launch, raw *Raw, u TrialUpdate) error {
	return s.addLaunch(l, raw, nil, &u)
}

// AddTrialWithLaunch creates trial t (AddTrial) with l as its first launch
// and applies u, in one transaction; it fills in t (Launches is 1) and sets
// l.TrialID.
func (s *Store) AddTrialWithLaunch(t *Trial, l *Launch, raw *Raw, u TrialUpdate) error {
	return s.addLaunch(l, raw, t, &u)
}

// addLaunch stores l and raw, first creating newTrial when it is not nil,
// and applies u (nil for none) to the launch's trial. Seq is assigned
// here only: the store sees every launch of a study, from any process.
func (s *Store) addLaunch(l *Launch, raw *Raw, newTrial *Trial, u *TrialUpdate) error {
	for _, z := range l.Sizes { // no time a fabric cannot reach is stored
		if err := benchfmt.CheckSize(z); err != nil {
			return fmt.Errorf("add launch: size %d: %w", z.Bytes, err)
		}
	}
	// Compress before opening the file: the transaction stays short.
	streams, err := compressRaw(raw)
	if err != nil {
		return fmt.Errorf("add launch: compress output: %w", err)
	}
	c := *l
	var created *Trial
	if newTrial != nil {
		created = newTrialRecord(newTrial)
	}
	err = s.update(func(tx *bolt.Tx) error {
		if err := s.checkNotRunElsewhere(tx, c.StudyID, ""); err != nil {
			return err
		}
		if created != nil {
			if err := addTrialTx(tx, created); err != nil {
				return err
			}
			c.TrialID = created.ID
		}
		return putLaunchTx(tx, &c, streams, u)
	})
	if err != nil {
		return fmt.Errorf("add launch to trial %d: %w", c.TrialID, err)
	}
	if newTrial != nil {
		*newTrial = *created
		newTrial.Launches = 1
	}
	*l = c
	return nil
}

func compressRaw(raw *Raw) (map[byte][]byte, error) {
	if raw == nil {
		return nil, nil
	}
	streams := make(map[byte][]byte, 3)
	for stream, data := range map[byte][]byte{streamStdout: raw.Stdout, streamStderr: raw.Stderr, streamJSON: raw.JSON} {
		z, err := compress(data)
		if err != nil {
			return nil, err
		}
		streams[stream] = z
	}
	return streams, nil
}

// putLaunchTx stores launch c with its compressed output inside tx,
// assigning c.ID and c.Seq, and counts it on its trial and study; the
// trial takes c's score (when scored) and then u (nil for none).
func putLaunchTx(tx *bolt.Tx, c *Launch, streams map[byte][]byte, u *TrialUpdate) error {
	trial, err := getTrial(tx, c.TrialID)
	if err != nil {
		return err
	}
	if trial.StudyID != c.StudyID {
		return fmt.Errorf("trial %d belongs to study %d, not %d", c.TrialID, trial.StudyID, c.StudyID)
	}
	launches := tx.Bucket(bucketLaunches)
	id, err := launches.NextSequence()
	if err != nil {
		return err
	}
	t := now()
	sum, err := bumpSummary(tx, c.StudyID, 0, 1, t)
	if err != nil {
		return err
	}
	c.ID, c.Seq = id, sum.Launches-1
	if err := putJSON(launches, pair(c.StudyID, id), c); err != nil {
		return err
	}
	if err := tx.Bucket(bucketTrialLaunches).Put(pair(c.TrialID, id), nil); err != nil {
		return err
	}
	rawB := tx.Bucket(bucketRaw)
	for stream, z := range streams {
		if err := rawB.Put(append(itob(id), stream), z); err != nil {
			return err
		}
	}
	trial.Launches++
	if c.Scored && c.ScoreUS > 0 {
		trial.ScoreUS = c.ScoreUS
	}
	if u != nil {
		if u.State != "" {
			trial.State, trial.Reason = u.State, u.Reason
		}
		if u.ScoreUS > 0 {
			trial.ScoreUS = u.ScoreUS
		}
	}
	trial.Updated = t
	return putJSON(tx.Bucket(bucketTrials), pair(trial.StudyID, trial.ID), trial)
}

// Launches lists a study's launches in the order they were stored.
func (s *Store) Launches(studyID uint64) ([]*Launch, error) {
	return studyRecords[Launch](s, bucketLaunches, studyID, "launch", "launches")
}

// RawOutput reads back a launch's stdout, stderr and JSON file;
// ErrNotFound when none was stored.
func (s *Store) RawOutput(launchID uint64) (*Raw, error) {
	var raw Raw
	found := false
	err := s.view(func(tx *bolt.Tx) error {
		return forPrefix(tx.Bucket(bucketRaw), itob(launchID), func(k, v []byte) error {
			if len(k) != 9 {
				return nil
			}
			data, err := decompress(v)
			if err != nil {
				return fmt.Errorf("damaged output: %w", err)
			}
			found = true
			switch k[8] {
			case streamStdout:
				raw.Stdout = data
			case streamStderr:
				raw.Stderr = data
			case streamJSON:
				raw.JSON = data
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("raw output of launch %d: %w", launchID, err)
	}
	if !found {
		return nil, fmt.Errorf("%w: no raw output stored for launch %d", ErrNotFound, launchID)
	}
	return &raw, nil
}

// compress gzips data at the fastest level: the write must stay short.
func compress(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return []byte{}, nil
	}
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipWriters are reused: each holds about a megabyte of state, and
// allocating them was a third of AddLaunch's CPU time.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

func decompress(z []byte) ([]byte, error) {
	if len(z) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}
