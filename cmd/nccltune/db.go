package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// openManage opens the database for writing for rm and rename; one that
// does not exist holds no study to change (exit 2), and is not created.
func openManage(path, query string) (*store.Store, error) {
	st, err := stored.OpenReview(path, query)
	if err != nil {
		return nil, err
	}
	// It only refused a missing database: a writer cannot open beside it.
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

// reviewDBPath is dbPath for a command that only reads studies: a
// database the user named that does not exist is a usage error, not "no
// studies yet" (the default one may not exist yet).
func reviewDBPath(c *cli.Context) (string, error) {
	p, err := dbPath(c)
	if err != nil || c.String("db") == "" {
		return p, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		def := "the default database"
		if d, err := store.DefaultPath(); err == nil {
			def += " " + d
		}
		return "", vocab.UsageErrorf("database %s (--db or NCCLTUNE_DB) does not exist — check the path; nccltune history "+
			"without --db (and NCCLTUNE_DB unset) lists the studies of %s, and nccltune search (or sweep, import) with --db %s creates this one", p, def, p)
	}
	return p, nil
}
