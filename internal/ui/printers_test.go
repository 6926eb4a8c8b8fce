package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modelPkg, searchPkg = "github.com/nccltune/nccltune/model", "github.com/nccltune/nccltune/search"

// TestReportDependsOnNoStatistics: report draws what the study stored
// and the launch statistics the command hands in (launchstats.Figures):
// neither it nor a package it imports, however indirectly, is model or
// search, as `go list -deps` lists them.
func TestReportDependsOnNoStatistics(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/nccltune/nccltune/internal/report").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/nccltune/nccltune/internal/stored") {
		t.Fatalf("go list -deps lists no internal/stored among report's dependencies: %q", deps)
	}
	for _, no := range []string{modelPkg, searchPkg} {
		if slices.Contains(deps, no) {
			t.Errorf("report depends on %s: a printer reads what internal/stored holds or the command handed in", no)
		}
	}
}

// TestPrintersCallNoStatistics: the printers print stored decisions and
// data built for them (internal/stored, studyrun); they never decide
// again. ui imports no model and calls no function of search (it renders
// search's result and events, which are types).
func TestPrintersCallNoStatistics(t *testing.T) {
	for _, tc := range []struct {
		dir       string
		noImport  []string
		noCallsOf []string
	}{
		{".", []string{modelPkg}, []string{searchPkg}},
	} {
		files, err := filepath.Glob(filepath.Join(tc.dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", tc.dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			called := map[string]string{} // the file's name for a package whose functions it must not call
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				for _, no := range tc.noImport {
					if p == no {
						t.Errorf("%s imports %s: a printer reads what internal/stored or studyrun built", path, p)
					}
				}
				for _, no := range tc.noCallsOf {
					if name := filepath.Base(p); p == no {
						if im.Name != nil {
							name = im.Name.Name
						}
						called[name] = p
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && called[x.Name] != "" {
							t.Errorf("%s calls %s.%s: a printer decides nothing", path, x.Name, sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
	}
}
