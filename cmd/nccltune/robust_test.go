package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestUndefinedGuardIsStored: a guard size the simulator cannot time (1
// byte) leaves NaN in the decision; the study is still stored as done,
// its --json is valid, and show reads it.
func TestUndefinedGuardIsStored(t *testing.T) {
	db := filepath.Join(t.TempDir(), "nan.db")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "1M", "--guard", "1", "--budget", "19", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("--json is not JSON: %v\n%s", err, stdout)
	}
	if st := storedStudy(t, db, "s1-1M"); st.study.Status != "done" {
		t.Errorf("stored as %q", st.study.Status)
	}
	if _, stderr, code := runCLI(t, db, "show", "s1-1M"); code != 0 || strings.Contains(stderr, "NaN") {
		t.Errorf("show: exit %d: %s", code, stderr)
	}
}
