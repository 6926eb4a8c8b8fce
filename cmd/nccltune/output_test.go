package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteJSONSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"object keeps its field order", struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2}, `{"schema_version":1,"b":1,"a":2}`},
		{"empty object", map[string]int{}, `{"schema_version":1}`},
		{"already versioned", map[string]int{"schema_version": 7, "x": 1}, `{"schema_version":7,"x":1}`},
		{"a list of documents", []map[string]int{{"x": 1}, {"y": 2}}, `[{"schema_version":1,"x":1},{"schema_version":1,"y":2}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeJSON(&buf, tc.in); err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, buf.Bytes()); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, buf.Bytes())
			}
			if compact.String() != tc.want {
				t.Errorf("got %s, want %s", compact.String(), tc.want)
			}
		})
	}
}

// TestHelpDefaults reads every command's --help: no flag shows a default
// that says nothing ("(default: false)", "(default: 0)") or a second
// default beside the one its usage names.
func TestHelpDefaults(t *testing.T) {
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
