package main

import (
	"flag"
	"io"

	"github.com/urfave/cli/v2"
)

// urfave/cli keeps its help flag, version flag and help command in package
// variables and writes them while a command runs, which races when tests
// run commands in parallel goroutines. So the shared flags register a copy
// of themselves, and each command, just before it runs, gets its own copy
// of the help command.

func init() {
	cli.HelpFlag = applyingCopy(cli.HelpFlag)
	cli.VersionFlag = applyingCopy(cli.VersionFlag)
}

// copyApplied is a *cli.BoolFlag that registers a copy of itself with a
// flag set, so Apply writes nothing shared.
type copyApplied struct{ *cli.BoolFlag }

func (f copyApplied) Apply(set *flag.FlagSet) error {
	c := *f.BoolFlag
	return c.Apply(set)
}

// applyingCopy wraps urfave/cli's own flag; another kind is left as it is.
func applyingCopy(f cli.Flag) cli.Flag {
	if b, ok := f.(*cli.BoolFlag); ok {
		return copyApplied{b}
	}
	return f
}

// cliHelpCommand is urfave/cli's help command (unexported there), copied
// from a throwaway app before anything writes it.
var cliHelpCommand = func() cli.Command {
	app := &cli.App{Name: "nccltune", Writer: io.Discard, ErrWriter: io.Discard}
	app.Setup()
	return *app.Command("help")
}()

// ownHelpCommands hooks each parent's Before so that the command about to
// run gets its own copy of the help command. Just before, not when the
// tree is built: urfave/cli picks the help template of a command that has
// not run by whether it has subcommands.
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
// run its own help command where Command.setup would append the shared one.
func withOwnHelp(before cli.BeforeFunc, subs []*cli.Command) cli.BeforeFunc {
	return func(ctx *cli.Context) error {
		name := ctx.Args().First()
		for _, c := range subs {
			if name == "" || !c.HasName(name) || c.Command(cliHelpCommand.Name) != nil || c.HideHelp || c.HideHelpCommand {
				continue
			}
			h := cliHelpCommand
			h.HideHelpCommand = true // or its own setup appends the shared one
			c.Subcommands = append(c.Subcommands, &h)
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}
