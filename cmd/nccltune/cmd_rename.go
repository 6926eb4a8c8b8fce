package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

func renameCommand() *cli.Command {
	return &cli.Command{
		Name:      "rename",
		Usage:     "give a study a new name",
		ArgsUsage: "STUDY NEW-NAME",
		Description: `rename changes a study's name (its ID stays): the name every command takes,
and the one exports and reports print.

Example:
  nccltune rename s3-512K-4M spark4-lane-512K-4M`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return vocab.UsageErrorf("rename needs a study and its new name, e.g. nccltune rename s3-512K-4M spark4-512K-4M")
			}
			if err := store.CheckName(c.Args().Get(1)); err != nil {
				return vocab.UsageError(err)
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			return runRename(c.Context, renameOptions{cmdIO: ioOf(c, path), study: c.Args().Get(0), name: c.Args().Get(1)})
		},
	}
}

type renameOptions struct {
	cmdIO
	study string // its name or ID
	name  string // the new name, already checked by store.CheckName
}

func runRename(ctx context.Context, o renameOptions) error {
	st, err := openManage(o.db, o.study)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.RenameStudy(o.study, o.name)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNameTaken) {
		return vocab.UsageError(err)
	}
	if err != nil {
		return err // not a mistake in what was typed (exit 1)
	}
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"study": s.Name, "id": s.ID, "was": o.study})
	}
	fmt.Fprintf(o.stdout, "renamed %s to %s\n", o.study, s.Name)
	return nil
}
