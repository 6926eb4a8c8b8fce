// Package invocation is how the user runs nccltune, for the commands its
// hints print: "nccltune", or "go run ./cmd/nccltune" for a binary go run
// built.
package invocation

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/store"
)

// ModulePackage is nccltune's main package, as go run names it from
// anywhere inside the module.
const ModulePackage = "github.com/nccltune/nccltune/cmd/nccltune"

// Command is the command line that runs this nccltune again, for hints.
var Command = sync.OnceValue(func() string {
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	return commandFor(exe, wd, buildCacheDirs())
})

// commandFor is Command for an executable path, a working directory and
// the path prefixes of what go run builds.
func commandFor(exe, wd string, cacheDirs []string) string {
	if !BuiltByGoRun(exe, cacheDirs) {
		return "nccltune"
	}
	if _, err := os.Stat(filepath.Join(wd, "cmd", "nccltune", "main.go")); err == nil {
		return "go run ./cmd/nccltune"
	}
	return "go run " + ModulePackage
}

// BuiltByGoRun reports whether exe lies under one of cacheDirs, where go
// run leaves the binaries it builds: a temporary go-build directory, or
// the build cache (Go 1.24 and later cache them there).
func BuiltByGoRun(exe string, cacheDirs []string) bool {
	if exe == "" || strings.HasSuffix(exe, ".test") {
		return false // go test's binaries are no user's nccltune
	}
	for _, p := range cacheDirs {
		if p != "" && strings.HasPrefix(exe, p) {
			return true
		}
	}
	return false
}

// buildCacheDirs are the path prefixes of what go run builds: the build
// cache and $TMPDIR/go-build….
func buildCacheDirs() []string {
	sep := string(filepath.Separator)
	var dirs []string
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" {
		dirs = append(dirs, filepath.Clean(c)+sep)
	}
	if c, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(c, "go-build")+sep)
	}
	return append(dirs, filepath.Join(os.TempDir(), "go-build"))
}

// Line is the command that runs nccltune with args (shell words) on the
// database db: "--db FILE" is added unless db is the default one.
func Line(db string, args ...string) string {
	line := Command() + " " + strings.Join(args, " ")
	if def, err := store.DefaultPath(); db != "" && (err != nil || def != db) {
		line += " --db " + safetext.ShellArg(db)
	}
	return line
}
