package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// cliFlagStringer is urfave/cli's own rendering of a flag's help line.
var cliFlagStringer = cli.FlagStringer

func init() {
	cli.FlagStringer = flagHelp
}

// trailingDefault finds the "(default: X)" urfave/cli appends to a flag's
// usage: the line's last "(" opens it, the closing ")" ends the line, no
// parenthesis lies between, and the spaces before it go with it. start is
// where that part begins, value is X. (String search rather than a
// regexp: every command's setup renders every flag's line, and an
// unanchored regexp scanned each line from every position, a twentieth of
// the CPU of the commands the tests run in process.)
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
	start = i
	for start > 0 && strings.IndexByte("\t\n\f\r ", line[start-1]) >= 0 {
		start--
	}
	return start, value, true
}

// flagHelp is urfave/cli's help line for a flag without the default it
// appends when that default says nothing: a switch's "false", a zero that
// means "not set" ("(default: 0)" beside "default: nccl-tests' own"), or
// a second default after the usage already names one.
func flagHelp(f cli.Flag) string {
	line := cliFlagStringer(f)
	start, value, ok := trailingDefault(line)
	if !ok {
		return line
	}
	usage := line[:start]
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
