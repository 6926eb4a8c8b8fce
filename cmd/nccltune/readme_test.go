package main

// README.md is a newcomer's first page: these tests hold it to the code
// (every command once in its table, with flags the command shows in
// --help), to its size, to the output it pastes, and every docs page to
// links that lead somewhere. The details live in docs/ (docs/GUIDE.md);
// a test that needs a definition reads the page that holds it.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/urfave/cli/v2"
)

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeShape: short enough to be read, and Get started is exactly
// the two set-up commands (.ci/run runs the second; a CI hook greps the
// README for both).
func TestReadmeShape(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md has %d lines, more than 250: move the detail to a docs/ page and link it", n)
	}
	start := strings.Index(readme, "\n## Get started\n")
	if start < 0 {
		t.Fatal("README.md has no ## Get started section")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(readme[start:])
	if block == nil {
		t.Fatal("Get started has no sh block")
	}
	want := "go run ./cmd/nccltune search --sim spark4 --band 512K-4M\ngo test ./...\n"
	if block[1] != want {
		t.Errorf("Get started's block is\n%s\nwant exactly\n%s", block[1], want)
	}
}

// TestReadmeCommandTable: the README's command table has one row per
// command nccltune has, and every flag a row shows is one of that
// command's (or its subcommands') flags that --help lists: a hidden flag
// is one nccltune refuses or keeps for old scripts (workload --coverage).
func TestReadmeCommandTable(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	app := newApp(nil, nil)
	visible := func(cmd *cli.Command) map[string]bool {
		flags := map[string]bool{"help": true}
		for _, c := range append([]*cli.Command{cmd}, cmd.Subcommands...) {
			for _, f := range c.Flags {
				if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
					continue
				}
				for _, n := range f.Names() {
					flags[n] = true
				}
			}
		}
		return flags
	}
	rowRe := regexp.MustCompile("(?m)^\\| `nccltune ([a-z]+)((?:\\\\.|[^|])*)\\|")
	rows := map[string]int{}
	for _, m := range rowRe.FindAllStringSubmatch(readme, -1) {
		name, cell := m[1], m[2]
		rows[name]++
		cmd := app.Command(name)
		if cmd == nil {
			t.Errorf("README's command table has %q, which is not a nccltune command", name)
			continue
		}
		if strings.Contains(cell, "nccltune ") {
			t.Errorf("README's row of %s names another command in its first cell (one command a row): %s", name, cell)
		}
		flags := visible(cmd)
		for _, f := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(cell, -1) {
			if !flags[f[1]] {
				t.Errorf("README's row of %s shows --%s, which %s --help does not list", name, f[1], name)
			}
		}
	}
	for _, cmd := range app.Commands {
		if cmd.Hidden || cmd.Name == "help" {
			continue
		}
		if rows[cmd.Name] != 1 {
			t.Errorf("README's command table has %d rows of %s, want 1", rows[cmd.Name], cmd.Name)
		}
	}
}

