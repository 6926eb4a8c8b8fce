package invocation

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommandFor: a binary go run built (in the build cache, or the
// temporary go-build directory of older Go) is run again with go run —
// ./cmd/nccltune from the module's root, the package path elsewhere —
// and any other binary as nccltune.
func TestCommandFor(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "cmd", "nccltune"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cmd", "nccltune", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := []string{"/home/u/.cache/go-build/", "/tmp/go-build"}
	for _, tc := range []struct{ exe, wd, want string }{
		{"/home/u/.cache/go-build/43/4352c5-d/nccltune", root, "go run ./cmd/nccltune"},
		{"/tmp/go-build3733471429/b001/exe/nccltune", root, "go run ./cmd/nccltune"},
		{"/tmp/go-build3733471429/b001/exe/nccltune", filepath.Join(root, "cmd"), "go run " + ModulePackage},
		{"/home/u/go/bin/nccltune", root, "nccltune"},
		{"/usr/local/bin/nccltune", root, "nccltune"},
		{"/home/u/.cache/go-build-other/nccltune", root, "nccltune"},
		{"", root, "nccltune"},
		{"/tmp/go-build1/b001/nccltune.test", root, "nccltune"},
	} {
		if got := commandFor(tc.exe, tc.wd, cache); got != tc.want {
			t.Errorf("commandFor(%q, %q) = %q, want %q", tc.exe, tc.wd, got, tc.want)
		}
	}
}
