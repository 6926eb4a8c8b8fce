package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --calls' usage errors come before anything is stored (exit 2, no
// database file): a workload is the calls a process makes, or parts and
// bands, never both.
func TestCallsUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"with --part", []string{"--calls", "all_reduce:10240:760", "--part", "all_reduce:1M-2M"}, "drop --part"},
		{"with --band", []string{"--calls", "all_reduce:10240:760", "--band", "1M-2M"}, "drop --band"},
		{"with --op", []string{"--op", "all_gather", "--calls", "all_reduce:10240:760"}, "drop --op"},
		{"bad call", []string{"--calls", "all_reduce:10240"}, "OP:BYTES:CALLS"},
		{"no calls", []string{"--calls", "all_reduce:10240:0"}, "positive number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			_, stderr, code := runCLI(t, db, append([]string{"search", "--sim", "spark4"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %q", code, stderr, exitUsage, tt.want)
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("a database was created for a usage error")
			}
		})
	}
}

// The config's calls: is --calls, and refuses part: beside it.
func TestConfigCalls(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	cfg := writeConfig(t, "calls: [all_reduce:10240:760, all_reduce:2048000:80]\npart: [all_gather:1M-2M]\n")
	_, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "drop --part") {
		t.Fatalf("calls: beside part: exit %d, stderr %q; want a usage error", code, stderr)
	}
	cfg = writeConfig(t, "calls: [all_reduce:10240:760, all_reduce:2048000:80]\nbudget: 150\n")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg, "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := stdout + stderr
	for _, want := range []string{"all_reduce:10240:760", "all_reduce:2048000:80"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name the call %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "guard size") {
		t.Errorf("a timed workload was guarded at a size it never calls:\n%s", out)
	}
}
