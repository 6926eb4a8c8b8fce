package main

import (
	"io"
	"regexp"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestTrailingDefaultIsTheRegexp: trailingDefault finds what the regexp
// it replaced found, in every flag's help line of every command and in
// lines built to trip it.
func TestTrailingDefaultIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`\s*\(default: ([^()]*)\)$`)
	lines := []string{
		"", ")", "(default: )", "(default: x)", "x (default: 1)", "x\t \n(default: 1)", "x (default: 1) ",
		"x (default: 1))", "x (default: (1))", "x (default: a(b)", "x (default: a)b)", "(default: 1)(default: 2)",
		"x (see (a)) (default: 3)", "x (default: 3) (see b)", "x (Default: 3)", "x (default:3)", "x  (default: \"\")",
		"--n value  a (default: nccl-tests' own) (default: 0)", "x\v(default: 1)",
	}
	var walk func([]*cli.Command)
	collect := func(flags []cli.Flag) {
		for _, f := range flags {
			lines = append(lines, cliFlagStringer(f))
		}
	}
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			collect(c.Flags)
			walk(c.Subcommands)
		}
	}
	app := newApp(io.Discard, io.Discard)
	collect(app.Flags)
	walk(app.Commands)
	if len(lines) < 100 {
		t.Fatalf("only %d help lines: the walk missed the commands' flags", len(lines))
	}
	for _, line := range lines {
		start, value, ok := trailingDefault(line)
		m := re.FindStringSubmatchIndex(line)
		if ok != (m != nil) || ok && (start != m[0] || value != line[m[2]:m[3]]) {
			t.Errorf("%q: got (%d, %q, %v), the regexp %v", line, start, value, ok, m)
		}
	}
}
