// Package store owns nccltune's memory: one bbolt file holding every
// study, its trials (configs), every launch with its per-size samples and
// parsed NCCL facts, and each launch's raw output, compressed. The schema
// is versioned; older files are migrated and files from a newer nccltune
// are refused. The store records and returns; it decides nothing.
//
// # Concurrency
//
// bbolt's flock shuts readers out of a file open for writing, and holding
// it for a whole study would stop `nccltune history` and `show` for hours,
// so:
//
//   - A writer takes a sidecar lock file, PATH.lock, only around each write
//     transaction, so several processes write one database in turn. The
//     file names its holder, for a writer kept waiting past LockTimeout.
//   - A writer process marks itself alive with an open-file-description
//     lock on one byte of the database file, recorded with each study it
//     runs: readers show a study whose process is gone as interrupted, and
//     no other writer takes over a study whose process lives.
//   - Every operation opens the bbolt file only for its own transaction,
//     with a Timeout. Readers never take the sidecar lock.
//   - A new database is built in a temporary file and linked into place.
//
// Writes are single bbolt Update transactions (never Batch): when one
// returns, the data is on disk, and a killed process loses at most the
// transaction in flight.
package store
