package main

import (
	"context"
	"io"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// run is the whole program minus process concerns: parse args, run one
// command, return its error for main to map to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	out := &countingWriter{w: stdout}
	err := runCommand(ctx, args, out, stderr)
	if err != nil && out.n == 0 && wantsJSON(args) {
		// --json promises one document on stdout whatever happens.
		_ = ui.WriteJSON(stdout, errorDocument(err))
	}
	return err
}

// runCommand parses args and runs one command.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	app := newApp(stdout, stderr)
	args, dangling := reorder(app, args)
	if dangling != "" {
		help := "nccltune --help"
		if name := commandName(app, args); name != "" {
			help = "nccltune " + name + " --help"
		}
		return usageErrorf("%s needs a value, e.g. %s=VALUE (see %s)", dangling, dangling, help)
	}
	args = helpAsFlag(app, args)
	if name := unknownCommand(app, args); name != "" {
		return usageErrorf("%q is not a nccltune command%s (nccltune --help lists them)", name, nearestCommand(app, name))
	}
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

Start with:  nccltune search --sim spark4 --band 512K-4M`,
		Version:         version(),
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// Values such as NCCL_IB_HCA==a,b and --mca lists hold commas.
		DisableSliceFlagSeparator: true,
		EnableBashCompletion:      false,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", EnvVars: []string{"NCCLTUNE_DB"},
				Usage: "bbolt database `FILE` holding every study (default: nccltune/nccltune.db under the user's data dir)"},
		},
		Commands: commands(),
		// Errors go back to run; exit codes are decided in main only.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			if c.Command != nil {
				if ferr := flagValueError(c.Command.Flags); ferr != nil {
					return ferr // the typed value's own words
				}
			}
			return usageErrorf("%v (see nccltune %s --help)", err, c.Command.Name)
		},
	}
	for _, cmd := range app.Commands {
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = app.OnUsageError
		}
		for _, sub := range cmd.Subcommands {
			if sub.OnUsageError == nil {
				sub.OnUsageError = app.OnUsageError
			}
		}
	}
	return app
}

// releaseVersion is nccltune's version; the commit is added when the
// binary was built from a git checkout with VCS stamping.
const releaseVersion = "0.1.0"

// version is what --version prints.
func version() string {
	v := releaseVersion
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (commit " + s.Value[:12] + ")"
			}
		}
	}
	return v
}

// commands lists every subcommand; each lives in its own file. Those
// that launch benchmarks read their flags from a study config too.
func commands() []*cli.Command {
	return []*cli.Command{
		withStudyConfig(searchCommand()),
		withStudyConfig(verifyCommand()),
		withStudyConfig(compareCommand()),
		withStudyConfig(sweepCommand()),
		historyCommand(),
		showCommand(),
		exportCommand(),
		plotCommand(),
		reportCommand(),
		importCommand(),
		parseCommand(),
		doctorCommand(),
		replayCommand(),
		withStudyConfig(gateCommand()),
		renameCommand(),
		rmCommand(),
		versionCommand(),
	}
}

// reorder moves flags written after a subcommand's positional arguments
// in front of them: urfave/cli v2 silently ignores flags that follow a
// positional argument, and the contract writes "nccltune export STUDY
// --format env". It also reports a flag written last that needs a value
// and has none ("export s1 --format"): moved in front of s1 it would take
// s1 as its value, so it stays last and the caller refuses it.
func reorder(app *cli.App, args []string) (out []string, dangling string) {
	if len(args) < 2 {
		return args, ""
	}
	out = []string{args[0]}
	i := 1
	// Global flags come before the command name.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) {
			if i+1 >= len(args) {
				return out, args[i]
			}
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	if i >= len(args) {
		return out, ""
	}
	cmd := app.Command(args[i])
	out = append(out, args[i])
	i++
	if cmd == nil {
		return append(out, args[i:]...), ""
	}
	// A subcommand ("replay build") brings its own flags.
	for i < len(args) {
		sub := subcommand(cmd, args[i])
		if sub == nil {
			break
		}
		cmd = sub
		out = append(out, args[i])
		i++
	}
	var global, flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		// A global flag (--db) written after the command is moved in
		// front of it: "nccltune history --db a.db" means what it says.
		if isGlobalFlag(app, cmd, a) {
			if takesValue(app.Flags, a) {
				if i+1 >= len(args) {
					dangling = a
					break
				}
				global = append(global, a, args[i+1])
				i++
				continue
			}
			global = append(global, a)
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if takesValue(cmd.Flags, a) {
				if i+1 >= len(args) {
					dangling = a
					break
				}
				flags = append(flags, a, args[i+1])
				i++
				continue
			}
			flags = append(flags, a)
			continue
		}
		positional = append(positional, a)
	}
	if len(global) > 0 {
		// out ends with the command name: put the global flags before it.
		name := out[len(out)-1]
		out = append(append(out[:len(out)-1], global...), name)
	}
	out = append(append(out, flags...), positional...)
	if dangling != "" {
		out = append(out, dangling)
	}
	return out, dangling
}

// subcommand is cmd's subcommand called name, nil if none.
func subcommand(cmd *cli.Command, name string) *cli.Command {
	for _, sub := range cmd.Subcommands {
		if sub.HasName(name) {
			return sub
		}
	}
	return nil
}

// commandName is the subcommand args name, or "" before one.
func commandName(app *cli.App, args []string) string {
	for _, a := range args[1:] {
		if c := app.Command(a); c != nil {
			return c.Name
		}
	}
	return ""
}

// takesValue reports whether arg names a flag that consumes the next
// argument (not a bool flag, and not written as --flag=value).
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return false
			}
			if d, ok := f.(cli.DocGenerationFlag); ok {
				return d.TakesValue()
			}
			return true
		}
	}
	return false
}

// isGlobalFlag reports whether arg names one of the app's own flags that
// the command does not also define.
func isGlobalFlag(app *cli.App, cmd *cli.Command, arg string) bool {
	if !strings.HasPrefix(arg, "-") || len(arg) < 2 {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	has := func(flags []cli.Flag) bool {
		for _, f := range flags {
			for _, n := range f.Names() {
				if n == name {
					return true
				}
			}
		}
		return false
	}
	return has(app.Flags) && !has(cmd.Flags)
}

// unknownCommand is the first argument after the global flags when it
// names no command, else "".
func unknownCommand(app *cli.App, args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if strings.HasPrefix(a, "-") {
			if takesValue(app.Flags, a) {
				i++
			}
			continue
		}
		if app.Command(a) != nil {
			return ""
		}
		return a
	}
	return ""
}

// nearestCommand is ", did you mean X?" for a command name one or two
// edits from name, else "".
func nearestCommand(app *cli.App, name string) string {
	best, bestD := "", 3
	for _, c := range app.Commands {
		if d := nccl.EditDistance(strings.ToLower(name), c.Name); d < bestD {
			best, bestD = c.Name, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// helpAsFlag turns "nccltune help [COMMAND]" into "nccltune [COMMAND]
// --help" (the help command is hidden, so urfave/cli knows no topic).
func helpAsFlag(app *cli.App, args []string) []string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if takesValue(app.Flags, a) {
				i++
			}
			continue
		}
		if a != "help" {
			return args
		}
		out := append([]string(nil), args[:i]...)
		if i+1 < len(args) && app.Command(args[i+1]) != nil {
			out = append(out, args[i+1])
		}
		return append(out, "--help")
	}
	return args
}
