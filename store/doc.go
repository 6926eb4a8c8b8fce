// Package store owns nccltune's memory: one bbolt file holding every
// study, its trials (configs), every launch of the benchmark with its
// per-size samples and parsed NCCL facts, and each launch's raw output,
// compressed. The schema is versioned; older files are migrated and files
// from a newer nccltune are refused.
//
// The store records and returns; it decides nothing (that is search's and
// model's work).
//
// # Concurrency
//
// bbolt locks its file with flock: a read-write handle takes an exclusive
// lock that shuts out readers, and a read-only handle takes a shared lock
// that shuts out the writer. Holding the bbolt file open for a whole study
// would stop `nccltune history` and `show` for hours, so:
//
//   - A writer (Options.ReadOnly false) takes a sidecar lock file, PATH.lock,
//     with flock(LOCK_EX) around each write transaction only, so several
//     processes can write one database in turn (two searches at once).
//     While held, the file holds the holder's pid, command line and start
//     time, so a writer kept waiting past Options.LockTimeout is told who
//     holds the database.
//   - A writer process marks itself alive for its whole life with an
//     open-file-description lock on one byte of the database file, and
//     records that byte's token with each study it runs (the owners
//     bucket): readers show a study whose process is gone as interrupted,
//     and another writer cannot take over (resume, delete) a study whose
//     process lives.
//   - Every operation opens the bbolt file only for its own transaction and
//     closes it again (milliseconds), with a bbolt Timeout so nothing waits
//     forever. Readers never take the sidecar lock.
//   - A new database is built in a temporary file and renamed into place,
//     so a reader never sees a half-initialised file.
//
// Writes are single bbolt Update transactions (never Batch): when one
// returns, the data is on disk (fdatasync), and a process killed at any
// moment loses at most the transaction in flight.
package store
