package main

import (
	"flag"
	"io"

	"github.com/urfave/cli/v2"
)

// urfave/cli keeps its help flag, version flag and help command in package
// variables, one value for the whole process, and writes them while a
// command runs: BoolFlag.Apply records the flag's default in the flag, and
// Command.setup appends the help command to each command's subcommands
// and then sets that command's separator (and help name). nccltune runs
// one command a process, but its tests run commands in parallel
// goroutines, where those writes race. So the shared flags register a
// copy of themselves, and each command, just before it runs, gets its own
// copy of the help command, so urfave/cli appends nothing shared: the
// flags' names, the help text and what help does stay urfave/cli's.

func init() {
	cli.HelpFlag = applyingCopy(cli.HelpFlag)
	cli.VersionFlag = applyingCopy(cli.VersionFlag)
}

// copyApplied is a *cli.BoolFlag that registers a copy of itself with a
// flag set, so Apply writes nothing shared. Everything else (names, help
// line, visibility) is the flag's own.
type copyApplied struct{ *cli.BoolFlag }

func (f copyApplied) Apply(set *flag.FlagSet) error {
	c := *f.BoolFlag
	return c.Apply(set)
}

// applyingCopy wraps urfave/cli's own flag; another kind of flag (a later
// urfave/cli) is left as it is, and TestParallelCommandsShareNoCLIState,
// run with -race, says whether it writes.
func applyingCopy(f cli.Flag) cli.Flag {
	if b, ok := f.(*cli.BoolFlag); ok {
		return copyApplied{b}
	}
	return f
}

// cliHelpCommand is urfave/cli's help command (unexported there): a
// throwaway app's setup appends it. Copied before any command runs, so
// before anything writes it.
var cliHelpCommand = func() cli.Command {
	app := &cli.App{Name: "nccltune", Writer: io.Discard, ErrWriter: io.Discard}
	app.Setup()
	return *app.Command("help")
}()

// ownHelpCommands hooks app so that each command, just before it runs,
// gets its own copy of the help command: its setup then finds one and
// appends nothing shared. Just before, as urfave/cli appended the shared
// one, not when the tree is built: urfave/cli picks the help template of
// a command that has not run ("nccltune --help search", "nccltune replay
// help build") by whether it has subcommands. The hook is each parent's
// Before, which urfave/cli calls right before it runs the subcommand
// named by the first argument left. Called after cliargs has read the
// tree, which holds none of these copies.
func ownHelpCommands(app *cli.App) {
	app.Before = withOwnHelp(app.Before, app.Commands)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if len(c.Subcommands) > 0 {
				c.Before = withOwnHelp(c.Before, c.Subcommands)
				walk(c.Subcommands)
			}
		}
	}
	walk(app.Commands)
}

// withOwnHelp is before, run after giving the subcommand of subs about to
// run its own help command where Command.setup would append the shared
// one (same condition).
func withOwnHelp(before cli.BeforeFunc, subs []*cli.Command) cli.BeforeFunc {
	return func(ctx *cli.Context) error {
		name := ctx.Args().First()
		for _, c := range subs {
			if name == "" || !c.HasName(name) || c.Command(cliHelpCommand.Name) != nil || c.HideHelp || c.HideHelpCommand {
				continue
			}
			h := cliHelpCommand
			// Its own setup ("nccltune search help") would otherwise
			// append the shared one to it.
			h.HideHelpCommand = true
			c.Subcommands = append(c.Subcommands, &h)
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}
