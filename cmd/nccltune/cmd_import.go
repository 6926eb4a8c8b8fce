package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "bring saved nccl-tests outputs (text or JSON) into the database",
		ArgsUsage: "FILE…",
		Description: `import parses saved nccl-tests outputs (the text table, with or without
NCCL_DEBUG lines, or the -J JSON file) and stores each as one launch, so
results measured before nccltune join the history. The files go into a new
study of kind import, or into an existing import study named by --study.
--env records the NCCL settings the runs used: one trial per distinct set.
Simulated outputs stay labelled as simulated. A file that does not parse
completely is reported by name and nothing of it is stored.

Examples:
  nccltune import run1.txt run2.txt
  nccltune import --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8 tuned.json
  nccltune import --study s9-import more.txt`,
		Flags: []cli.Flag{
			flagvalue.KVFlag("env", "`K=V` the imported runs were made with, repeatable (none: NCCL's defaults)", flagvalue.RecordedEnvItem("env")),
			&cli.StringFlag{Name: "study", Usage: "add to this existing import `STUDY` instead of starting a new one"},
			&cli.StringFlag{Name: "op", Usage: "check that every output is of this collective (" + strings.Join(nccl.OpNames(), ", ") + "); the op itself is read from each output's program name"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return vocab.UsageErrorf("import needs at least one FILE of saved nccl-tests output")
			}
			db, err := dbPath(c)
			if err != nil {
				return err
			}
			op, err := launchflags.ReadOp(c)
			if err != nil {
				return err
			}
			return runImport(c.Context, importOptions{cmdIO: ioOf(c, db), op: op, files: c.Args().Slice(),
				config: flagvalue.EnvOf(c, "env"), study: c.String("study")})
		},
	}
}

type importOptions struct {
	cmdIO
	op     nccl.Op
	files  []string
	config nccl.Config
	study  string
}

func runImport(ctx context.Context, o importOptions) error {
	r, err := studyrun.Import(ctx, o.db, o.files, studyrun.ImportOptions{Study: o.study, Config: o.config, Op: o.op})
	if err != nil {
		return err
	}
	rep := ui.ImportReport{Study: r.Study, Trial: r.Trial, Created: r.Created, Imported: r.Imported, Skipped: r.Skipped}
	if err := ui.PrintImport(o.stdout, o.json, rep, errorJSON); err != nil {
		return err
	}
	if len(r.Skipped) > 0 {
		return fmt.Errorf("%d of %d files were not imported (see above); nothing of them was stored", len(r.Skipped), len(o.files))
	}
	return nil
}
