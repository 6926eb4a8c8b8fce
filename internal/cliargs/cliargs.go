// Package cliargs prepares a command line for urfave/cli v2, which stops
// reading a subcommand's flags at its first positional argument and knows
// no "help COMMAND" when the help command is hidden.
package cliargs

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Reorder moves flags written after a subcommand's positional arguments
// in front of them ("nccltune export STUDY --format env"), and the app's
// own flags in front of the command. It also reports a flag written last
// that needs a value and has none: moved in front of a positional argument
// it would take that as its value, so it stays last for the caller to refuse.
func Reorder(app *cli.App, args []string) (out []string, dangling string) {
	if len(args) < 2 {
		return args, ""
	}
	i := firstWord(app, args, true)
	if i > len(args) {
		return args, args[len(args)-1]
	}
	out = append([]string(nil), args[:i]...) // the program and the global flags
	if i == len(args) {
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
		sub := cmd.Command(args[i])
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
		to, defined := &flags, cmd.Flags
		if IsGlobalFlag(app, cmd, a) {
			to, defined = &global, app.Flags
		} else if !strings.HasPrefix(a, "-") || len(a) == 1 {
			positional = append(positional, a)
			continue
		}
		if !TakesValue(defined, a) {
			*to = append(*to, a)
			continue
		}
		if i+1 >= len(args) {
			dangling = a
			break
		}
		*to = append(*to, a, args[i+1])
		i++
	}
	out = slices.Insert(out, len(out)-1, global...) // before the command name, which ends out
	out = append(append(out, flags...), positional...)
	if dangling != "" {
		out = append(out, dangling)
	}
	return out, dangling
}

// CommandName is the subcommand args name, or "" before one.
func CommandName(app *cli.App, args []string) string {
	for _, a := range args[1:] {
		if c := app.Command(a); c != nil {
			return c.Name
		}
	}
	return ""
}

// TakesValue reports whether arg names a flag that consumes the next
// argument (not a bool flag, and not written as --flag=value).
func TakesValue(flags []cli.Flag, arg string) bool {
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

// IsGlobalFlag reports whether arg names one of the app's own flags that
// the command does not also define.
func IsGlobalFlag(app *cli.App, cmd *cli.Command, arg string) bool {
	if !strings.HasPrefix(arg, "-") || len(arg) < 2 {
		return false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	has := func(flags []cli.Flag) bool {
		return slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
	}
	return has(app.Flags) && !has(cmd.Flags)
}

// firstWord is the index of the first argument after the program and the
// app's own flags (len(args) when none is left, one more when the last
// flag lacks its value); with dashes, "--" is a word.
func firstWord(app *cli.App, args []string, dashes bool) int {
	i := 1
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && !(dashes && args[i] == "--"); i++ {
		if TakesValue(app.Flags, args[i]) {
			i++
		}
	}
	return i
}

// UnknownCommand is the first argument after the global flags when it
// names no command, else "".
func UnknownCommand(app *cli.App, args []string) string {
	i := firstWord(app, args, true)
	if i >= len(args) || args[i] == "--" || app.Command(args[i]) != nil {
		return ""
	}
	return args[i]
}

// Nearest is the name of names fewest edits from name (the first of them
// on a tie) when that is fewer than within edits, else "".
func Nearest(name string, names []string, within int) string {
	best, bestD := "", within
	for _, n := range names {
		if d := nccl.EditDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// NearestCommand is ", did you mean X?" for a command name one or two
// edits from name, else "".
func NearestCommand(app *cli.App, name string) string {
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Name)
	}
	if best := Nearest(strings.ToLower(name), names, 3); best != "" {
		return "; did you mean " + best + "?"
	}
	return ""
}

// NearestFlag is "; did you mean --X?" for the flag of flags one or two
// edits from name (with or without its dashes, or "=value"), else "".
func NearestFlag(name string, flags ...[]cli.Flag) string {
	name, _, _ = strings.Cut(strings.TrimLeft(name, "-"), "=")
	if len(name) < 2 {
		return ""
	}
	var names []string
	for _, f := range slices.Concat(flags...) {
		for _, n := range f.Names() {
			if len(n) >= 2 { // -h, -o: one letter is one edit from many slips
				names = append(names, n)
			}
		}
	}
	within := 3
	if len(name) <= 3 {
		within = 2 // one edit at most: two would make -ab anything
	}
	if best := Nearest(strings.ToLower(name), names, within); best != "" {
		return "; did you mean --" + best + "?"
	}
	return ""
}

// UndefinedFlag is the flag named by the flag package's "flag provided
// but not defined: -X" error, else "".
func UndefinedFlag(err error) string {
	const prefix = "flag provided but not defined: "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		return ""
	}
	return strings.TrimPrefix(err.Error(), prefix)
}

// HelpAsFlag turns "nccltune help [COMMAND]" into "nccltune [COMMAND]
// --help" (the help command is hidden, so urfave/cli knows no topic).
func HelpAsFlag(app *cli.App, args []string) []string {
	i := firstWord(app, args, false)
	if i >= len(args) || args[i] != "help" {
		return args
	}
	out := append([]string(nil), args[:i]...)
	if i+1 < len(args) && app.Command(args[i+1]) != nil {
		out = append(out, args[i+1])
	}
	return append(out, "--help")
}

// WantsJSON reports whether the command line (args[0] the program) asks
// for --json before "--": then a failure must still print a JSON document.
func WantsJSON(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			return false
		}
		switch strings.TrimLeft(a, "-") {
		case "json", "json=true", "json=1":
			return strings.HasPrefix(a, "-")
		}
	}
	return false
}
