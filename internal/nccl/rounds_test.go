package nccl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestScoredByRounds(t *testing.T) {
	ar := Part{Op: AllReduce, Band: Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1}
	ag := Part{Op: AllGather, Band: Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1}
	call := Part{Op: AllReduce, Band: Band{Min: 1 << 20, Max: 1 << 20}, Weight: 1, Calls: 10, Logged: []int64{1 << 20}}
	for _, tc := range []struct {
		name string
		w    Workload
		want bool
	}{
		{"one band", Workload{ar}, false},
		{"one call", Workload{call}, false},
		{"two parts", Workload{ar, ag}, true},
		{"two calls", Workload{call, call}, true},
	} {
		if got := tc.w.ScoredByRounds(); got != tc.want {
			t.Errorf("%s: ScoredByRounds %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOneRoundsPredicate: "is this study scored by rounds" is asked
// through Workload.ScoredByRounds everywhere, never as len(….Workload)
// or len(….Parts()) against 1 or 2, which read alike until one site
// changes.
func TestOneRoundsPredicate(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if b, ok := n.(*ast.BinaryExpr); ok && (isWorkloadLen(b.X) && isOneOrTwo(b.Y) || isWorkloadLen(b.Y) && isOneOrTwo(b.X)) {
				t.Errorf("%s: len(…) %s … asks whether a study is scored by rounds: call Workload.ScoredByRounds", path, b.Op)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isWorkloadLen reports whether e is len(x.Workload) or len(x.Parts()).
func isWorkloadLen(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "len" {
		return false
	}
	arg := call.Args[0]
	if c, ok := arg.(*ast.CallExpr); ok {
		arg = c.Fun
	}
	sel, ok := arg.(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Workload" || sel.Sel.Name == "Parts")
}

func isOneOrTwo(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && (lit.Value == "1" || lit.Value == "2")
}
