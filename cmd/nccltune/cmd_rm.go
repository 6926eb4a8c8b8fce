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

func rmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "delete studies with all their trials, launches and raw output",
		ArgsUsage: "STUDY…",
		Description: `rm deletes each named study (a name, an ID, or s<ID>) from the database, with
everything stored under it. It cannot be undone; copy the database file
first to keep a backup. The file does not shrink: bbolt reuses the space.

Examples:
  nccltune rm s4-sweep s5-gate
  nccltune history --json | jq -r '.studies[] | select(.status=="failed") | .study' | xargs nccltune rm`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return vocab.UsageErrorf("rm needs the studies to delete, e.g. nccltune rm s4-sweep (nccltune history lists them)")
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			return runRm(c.Context, rmOptions{cmdIO: ioOf(c, path), studies: c.Args().Slice()})
		},
	}
}

type rmOptions struct {
	cmdIO
	studies []string // names or IDs, at least one
}

// runRm deletes the studies in the order given; one that is not there
// stops it (exit 2); those before it stay deleted.
func runRm(ctx context.Context, o rmOptions) error {
	st, err := openManage(o.db, o.studies[0])
	if err != nil {
		return err
	}
	defer st.Close()
	removed := []map[string]any{}
	for _, q := range o.studies {
		s, err := st.DeleteStudy(q)
		if errors.Is(err, store.ErrNotFound) {
			return vocab.UsageError(err)
		}
		if err != nil {
			return err
		}
		removed = append(removed, map[string]any{"study": s.Name, "id": s.ID, "kind": s.Kind})
		if !o.json {
			fmt.Fprintf(o.stdout, "removed %s (%s, %s)\n", s.Name, ui.AKind(s.Kind), s.Status)
		}
	}
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"removed": removed})
	}
	return nil
}
