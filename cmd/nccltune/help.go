package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

var cliFlagStringer = cli.FlagStringer

func init() {
	cli.FlagStringer = flagHelp
}

// trailingDefault finds the "(default: X)" urfave/cli appends to a flag's
// usage, with the spaces before it: start is where it begins, value is X.
// (No regexp: every command's setup renders every flag's line.)
func trailingDefault(line string) (start int, value string, ok bool) {
	const open = "(default: "
	i := strings.LastIndexByte(line, '(')
	if i < 0 || !strings.HasPrefix(line[i:], open) || !strings.HasSuffix(line, ")") {
		return 0, "", false
	}
	value = line[i+len(open) : len(line)-1]
	if strings.ContainsRune(value, ')') {
		return 0, "", false
	}
	return len(strings.TrimRight(line[:i], "\t\n\f\r ")), value, true
}

// flagHelp is urfave/cli's help line for a flag without the default it
// appends when that says nothing: a switch's, a zero ("not set"), or a
// second default after the usage names one.
func flagHelp(f cli.Flag) string {
	line := cliFlagStringer(f)
	start, value, ok := trailingDefault(line)
	if !ok {
		return line
	}
	usage := line[:start]
	zero := slices.Contains([]string{"0", "0s", `""`, "false", "[]"}, value) // for nccltune's flags, "not set"
	if _, isBool := f.(*cli.BoolFlag); isBool || zero || strings.Contains(strings.ToLower(usage), "default") {
		return usage
	}
	return line
}
