package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/sim"
	"github.com/nccltune/nccltune/store"
)

// verify --tuner-plugin on the simulated fabric: the CSV through a plugin
// built from 2.30.7 source reproduces the study's gain; through one built
// from 2.28.3 source the first (debug) launch dies in the plugin, verify
// names the cause and the fix, exits 3 and measures nothing.
func TestVerifyTunerPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "1", "--budget", "30"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	plugin := func(source string) string {
		p := filepath.Join(dir, "tuner-"+source+".so")
		if err := os.WriteFile(p, sim.TunerPluginFile(source), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stdout, stderr, code := runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", plugin("2.30.7"))
	if code != 0 {
		t.Fatalf("verify through the 2.30.7 plugin: exit %d: %s", code, stderr)
	}
	var doc struct {
		Consistent bool `json:"consistent"`
		Tuner      struct {
			Check struct {
				Interface int `json:"interface"`
				Applied   int `json:"applied"`
				NoMatch   int `json:"no_match"`
			} `json:"check"`
			Warnings   []struct{ Code string } `json:"warnings"`
			Reproduces bool                    `json:"reproduces"`
		} `json:"tuner_plugin"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// spark4 is four GB10 nodes: the example plugin rewrites NCCL's
	// Blackwell constants there, its one warning.
	if !doc.Tuner.Reproduces || !doc.Consistent || doc.Tuner.Check.Interface != 6 || doc.Tuner.Check.Applied == 0 || doc.Tuner.Check.NoMatch != 0 ||
		len(doc.Tuner.Warnings) != 1 || doc.Tuner.Warnings[0].Code != fabric.CodeTunerExampleConstants {
		t.Errorf("the 2.30.7 plugin: %+v", doc)
	}

	stdout, stderr, code = runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--tuner-plugin", plugin("2.28.3"))
	if code != 3 {
		t.Fatalf("verify through the 2.28.3 plugin: exit %d, want 3\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"SIGSEGV inside the tuner plugin", "NCCL < 2.30.3", "2.30.3 or newer source", "gcc -Inccl -fPIC -shared"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the crash's message lacks %q:\n%s", want, stderr)
		}
	}
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study("s3")
	if err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	if study.Status != "failed" || len(launches) != 1 || launches[0].Scored || launches[0].Outcome != "failed" {
		t.Errorf("the crashed verify stored status %s and %d launches (want failed, one unscored failed launch)", study.Status, len(launches))
	}
}

// What verify --tuner-plugin refuses before anything is stored.
func TestVerifyTunerPluginUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	so := filepath.Join(dir, "p.so")
	if err := os.WriteFile(so, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tuner-plugin", filepath.Join(dir, "missing.so")}, "no such file here"},
		{[]string{"--tuner-plugin", so, "--env", "NCCL_PROTO=Simple"}, "give one of them"},
		{[]string{"--tuner-plugin", so, "--base-env", "NCCL_TUNER_CONFIG_FILE=/x.csv"}, "drop it from --base-env"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"verify", "s1", "--sim", "spark4"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tt.args, code, tt.want, stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused verify created the database")
	}
}
