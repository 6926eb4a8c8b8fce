package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpDefaults reads every command's --help: no flag shows a default
// that says nothing ("(default: false)", "(default: 0)") or a second
// default beside the one its usage names.
func TestHelpDefaults(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil)
	for _, cmd := range app.Commands {
		out, _, code := runCLI(t, filepath.Join(t.TempDir(), "db"), cmd.Name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", cmd.Name, code)
		}
		for _, line := range strings.Split(out, "\n") {
			lower := strings.ToLower(line)
			if strings.Count(lower, "default") > 1 && strings.Contains(lower, "(default:") {
				t.Errorf("%s --help, two defaults: %s", cmd.Name, strings.TrimSpace(line))
			}
			for _, bad := range []string{"(default: false)", "(default: 0)", "(default: 0s)", `(default: "")`} {
				if strings.Contains(line, bad) {
					t.Errorf("%s --help: %s", cmd.Name, strings.TrimSpace(line))
				}
			}
			if strings.HasPrefix(strings.TrimSpace(line), "--sim") && !strings.Contains(line, "--sim PROFILE") {
				t.Errorf("%s --help: --sim's placeholder: %s", cmd.Name, strings.TrimSpace(line))
			}
		}
	}
}
