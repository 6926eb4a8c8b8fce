// Package golden compares test output with golden files under testdata/,
// for every package's tests: one -update flag rewrites them all.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with the file at path; with -update it writes got
// there instead. A difference is reported at its first differing line.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it if the change is intended)\n%s\n--- got\n%s", path, FirstDiff(string(want), string(got)), got)
	}
}

// FirstDiff describes the first line where want and got differ.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	line := func(l []string, i int) string {
		if i < len(l) {
			return l[i]
		}
		return ""
	}
	for i := range max(len(wl), len(gl)) {
		if w, g := line(wl, i), line(gl, i); w != g {
			return fmt.Sprintf("first difference at line %d:\n want: %q\n  got: %q", i+1, w, g)
		}
	}
	return "no difference"
}
