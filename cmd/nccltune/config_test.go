package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/store"
)

// onlyStudy reads the one study of a database.
func onlyStudy(t *testing.T, db string) *store.Study {
	t.Helper()
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	studies, err := st.Studies()
	if err != nil {
		t.Fatal(err)
	}
	if len(studies) != 1 {
		t.Fatalf("%d studies in %s, want 1", len(studies), db)
	}
	s, err := st.Study(studies[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// studySettings is what a study was asked to do: everything but its
// identity, times and outcome.
func studySettings(s *store.Study) map[string]any {
	return map[string]any{
		"name": s.Name, "kind": s.Kind, "labels": s.Labels, "band": s.Band, "sizes": s.Sizes,
		"guard": s.GuardSizes, "space": s.Space, "base_env": s.BaseEnv, "baseline_env": s.BaselineEnv,
		"launch": s.Launch, "simulated": s.Simulated, "seed": s.Seed, "budget": s.Budget, "search": s.Search,
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStudyConfigEqualsFlags: a study config and the same flags on the
// command line store the same study settings.
func TestStudyConfigEqualsFlags(t *testing.T) {
	t.Parallel()
	flags := []string{"search", "--sim", "spark4", "--band", "1M-2M", "--budget", "16", "--seed", "7",
		"--guard", "8M", "--space", "NCCL_NTHREADS=unset,256", "--space", "NCCL_MAX_NCHANNELS=unset,4,8", "--space-only",
		"--confirm", "4", "--min-effect", "0.05", "--noise", "0.5",
		"--base-env", "NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1", "--base-env", "NCCL_SOCKET_IFNAME=enP7s7",
		"--baseline-env", "NCCL_MAX_NCHANNELS=8", "--name", "lane-a", "--label", "lane=a", "--label", "team=serving", "--json"}
	config := writeConfig(t, `# lane A's tuning
band: 1M-2M
budget: 16
seed: 7
guard: 8M
space:
  - NCCL_NTHREADS=unset,256
  - NCCL_MAX_NCHANNELS=unset,4,8
space-only: true
confirm: 4
min-effect: 0.05
sim: spark4
noise: 0.5
base-env:
  NCCL_IB_HCA: "=rocep1s0f1,roceP2p1s0f1"
  NCCL_SOCKET_IFNAME: enP7s7
baseline-env: [NCCL_MAX_NCHANNELS=8]
name: lane-a
label: [lane=a, team=serving]
`)
	dbFlags := filepath.Join(t.TempDir(), "flags.db")
	if _, stderr, code := runCLI(t, dbFlags, flags...); code != 0 {
		t.Fatalf("flags: exit %d\n%s", code, stderr)
	}
	dbConfig := filepath.Join(t.TempDir(), "config.db")
	if _, stderr, code := runCLI(t, dbConfig, "search", "--config", config, "--json"); code != 0 {
		t.Fatalf("config: exit %d\n%s", code, stderr)
	}
	want, got := studySettings(onlyStudy(t, dbFlags)), studySettings(onlyStudy(t, dbConfig))
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: config gives %+v, flags give %+v", k, got[k], want[k])
		}
	}
	if s := onlyStudy(t, dbConfig); s.Budget.Launches != 16 || s.Seed != 7 || s.BaseEnv["NCCL_IB_HCA"] != "=rocep1s0f1,roceP2p1s0f1" {
		t.Errorf("the config's values were not used: %+v", s)
	}
}

// TestStudyConfigCommandLineWins: a flag on the command line overrides
// the file's key (a repeatable one replaces the file's list).
func TestStudyConfigCommandLineWins(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, "band: 1M-2M\nbudget: 30\nseed: 3\nsim: spark4\nlabel: [lane=a]\n")
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--config", config, "--budget", "20", "--label", "lane=b", "--json"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	s := onlyStudy(t, db)
	if s.Budget.Launches != 20 || s.Seed != 3 || !reflect.DeepEqual(s.Labels, map[string]string{"lane": "b"}) {
		t.Errorf("budget %d seed %d labels %v, want 20, 3 and lane=b", s.Budget.Launches, s.Seed, s.Labels)
	}
}

// TestStudyConfigWorkloadOnTheCommandLineWins: the workload on the
// command line (--band, --part, --calls, --op) replaces the file's whole
// workload, whichever keys each uses: --band beside a file's part: was
// refused as two workloads.
func TestStudyConfigWorkloadOnTheCommandLineWins(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, "part: [\"all_reduce:1M-2M:0.8\", \"all_gather:1M:0.2\"]\nbudget: 24\nsim: spark4\n")
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--config", config, "--band", "512K-1M", "--json"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if s := onlyStudy(t, db); s.Band != "512K-1M" || len(s.Workload) > 1 || s.Budget.Launches != 24 {
		t.Errorf("band %q, %d parts, budget %d: want the command line's band 512K-1M alone and the file's budget 24", s.Band, len(s.Workload), s.Budget.Launches)
	}
}

