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

	// A CSV whose first row is stretched from 0 bytes to the band's edge
	// (one channel of LL where NCCL runs many) slows the size just below
	// the band, which the band never measures: verify names it, exit 1.
	stretched := filepath.Join(dir, "stretched.csv")
	if err := os.WriteFile(stretched, []byte("allreduce,0,524287,ring,ll,1,4,4,-1,-1\n"+
		"allreduce,524288,4194304,ring,simple,8,4,4,-1,-1\n"+
		"allreduce,4194305,18446744073709551615,ring,simple,0,4,4,-1,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", plugin("2.30.7"), "--tuner-config", stretched)
	if code != 1 {
		t.Fatalf("verify of a stretched CSV: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	var slow struct {
		Failed  bool   `json:"failed"`
		Refused string `json:"refused"`
		Reason  string `json:"reason"`
		Guards  []struct {
			Sizes   []int64 `json:"sizes"`
			PerSize []struct {
				Bytes  int64 `json:"bytes"`
				Slower bool  `json:"slower"`
			} `json:"per_size"`
		} `json:"guards"`
	}
	if err := json.Unmarshal([]byte(stdout), &slow); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !slow.Failed || slow.Refused != "all_reduce at 256K" || !strings.Contains(slow.Reason, "significantly slower at 256K") || len(slow.Guards) != 1 {
		t.Fatalf("the stretched CSV: failed %v, refused %q, reason %q, guards %+v", slow.Failed, slow.Refused, slow.Reason, slow.Guards)
	}
	for _, s := range slow.Guards[0].PerSize {
		if s.Slower != (s.Bytes == 256<<10) {
			t.Errorf("%d bytes: slower %v; only 256K, which the stretched row alone changes, is", s.Bytes, s.Slower)
		}
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
	study, err := st.Study("s4") // s2 and s3 are the verifies above
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
		{[]string{"--tuner-config", so}, "give the plugin with --tuner-plugin"},
		{[]string{"--tuner-plugin", so, "--tuner-config", filepath.Join(dir, "missing.csv")}, "no such file here"},
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
