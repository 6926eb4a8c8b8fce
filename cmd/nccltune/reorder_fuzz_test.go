package main

import (
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/cliargs"
)

// FuzzReorderArgs: reorder only moves arguments. The program name and
// the command stay in place, every argument is kept, flags and positional
// arguments each keep their order, a flag keeps the value it was written
// with (and a value flag with none written gets none), everything after
// "--" stays last in order, and reordering twice changes nothing.
func FuzzReorderArgs(f *testing.F) {
	for _, s := range []string{
		"export\x00s1\x00--format\x00env",
		"export\x00s1\x00--format",
		"--db\x00x.db\x00search\x00--band\x00512K-4M\x00--sim\x00spark4",
		"search\x00512K-4M",
		"sweep\x00--mpi-arg\x00-x\x00--env=NCCL_PROTO=LL\x00--\x00--json\x00a",
		"plot\x00s1\x00s2/3\x00--out\x00x.png\x00--all",
		"--db",
		"nosuch\x00--flag\x00v",
		"show\x00-\x00--trials\x00s1",
		"gate\x00--at\x001M:9\x00--at",
		"--db\x00--\x00show",
		"export\x00--format\x00--out\x00x",
	} {
		f.Add(s)
	}
	app := newApp(io.Discard, io.Discard)
	f.Fuzz(func(t *testing.T, s string) {
		in := append([]string{"nccltune"}, strings.Split(s, "\x00")...)
		out, dangling := cliargs.Reorder(app, in)
		if len(out) != len(in) || out[0] != in[0] {
			t.Fatalf("cliargs.Reorder(%q) = %q", in, out)
		}
		a, b := slices.Clone(in), slices.Clone(out)
		slices.Sort(a)
		slices.Sort(b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("cliargs.Reorder(%q) = %q: not the same arguments", in, out)
		}
		// Walk both as urfave would see them and compare.
		inFlags, inPos, inDangling := walk(app, in, false)
		outFlags, outPos, _ := walk(app, out, true)
		if dangling != inDangling {
			t.Fatalf("cliargs.Reorder(%q): dangling %q, want %q", in, dangling, inDangling)
		}
		if inDangling == "" {
			if !reflect.DeepEqual(inFlags, outFlags) || !reflect.DeepEqual(inPos, outPos) {
				t.Fatalf("cliargs.Reorder(%q) = %q\nflags %q → %q\npositional %q → %q", in, out, inFlags, outFlags, inPos, outPos)
			}
		}
		if again, _ := cliargs.Reorder(app, out); !reflect.DeepEqual(again, out) {
			t.Fatalf("reorder is not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

// walk reads args as the user meant them: global flags, the command,
// then the command's flags (each with the value that follows it, if it
// takes one) and its positional arguments, in order. With parsed it reads
// them as urfave/cli does, stopping flag parsing at the first positional
// argument. dangling is a value flag written last, with no value.
func walk(a *cli.App, args []string, parsed bool) (flags, positional []string, dangling string) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		f := args[i]
		if cliargs.TakesValue(a.Flags, f) {
			if i+1 >= len(args) {
				return append(flags, f), nil, f
			}
			f += " " + args[i+1]
			i++
		}
		flags = append(flags, f)
		i++
	}
	if i >= len(args) {
		return flags, nil, ""
	}
	cmd := a.Command(args[i])
	i++
	if cmd == nil {
		return flags, args[i:], ""
	}
	inFlags := true
	var cmdFlags []string
	// Global flags written after the command are the app's (reorder
	// moves them in front of it): they join the leading ones.
	defer func() { flags = append(flags, cmdFlags...) }()
	for ; i < len(args); i++ {
		x := args[i]
		if x == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if !parsed && cliargs.IsGlobalFlag(a, cmd, x) {
			if cliargs.TakesValue(a.Flags, x) {
				if i+1 >= len(args) {
					return append(flags, x), positional, x
				}
				x += " " + args[i+1]
				i++
			}
			flags = append(flags, x)
			continue
		}
		if strings.HasPrefix(x, "-") && len(x) > 1 && (inFlags || !parsed) {
			if cliargs.TakesValue(cmd.Flags, x) {
				if i+1 >= len(args) {
					return append(flags, x), positional, x
				}
				x += " " + args[i+1]
				i++
			}
			cmdFlags = append(cmdFlags, x)
			continue
		}
		inFlags = false
		positional = append(positional, x)
	}
	return flags, positional, ""
}
