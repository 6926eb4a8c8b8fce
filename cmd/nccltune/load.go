package main

import (
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
)

// openManage opens the database for writing for rm and rename; one that
// does not exist holds no study to change (exit 2), and is not created.
func openManage(path, query string) (*store.Store, error) {
	st, err := report.OpenReview(path, query)
	if err != nil {
		return nil, err
	}
	// The read-only handle only refused a missing database: a writer
	// cannot open beside it.
	if err := st.Close(); err != nil {
		return nil, err
	}
	return store.Open(path, store.Options{})
}
