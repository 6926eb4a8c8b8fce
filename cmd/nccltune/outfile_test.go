package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportOutDash(t *testing.T) {
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	want, _, _ := runCLI(t, db, "export", "s1", "--format", "env")
	dir := t.TempDir()
	t.Chdir(dir)
	got, stderr, code := runCLI(t, db, "export", "s1", "--format", "env", "--out", "-")
	// The header's "exported <time>" line may fall in another second.
	if code != 0 || withoutExportTime(got) != withoutExportTime(want) {
		t.Errorf("exit %d, stdout %q, want %q (%s)", code, got, want, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Error("--out - created a file named -")
	}
}

// withoutExportTime drops the export header's line with the time of export.
func withoutExportTime(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "# exported ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
