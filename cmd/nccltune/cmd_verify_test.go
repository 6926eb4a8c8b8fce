package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// verify --launches is checked at the alpha the verify decides at, the
// verified study's (search --alpha), not the default 0.05: a study
// decided at a smaller alpha needs more launches per arm for any verdict
// (model.MinLaunchesForDecision: 4 at 0.05, 5 at 0.01, 7 at 0.001), and
// too few are refused before anything is launched or stored, the message
// naming the study's alpha, the minimum and the flag to give.
func TestVerifyLaunchesAtTheStudysAlpha(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, alpha := range []string{"0.05", "0.01", "0.001"} {
		// The smallest budget --confirm 8 takes: what verify reads is the
		// alpha each study stored, not how far its search went.
		if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--seed", "1", "--band", "512K-4M", "--alpha", alpha,
			"--confirm", "8", "--budget", "23", "--name", "a"+alpha); code != 0 {
			t.Fatalf("search --alpha %s: exit %d\n%s", alpha, code, stderr)
		}
	}
	studies := func() int {
		out, stderr, code := runCLI(t, db, "history", "--json")
		if code != 0 {
			t.Fatalf("history: exit %d\n%s", code, stderr)
		}
		var doc struct {
			Studies []struct{} `json:"studies"`
		}
		decodeOneJSON(t, out, &doc)
		return len(doc.Studies)
	}
	for _, tc := range []struct {
		study    string
		launches int
		need     int // 0: accepted
	}{
		{"a0.05", 3, 4},
		{"a0.05", 4, 0},
		{"a0.01", 4, 5},
		{"a0.01", 5, 0},
		{"a0.001", 6, 7},
	} {
		before := studies()
		_, stderr, code := runCLI(t, db, "verify", tc.study, "--sim", "spark4", "--seed", "1", "--launches", fmt.Sprint(tc.launches))
		name := fmt.Sprintf("verify %s --launches %d", tc.study, tc.launches)
		if tc.need == 0 {
			if code == exitUsage {
				t.Errorf("%s: refused (exit 2), want it measured:\n%s", name, stderr)
			}
			continue
		}
		alpha := strings.TrimPrefix(tc.study, "a")
		var missing []string
		for _, want := range []string{fmt.Sprintf("--launches %d", tc.launches), "alpha " + alpha,
			fmt.Sprintf("at least %d", tc.need), fmt.Sprintf("use --launches %d", tc.need)} {
			if !strings.Contains(stderr, want) {
				missing = append(missing, want)
			}
		}
		if code != exitUsage || len(missing) > 0 {
			t.Errorf("%s: exit %d, want 2 naming %q:\n%s", name, code, missing, stderr)
		}
		if n := studies(); n != before {
			t.Errorf("%s: refused, but stored a study (%d, was %d)", name, n, before)
		}
	}
}
