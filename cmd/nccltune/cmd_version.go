package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/invocation"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
)

func init() {
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "%s version %s\n", c.App.Name, version())
	}
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print nccltune's version and the commit it was built from (or that it is unknown)",
		ArgsUsage: " ",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("version takes no arguments (got %q)", c.Args().First())
			}
			return runVersion(c.Context, versionOptions{cmdIO: ioOf(c, "")})
		},
	}
}

type versionOptions struct {
	cmdIO
}

func runVersion(ctx context.Context, o versionOptions) error {
	b := builtFrom()
	if o.json {
		var commit any // null: unknown
		if b.Commit != "" {
			commit = b.Commit
		}
		return ui.WriteJSON(o.stdout, map[string]any{"schema_version": ui.SchemaVersion,
			"version": version(), "release": releaseVersion, "commit": commit, "commit_from": b.From, "modified": b.Modified,
			"go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
	}
	fmt.Fprintf(o.stdout, "nccltune %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version is "0.1.0 (commit 1a2b3c4d5e6f)", or says that it is unknown.
func version() string { return releaseVersion + " (" + builtFrom().text() + ")" }

// build is the commit nccltune was built from, and where that was read.
type build struct {
	Commit   string // the full hash; "" when unknown
	Modified bool   // built with uncommitted changes
	From     string // "build" (stamped), "checkout" (git's, for go run) or ""
}

func (b build) text() string {
	if b.Commit == "" {
		return "commit unknown: the build recorded none, built with -buildvcs=false or outside a git clone; go build -buildvcs=true ./cmd/nccltune in a clone records it"
	}
	s := "commit " + b.Commit[:min(12, len(b.Commit))]
	if b.From == "checkout" {
		s += " of the checkout go run built from"
	}
	if b.Modified {
		s += ", with uncommitted changes"
	}
	if b.From == "checkout" {
		s += "; the build recorded none"
	}
	return s
}

// builtFrom is the commit the Go toolchain stamped into the binary, else,
// for a go run build, the checkout's commit as git says.
var builtFrom = sync.OnceValue(func() build {
	var b build
	if info, ok := debug.ReadBuildInfo(); ok {
		b = stamped(info.Settings)
	}
	if b.Commit == "" && invocation.Command() != "nccltune" {
		if wd, err := os.Getwd(); err == nil {
			b = checkoutCommit(wd)
		}
	}
	return b
})

func stamped(settings []debug.BuildSetting) build {
	var b build
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit, b.From = s.Value, "build"
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Commit == "" {
		b.Modified = false
	}
	return b
}

var fullHash = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// checkoutCommit is the commit of the git checkout of nccltune's module
// holding dir; unknown when git answers nothing within two seconds.
func checkoutCommit(dir string) build {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	top := git("rev-parse", "--show-toplevel")
	if top == "" {
		return build{}
	}
	mod, err := os.ReadFile(filepath.Join(top, "go.mod"))
	if err != nil || !strings.Contains(string(mod), "module github.com/nccltune/nccltune\n") {
		return build{}
	}
	commit := git("rev-parse", "HEAD")
	if !fullHash.MatchString(commit) {
		return build{}
	}
	return build{Commit: commit, From: "checkout", Modified: git("status", "--porcelain", "--untracked-files=no") != ""}
}
