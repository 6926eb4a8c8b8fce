package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/store"
)

// studyNaming is what --name and --label give a new study.
type studyNaming struct {
	name   string
	labels map[string]string
}

// namingFlags are the flags of every command that creates a study.
func namingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "the new study's `NAME` (letters, digits, - and _; default: s<ID>-<band or kind>)"},
		labelFlag("tag the new study with `K=V` (lane=spark4, ticket=OPS-12), repeatable; show and history --json list them"),
	}
}

// readNaming reads --name and --label; a bad one is a usage error, found
// before the database opens.
func readNaming(c *cli.Context) (studyNaming, error) {
	n := studyNaming{name: c.String("name")}
	if n.name != "" {
		if err := store.CheckName(n.name); err != nil {
			return n, usageError(fmt.Errorf("--name: %w", err))
		}
	}
	for _, kv := range flagvalue.Items(c, "label") {
		k, v, _ := strings.Cut(kv, "=")
		if n.labels == nil {
			n.labels = map[string]string{}
		}
		n.labels[strings.TrimSpace(k)] = v
	}
	return n, nil
}

// labelFlag is --label K=V, repeatable, each key once.
func labelFlag(usage string) *flagvalue.List {
	return &flagvalue.List{GenericFlag: cli.GenericFlag{Name: "label", Usage: usage, Value: &flagvalue.KV{Flag: "label",
		Check: func(kv string) error {
			if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
				return usageErrorf("--label %q: write KEY=VALUE, e.g. --label lane=spark4", kv)
			}
			return nil
		},
		Repeated: func(k, _, _ string) error { return usageErrorf("--label %s is given twice; give it once", k) },
	}}}
}

// apply names and labels a study about to be created.
func (n studyNaming) apply(st *store.Study) {
	st.Name, st.Labels = n.name, n.labels
}

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
		Flags: []cli.Flag{
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("rm needs the studies to delete, e.g. nccltune rm s4-sweep (nccltune history lists them)")
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			return runRm(c.Context, rmOptions{db: path, studies: c.Args().Slice(), json: c.Bool("json"), stdout: c.App.Writer})
		},
	}
}

type rmOptions struct {
	db      string
	studies []string // names or IDs, at least one
	json    bool
	stdout  io.Writer
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
			return usageError(err)
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

func renameCommand() *cli.Command {
	return &cli.Command{
		Name:      "rename",
		Usage:     "give a study a new name",
		ArgsUsage: "STUDY NEW-NAME",
		Description: `rename changes a study's name (its ID stays): the name every command takes,
and the one exports and reports print.

Example:
  nccltune rename s3-512K-4M spark4-lane-512K-4M`,
		Flags: []cli.Flag{
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageErrorf("rename needs a study and its new name, e.g. nccltune rename s3-512K-4M spark4-512K-4M")
			}
			if err := store.CheckName(c.Args().Get(1)); err != nil {
				return usageError(err)
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			return runRename(c.Context, renameOptions{db: path, study: c.Args().Get(0), name: c.Args().Get(1), json: c.Bool("json"), stdout: c.App.Writer})
		},
	}
}

type renameOptions struct {
	db     string
	study  string // its name or ID
	name   string // the new name, already checked by store.CheckName
	json   bool
	stdout io.Writer
}

func runRename(ctx context.Context, o renameOptions) error {
	st, err := openManage(o.db, o.study)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.RenameStudy(o.study, o.name)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNameTaken) {
		return usageError(err)
	}
	if err != nil {
		// Another nccltune running the study, or a database that is
		// damaged or full: not a mistake in what was typed (exit 1).
		return err
	}
	if o.json {
		return ui.WriteJSON(o.stdout, map[string]any{"study": s.Name, "id": s.ID, "was": o.study})
	}
	fmt.Fprintf(o.stdout, "renamed %s to %s\n", o.study, s.Name)
	return nil
}
