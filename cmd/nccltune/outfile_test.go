package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExportOutDash(t *testing.T) {
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	want, _, _ := runCLI(t, db, "export", "s1", "--format", "env")
	dir := t.TempDir()
	t.Chdir(dir)
	got, stderr, code := runCLI(t, db, "export", "s1", "--format", "env", "--out", "-")
	if code != 0 || got != want {
		t.Errorf("exit %d, stdout %q, want %q (%s)", code, got, want, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Error("--out - created a file named -")
	}
}
