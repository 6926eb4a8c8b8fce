package main

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// cliFlagStringer is urfave/cli's own rendering of a flag's help line.
var cliFlagStringer = cli.FlagStringer

func init() {
	cli.FlagStringer = flagHelp
}

// trailingDefault is the "(default: X)" urfave/cli appends to a flag's usage.
var trailingDefault = regexp.MustCompile(`\s*\(default: ([^()]*)\)$`)

// flagHelp is urfave/cli's help line for a flag without the default it
// appends when that default says nothing: a switch's "false", a zero that
// means "not set" ("(default: 0)" beside "default: nccl-tests' own"), or
// a second default after the usage already names one.
func flagHelp(f cli.Flag) string {
	line := cliFlagStringer(f)
	m := trailingDefault.FindStringSubmatchIndex(line)
	if m == nil {
		return line
	}
	value := line[m[2]:m[3]]
	usage := line[:m[0]]
	if _, isBool := f.(*cli.BoolFlag); isBool || isZeroDefault(value) || strings.Contains(strings.ToLower(usage), "default") {
		return usage
	}
	return line
}

// isZeroDefault reports whether a flag's default is the zero value, which
// for nccltune's flags always means "not set" (the usage says what then).
func isZeroDefault(v string) bool {
	switch v {
	case "0", "0s", `""`, "false", "[]":
		return true
	}
	return false
}