// TestReadmeWorkloadOutput: the workload README walks through is what
// nccltune workload writes for the fixture it names, so the example cannot
// go stale when the proposal's form changes (it once showed part: and
// --coverage after workload had moved to calls:).
func TestReadmeWorkloadOutput(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	// The fixture's package may move (benchfmt → internal/benchfmt): find it
	// where it is, and require README to name that path.
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "*", "testdata", "workload", "torch-coll"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "internal", "*", "testdata", "workload", "torch-coll"))
	dirs = append(dirs, more...)
	if len(dirs) != 1 {
		t.Fatalf("want one torch-coll workload fixture, found %v", dirs)
	}
	rel, _ := filepath.Rel(filepath.Join("..", ".."), dirs[0])
	if !strings.Contains(readme, "nccltune workload "+filepath.ToSlash(rel)+"/") {
		t.Errorf("README does not run nccltune workload on %s/", rel)
	}
	logs, _ := filepath.Glob(filepath.Join(dirs[0], "nccl.*"))
	out := filepath.Join(t.TempDir(), "w.yaml")
	args := append([]string{"workload"}, logs...)
	if _, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), append(args, "--out", out)...); code != 0 {
		t.Fatalf("workload: exit %d\n%s", code, stderr)
	}
	yaml, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(yaml), "\n") {
		if strings.HasPrefix(line, "calls: ") || strings.HasPrefix(line, "chose: ") || strings.HasPrefix(line, "generated-by: ") {
			if !strings.Contains(readme, line+"\n") {
				t.Errorf("README does not show workload's line %q", line)
			}
		}
	}
	// Steps 3 and 4 search that workload as README shows, then again
	// without the start-up broadcast (README's sed): each verdict line
	// README pastes is one the search prints.
	db := filepath.Join(t.TempDir(), "db")
	search := func(config string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, db, "search", "--config", config, "--sim", "h200-loopback", "--np", "4")
		if code != 0 {
			t.Fatalf("search --config %s: exit %d\n%s", config, code, stderr)
		}
		return stdout
	}
	withBroadcast := search(out)
	without := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(without, regexp.MustCompile(`(?m)^(calls:.*), "broadcast:[^"]*"\]`).ReplaceAll(yaml, []byte("$1]")), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readme, `sed -i -e '/^calls:/s/, "broadcast:[^"]*"]/]/' w.yaml`) {
		t.Error("README no longer takes the broadcast out with the sed this test runs")
	}
	printed := withBroadcast + search(without)
	for _, line := range strings.Split(printed, "\n") {
		if strings.HasPrefix(line, "keep ") || strings.HasPrefix(line, "recommend: ") || strings.HasPrefix(line, "  refused earlier") || strings.HasPrefix(line, "  time per step") {
			if !strings.Contains(readme, line+"\n") {
				t.Errorf("README does not show search's line %q", line)
			}
		}
	}
	for _, stale := range []string{"--coverage", "part: ["} {
		if strings.Contains(readme, stale) {
			t.Errorf("README still documents %q", stale)
		}
	}
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// leads to a file that exists and, with #anchor, to a heading it has
// (GitHub's anchors: lower case, punctuation dropped, blanks as -), so
// moving text between pages cannot leave a reader at a dead end.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	readme := readRepoFile(t, "README.md")
	for _, page := range pages {
		// A page nobody is sent to is lost: README links every one by name.
		if name := filepath.Base(page); name != "README.md" && !strings.Contains(readme, "](docs/"+name) {
			t.Errorf("README does not link docs/%s", name)
		}
	}
	linkRe := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			body, err := os.ReadFile(path)
			if err != nil {
				if _, serr := os.Stat(path); serr != nil {
					t.Errorf("%s links %s: no such file", filepath.Base(page), target)
				}
				continue // a directory or an image
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchors(string(body)), anchor) {
				t.Errorf("%s links %s: %s has no heading with that anchor", filepath.Base(page), target, filepath.Base(path))
			}
		}
	}
}

// anchors is the #anchor of each heading of a markdown page, as GitHub
// makes them (a repeated one gets -1, -2, …).
func anchors(md string) []string {
	var out []string
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// TestReadmeFirstStudyOutput: the output README shows for its first
// command is what that command prints, so it cannot go stale when the
// study's minimal form changes (it showed NCCL_PROTO=^LL128 for sessions
// after the study had moved to NCCL_PROTO=Simple).
func TestReadmeFirstStudyOutput(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	if !strings.Contains(readme, "go run ./cmd/nccltune search --sim spark4 --band 512K-4M\n") {
		t.Fatal("README's first command is no longer the spark4 study this test runs")
	}
	stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "search", "--sim", "spark4", "--band", "512K-4M")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	shown := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "recommend: ") || strings.HasPrefix(line, "  band speedup ") || strings.HasPrefix(line, "  band score ") {
			shown++
			if !strings.Contains(readme, line+"\n") {
				t.Errorf("README does not show the study's line %q", line)
			}
		}
	}
	if shown != 3 {
		t.Errorf("the study printed %d of its recommend, speedup and score lines, want 3:\n%s", shown, stdout)
	}
}
