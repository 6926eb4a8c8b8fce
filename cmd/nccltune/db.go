package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/stored"
)

// Where the database is, and opening it to change a study.

// openManage opens the database for writing for rm and rename; one that
// does not exist holds no study to change (exit 2), and is not created.
func openManage(path, query string) (*store.Store, error) {
	st, err := stored.OpenReview(path, query)
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

// dbPath is --db (or NCCLTUNE_DB), else the default under the user's data dir.
func dbPath(c *cli.Context) (string, error) {
	if p := c.String("db"); p != "" {
		return p, nil
	}
	p, err := store.DefaultPath()
	if err != nil {
		return "", fmt.Errorf("finding the default database location: %w; pass --db FILE", err)
	}
	return p, nil
}
