package store

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// SchemaVersion is the layout this nccltune writes and reads.
//
// Schema 1 buckets (IDs are big-endian uint64 from NextSequence, "a|b" is
// the 16-byte concatenation of two IDs):
//
//	meta            "schema" → decimal version, "app" → "nccltune"
//	studies         studyID → Study JSON              (sequence: study IDs)
//	names           name → studyID
//	summaries       studyID → StudySummary JSON (kept current by every write)
//	trials          studyID|trialID → Trial JSON
//	trial_keys      studyID|"k="+Config.Key() → trialID
//	trial_study     trialID → studyID                 (sequence: trial IDs)
//	launches        studyID|launchID → Launch JSON    (sequence: launch IDs)
//	trial_launches  trialID|launchID → (empty)
//	raw             launchID|stream → gzip bytes (stream 'o' stdout, 'e' stderr, 'j' JSON)
//	owners          studyID → owner JSON (the process running a running study;
//	                created by the first write that needs it, see owners.go)
const SchemaVersion = 1

var (
	bucketMeta          = []byte("meta")
	bucketStudies       = []byte("studies")
	bucketNames         = []byte("names")
	bucketSummaries     = []byte("summaries")
	bucketTrials        = []byte("trials")
	bucketTrialKeys     = []byte("trial_keys")
	bucketTrialStudy    = []byte("trial_study")
	bucketLaunches      = []byte("launches")
	bucketTrialLaunches = []byte("trial_launches")
	bucketRaw           = []byte("raw")

	keySchema = []byte("schema")
	keyApp    = []byte("app")
)

// schemaV1Buckets are the buckets of schema 1.
var schemaV1Buckets = [][]byte{
	bucketMeta, bucketStudies, bucketNames, bucketSummaries, bucketTrials, bucketTrialKeys,
	bucketTrialStudy, bucketLaunches, bucketTrialLaunches, bucketRaw,
}

// migrations[v] upgrades a schema-v file to v+1 inside the caller's
// transaction. Schema 0 is a bbolt file with no nccltune buckets.
var migrations = []func(tx *bolt.Tx) error{
	0: func(tx *bolt.Tx) error {
		for _, name := range schemaV1Buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		return meta.Put(keyApp, []byte("nccltune"))
	},
}

// schemaVersion reads the file's schema, refusing files from a newer
// nccltune and bbolt files that belong to something else.
func schemaVersion(tx *bolt.Tx, path string) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		var foreign []string
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			foreign = append(foreign, string(name))
			return nil
		})
		if len(foreign) > 0 {
			sort.Strings(foreign)
			return 0, fmt.Errorf("%s is a bbolt database but not an nccltune one (it holds buckets %s) — use --db to pick another file",
				path, strings.Join(foreign, ", "))
		}
		return 0, nil
	}
	raw := meta.Get(keySchema)
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s has an unreadable schema version %q — it is damaged or not an nccltune database; use --db to pick another file", path, raw)
	}
	if v > SchemaVersion {
		return v, &SchemaError{Path: path, Found: v, Readable: SchemaVersion}
	}
	return v, nil
}

// migrate brings the file to SchemaVersion in the caller's transaction.
func migrate(tx *bolt.Tx, path string) error {
	v, err := schemaVersion(tx, path)
	if err != nil {
		return err
	}
	for ; v < SchemaVersion; v++ {
		if err := migrations[v](tx); err != nil {
			return fmt.Errorf("upgrade %s from schema %d to %d: %w", path, v, v+1, err)
		}
		if err := tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(v+1))); err != nil {
			return err
		}
	}
	return nil
}

// itob is a big-endian uint64 key: byte order is numeric order.
func itob(id uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, id)
	return b
}

func btoi(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b[:8])
}

// pair is the 16-byte key a|b.
func pair(a, b uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, a)
	binary.BigEndian.PutUint64(k[8:], b)
	return k
}
