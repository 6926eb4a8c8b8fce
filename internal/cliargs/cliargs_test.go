package cliargs

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name:  "prog",
		Flags: []cli.Flag{&cli.StringFlag{Name: "db"}},
		Commands: []*cli.Command{
			{Name: "export", Flags: []cli.Flag{&cli.StringFlag{Name: "format"}, &cli.BoolFlag{Name: "json"}}},
			{Name: "replay", Subcommands: []*cli.Command{{Name: "build", Flags: []cli.Flag{&cli.StringFlag{Name: "out"}}}}},
			{Name: "search", Flags: []cli.Flag{&cli.StringFlag{Name: "db"}, &cli.StringFlag{Name: "band"}}},
		},
	}
}

func TestReorder(t *testing.T) {
	app := testApp()
	for _, tc := range []struct {
		in, want string
		dangling string
	}{
		{"prog export s1 --format env", "prog export --format env s1", ""},
		{"prog export s1 --json --format=env", "prog export --json --format=env s1", ""},
		{"prog export s1 --db x.db", "prog --db x.db export s1", ""},
		{"prog export s1 --format", "prog export s1 --format", "--format"},
		{"prog replay build a.db --out r.json", "prog replay build --out r.json a.db", ""},
		{"prog search --db own.db", "prog search --db own.db", ""}, // the command's own --db
		{"prog export s1 -- --format env", "prog export s1 -- --format env", ""},
		{"prog nosuch --flag v", "prog nosuch --flag v", ""},
	} {
		out, dangling := Reorder(app, strings.Fields(tc.in))
		if got := strings.Join(out, " "); got != tc.want || dangling != tc.dangling {
			t.Errorf("Reorder(%s) = %q, dangling %q; want %q, %q", tc.in, got, dangling, tc.want, tc.dangling)
		}
	}
}

func TestCommandNames(t *testing.T) {
	app := testApp()
	for _, tc := range []struct {
		in                     string
		command, unknown, near string
		help                   string
	}{
		{"prog --db x export s1", "export", "", "", "prog --db x export s1"},
		{"prog exprot s1", "", "exprot", "; did you mean export?", "prog exprot s1"},
		{"prog help export", "export", "help", "", "prog export --help"},
		{"prog --db x help", "", "help", "", "prog --db x --help"},
		{"prog zzzzzz", "", "zzzzzz", "", "prog zzzzzz"},
	} {
		args := strings.Fields(tc.in)
		if got := CommandName(app, args); got != tc.command {
			t.Errorf("CommandName(%s) = %q, want %q", tc.in, got, tc.command)
		}
		unknown := UnknownCommand(app, args)
		if unknown != tc.unknown {
			t.Errorf("UnknownCommand(%s) = %q, want %q", tc.in, unknown, tc.unknown)
		}
		if unknown != "" && unknown != "help" {
			if got := NearestCommand(app, unknown); got != tc.near {
				t.Errorf("NearestCommand(%s) = %q, want %q", unknown, got, tc.near)
			}
		}
		if got := strings.Join(HelpAsFlag(app, args), " "); got != tc.help {
			t.Errorf("HelpAsFlag(%s) = %q, want %q", tc.in, got, tc.help)
		}
	}
}

func TestTakesValue(t *testing.T) {
	flags := testApp().Commands[0].Flags
	got := []bool{TakesValue(flags, "--format"), TakesValue(flags, "--format=env"), TakesValue(flags, "--json"), TakesValue(flags, "--nosuch")}
	if want := []bool{true, false, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("TakesValue(--format, --format=env, --json, --nosuch) = %v, want %v", got, want)
	}
}

func TestWantsJSON(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"nccltune", "history", "--json"}, true},
		{[]string{"nccltune", "show", "s1", "-json"}, true},
		{[]string{"nccltune", "gate", "--json=true"}, true},
		{[]string{"nccltune", "gate", "--json=false"}, false},
		{[]string{"nccltune", "parse", "json"}, false}, // a file named json
		{[]string{"nccltune", "search", "--", "--json"}, false},
		{[]string{"--json"}, false}, // the program's own name
		{nil, false},
	} {
		if got := WantsJSON(tc.args); got != tc.want {
			t.Errorf("WantsJSON(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestNearestFlag: a slip of one or two letters in a flag's name names
// the flag meant, as commands and config keys do; a name far from every
// flag, or too short to tell, gets no guess.
func TestNearestFlag(t *testing.T) {
	flags := []cli.Flag{&cli.IntFlag{Name: "budget"}, &cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "out", Aliases: []string{"o"}}}
	global := []cli.Flag{&cli.StringFlag{Name: "db"}}
	for _, tc := range []struct{ in, want string }{
		{"-budgt", "; did you mean --budget?"},
		{"--buget=3", "; did you mean --budget?"},
		{"-jsn", "; did you mean --json?"},
		{"-ot", "; did you mean --out?"},
		{"-dbb", "; did you mean --db?"},
		{"-x", ""},
		{"-completely-else", ""},
	} {
		if got := NearestFlag(tc.in, flags, global); got != tc.want {
			t.Errorf("NearestFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := UndefinedFlag(errors.New("flag provided but not defined: -budgt")); got != "-budgt" {
		t.Errorf("UndefinedFlag: %q", got)
	}
}
