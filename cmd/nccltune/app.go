package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/cliargs"
	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/studyconfig"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// run is the whole program minus process concerns: parse args, run one
// command, return its error for main to map to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	out := &countingWriter{w: stdout}
	err := runCommand(ctx, args, out, stderr)
	if err != nil && out.n == 0 && cliargs.WantsJSON(args) {
		// --json promises one document on stdout whatever happens.
		_ = ui.WriteJSON(stdout, ui.ErrorDocument(errorJSON(err)))
	}
	return err
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	app := newApp(stdout, stderr)
	args, dangling := cliargs.Reorder(app, args)
	if dangling != "" {
		help := "nccltune --help"
		if name := cliargs.CommandName(app, args); name != "" {
			help = "nccltune " + name + " --help"
		}
		return vocab.UsageErrorf("%s needs a value, e.g. %s=VALUE (see %s)", dangling, dangling, help)
	}
	args = cliargs.HelpAsFlag(app, args)
	if name := cliargs.UnknownCommand(app, args); name != "" {
		return vocab.UsageErrorf("%q is not a nccltune command%s (nccltune --help lists them)", name, cliargs.NearestCommand(app, name))
	}
	ownHelpCommands(app) // after cliargs: see cli_shared.go
	err := app.RunContext(ctx, args)
	if err != nil && ctx.Err() != nil {
		return vocab.ErrInterrupted
	}
	return err
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "nccltune",
		Usage: "find the NCCL settings that make collectives fastest for your message sizes",
		Description: `nccltune drives nccl-tests (all_reduce_perf) under mpirun, srun or locally,
searches NCCL_* settings for a band of message sizes, measures the noise,
and recommends a change only when the gain is real. Every launch is kept
in a bbolt database. --sim PROFILE runs a simulated fabric instead of real
hardware; simulated results are always labelled as simulated.

Start with:  nccltune search --sim spark4 --band 512K-4M

` + exitCodesHelp,
		Version:         releaseVersion, // --version prints version(): see init in cmd_version.go
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// Values such as NCCL_IB_HCA==a,b and --mca lists hold commas.
		DisableSliceFlagSeparator: true,
		EnableBashCompletion:      false,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", EnvVars: []string{"NCCLTUNE_DB"},
				Usage: "bbolt database `FILE` holding every study, in a directory that exists (default: nccltune/nccltune.db under the user's data dir, created on first use)"},
		},
		Commands: commands(),
		// No --out may name the database, even where the command never opens it.
		Before: func(c *cli.Context) error {
			if p, err := dbPath(c); err == nil {
				store.Keep(p)
			}
			return nil
		},
		// Errors go back to run; exit codes are decided in main only.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			if c.Command != nil {
				if ferr := flagvalue.Refused(c.Command.Flags); ferr != nil {
					return ferr // the typed value's own words
				}
			}
			err = withNearestFlag(c, err)
			if name := helpName(c); name != "nccltune" {
				return vocab.UsageErrorf("%v (see %s --help)", err, name)
			}
			// Before any command: only --db is nccltune's own.
			return vocab.UsageErrorf("%v: before the command nccltune takes only --db, --help and --version; a command's own flags follow it (nccltune history --json; see nccltune COMMAND --help)", err)
		},
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = app.OnUsageError
		for _, sub := range cmd.Subcommands {
			sub.OnUsageError = app.OnUsageError
		}
	}
	return app
}

// withNearestFlag adds "; did you mean --budget?" to the flag package's
// "flag provided but not defined: -budgt".
func withNearestFlag(c *cli.Context, err error) error {
	var flags []cli.Flag
	if c.Command != nil && c.Command.Name != c.App.Name {
		flags = c.Command.Flags
	}
	// Any other error names no flag: NearestFlag("") is "".
	if near := cliargs.NearestFlag(cliargs.UndefinedFlag(err), flags, c.App.Flags); near != "" {
		return fmt.Errorf("%v%s", err, near)
	}
	return err
}

// helpName is the command whose --help explains the flag refused:
// "nccltune replay build", or "nccltune" for a flag before any command.
func helpName(c *cli.Context) string {
	name := ""
	for _, ctx := range c.Lineage() { // the command itself first
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name {
			name = " " + ctx.Command.Name + name
		}
	}
	return "nccltune" + name
}

// releaseVersion is nccltune's version; cmd_version.go adds the commit.
const releaseVersion = "0.1.0"

// commands lists every subcommand; those that launch benchmarks read
// their flags from a study config too.
func commands() []*cli.Command {
	return []*cli.Command{
		studyconfig.With(searchCommand(), resumedKeys),
		studyconfig.With(verifyCommand(), resumedKeys),
		studyconfig.With(compareCommand(), resumedKeys),
		studyconfig.With(sweepCommand(), resumedKeys),
		historyCommand(),
		showCommand(),
		exportCommand(),
		plotCommand(),
		reportCommand(),
		importCommand(),
		parseCommand(),
		doctorCommand(),
		replayCommand(),
		studyconfig.With(gateCommand(), resumedKeys),
		renameCommand(),
		rmCommand(),
		workloadCommand(),
		versionCommand(),
	}
}
