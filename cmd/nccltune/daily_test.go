package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstRunSaysWhere: a search into a new database says which file it
// created; the next one names the file without calling it new.
func TestFirstRunSaysWhere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sub", "nccltune.db")
	_, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stored in "+db+" (a new database") {
		t.Errorf("the first run does not say where the study went:\n%s", stderr)
	}
	_, stderr, code = runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stored in "+db+"\n") || strings.Contains(stderr, "a new database") {
		t.Errorf("the second run:\n%s", stderr)
	}
}

func TestVersionCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	out, stderr, code := runCLI(t, db, "version")
	if code != 0 || !strings.HasPrefix(out, "nccltune "+releaseVersion) {
		t.Errorf("version: exit %d, %q %q", code, out, stderr)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Version       string `json:"version"`
	}
	out, _, code = runCLI(t, db, "version", "--json")
	decodeOneJSON(t, out, &doc)
	if code != 0 || doc.SchemaVersion != schemaVersion || !strings.HasPrefix(doc.Version, releaseVersion) {
		t.Errorf("version --json: exit %d, %+v", code, doc)
	}
}