// TestStudyConfigRefusals: a bad file is a usage error (exit 2) that
// names the problem, before anything is stored.
func TestStudyConfigRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cmd, text string
		want            []string
	}{
		{"unknown key", "search", "band: 1M\nbugdet: 10\n", []string{`line 2: unknown key "bugdet"`, "nearest valid key is budget"}},
		{"env var spelling", "search", "band: 1M\nbase_env: {A: b}\n", []string{`unknown key "base_env"`, "nearest valid key is base-env"}},
		{"list for one value", "search", "band: [1M, 2M]\n", []string{"band: takes one value, not a list"}},
		{"bad value", "search", "band: 1M\nbudget: lots\n", []string{"budget:", `"lots" is not a valid value`}},
		{"no value", "search", "band:\n", []string{"band: no value"}},
		{"not a map", "search", "- band\n", []string{"must be a map of flag names"}},
		{"not YAML", "search", "band: [1M\n", []string{"is not valid YAML"}},
		{"repeated key", "search", "band: 1M\nband: 2M\n", []string{"band"}},
		{"search key in sweep", "sweep", "budget: 10\n", []string{`unknown key "budget"`}},
		// Issue 38: a file written by nccltune workload holds the workload only.
		{"generated with prefix", "search", "generated-by: nccltune workload\npart: [all_reduce:1M:1]\nprefix: sh -c 'touch /tmp/pwned'\n",
			[]string{`line 3: "prefix": this file was generated by nccltune workload from a log and may only hold the workload (part)`, "--prefix on the command line"}},
		{"alias key", "search", "&wrapper band: 1M\n*wrapper : /tmp/evil.sh\n", []string{"line 2: a key must be a flag's name as plain text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			_, stderr, code := runCLI(t, db, tc.cmd, "--sim", "spark4", "--config", writeConfig(t, tc.text))
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(db); err == nil {
				if st, err := store.Open(db, store.Options{ReadOnly: true}); err == nil {
					studies, _ := st.Studies()
					st.Close()
					if len(studies) != 0 {
						t.Errorf("a refused config stored %d studies", len(studies))
					}
				}
			}
		})
	}
	_, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "search", "--config", filepath.Join(t.TempDir(), "none.yaml"))
	if code != 2 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing file: exit %d\n%s", code, stderr)
	}
}

// TestStudyConfigCompare: compare reads its two configs from a file, as
// maps, and stores them as the flags would.
func TestStudyConfigCompare(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, `sim: spark4
band: 1M-2M
launches: 4
env-a: {NCCL_PROTO: ^LL128, NCCL_MAX_NCHANNELS: 8}
env-b: [NCCL_PROTO=^LL128, NCCL_MAX_CTAS=8]
`)
	dbFlags, dbConfig := filepath.Join(t.TempDir(), "flags.db"), filepath.Join(t.TempDir(), "config.db")
	if _, stderr, code := runCLI(t, dbFlags, "compare", "--sim", "spark4", "--band", "1M-2M", "--launches", "4",
		"--env-a", "NCCL_PROTO=^LL128", "--env-a", "NCCL_MAX_NCHANNELS=8", "--env-b", "NCCL_PROTO=^LL128", "--env-b", "NCCL_MAX_CTAS=8"); code != 0 {
		t.Fatalf("flags: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, dbConfig, "compare", "--config", config); code != 0 {
		t.Fatalf("config: exit %d\n%s", code, stderr)
	}
	want, got := onlyStudy(t, dbFlags), onlyStudy(t, dbConfig)
	if !reflect.DeepEqual(studySettings(got), studySettings(want)) {
		t.Errorf("config gives %+v\nflags give   %+v", studySettings(got), studySettings(want))
	}
	if gc, wc := trialConfigs(t, dbConfig), trialConfigs(t, dbFlags); !reflect.DeepEqual(gc, wc) || len(wc) != 2 {
		t.Errorf("config compares %v, flags %v", gc, wc)
	}
}

// trialConfigs lists the configs of the one study's trials.
func trialConfigs(t *testing.T, db string) []string {
	t.Helper()
	s := onlyStudy(t, db)
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tr := range trials {
		out = append(out, tr.Config.Key())
	}
	return out
}
