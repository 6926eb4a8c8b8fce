package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileEnv are base env values a shell would act on: each would create
// a file in dir (or worse) if anything between nccltune and the benchmark
// handed it to a shell.
func hostileEnv(dir string) map[string]string {
	touch := func(n string) string { return "touch " + filepath.Join(dir, "pwned-"+n) }
	return map[string]string{
		"NCCLTUNE_T_SUBST":     "$(" + touch("subst") + ")",
		"NCCLTUNE_T_BACKTICK":  "`" + touch("backtick") + "`",
		"NCCLTUNE_T_SEMICOLON": "x; " + touch("semicolon") + "; y",
		"NCCLTUNE_T_PIPES":     "a | " + touch("pipe") + " && " + touch("and") + " || b & " + touch("bg"),
		"NCCLTUNE_T_QUOTES":    `'it''s' "a \"quoted\" $HOME" \' \`,
		"NCCLTUNE_T_NEWLINE":   "first line\n" + touch("newline") + "\nthird",
		"NCCLTUNE_T_EXPAND":    "${IFS}$HOME ~ * ?[a] {a,b} $((1+1)) !! %s",
		"NCCLTUNE_T_DASH":      "-x NCCL_PROTO=LL --allow-run-as-root",
		"NCCLTUNE_T_SPACE":     " ",
		"NCCLTUNE_T_PADDED":    "  lead and trail\t ",
	}
}

func baseEnvArgs(env map[string]string) []string {
	var args []string
	for k, v := range env {
		args = append(args, "--base-env", k+"="+v)
	}
	return args
}

func assertNotPwned(t *testing.T, dir string) {
	t.Helper()
	if found, _ := filepath.Glob(filepath.Join(dir, "pwned-*")); len(found) > 0 {
		t.Errorf("a shell ran a value: %v", found)
	}
}

// TestHostileValuesReachTheBenchmarkUnchanged: values with shell syntax in
// them (command substitution, backticks, ;, pipes, quotes, newlines,
// globs, leading dashes) pass through --base-env to the simulated
// benchmark byte for byte, as the wrapper in front of it reports, and into
// the store (the study's base env and the launch's, not the -J output's
// "env", which keeps NCCL's variables only); no shell runs them. The same
// through mpirun's -x arguments. Knob values (--env) are checked against
// NCCL's syntax and refused.
func TestHostileValuesReachTheBenchmarkUnchanged(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	envFile := filepath.Join(dir, "benchmark-env")
	t.Setenv("NCCLTUNE_TEST_ENV", envFile)
	env := hostileEnv(dir)
	args := append([]string{"sweep", "--sim", "spark4", "--min", "1M", "--max", "1M", "--no-warmup",
		"--wrapper", faultFile(t, "wrapper.sh")}, baseEnvArgs(env)...)
	if _, stderr, code := runCLI(t, db, args...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	assertNotPwned(t, dir)
	st := openStore(t, db)
	s, err := st.Study("s1-sweep")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		if s.BaseEnv[k] != v {
			t.Errorf("stored base env %s=%q, want %q", k, s.BaseEnv[k], v)
		}
	}
	launches, err := st.Launches(s.ID)
	if err != nil || len(launches) != 1 {
		t.Fatalf("%d launches, %v", len(launches), err)
	}
	handed, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, kv := range strings.Split(string(handed), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := env[k]; ok {
			seen[k] = v
		}
	}
	for k, v := range env {
		if got, ok := seen[k]; !ok || got != v {
			t.Errorf("the benchmark saw %s=%q, want %q", k, got, v)
		}
	}
	// The simulator, like nccl-tests 2.19, lists its environment in -J;
	// the store keeps none of it but NCCL's.
	raw, err := st.RawOutput(launches[0].ID)
	if err != nil || len(raw.JSON) == 0 {
		t.Fatalf("no JSON output stored: %v", err)
	}
	if bytes.Contains(raw.JSON, []byte("NCCLTUNE_T_")) || !bytes.Contains(raw.JSON, []byte(`"nccltune_env_redacted":`)) {
		t.Errorf("the stored JSON output holds the base env, or does not say its env was redacted: %s", raw.JSON)
	}
	stored := map[string]bool{}
	for _, kv := range launches[0].Env {
		stored[kv] = true
	}
	for k, v := range env {
		if !stored[k+"="+v] {
			t.Errorf("the stored launch env lacks %s=%q", k, v)
		}
	}

	t.Run("mpirun", func(t *testing.T) {
		argvFile := filepath.Join(dir, "argv")
		t.Setenv("NCCLTUNE_TEST_ARGV", argvFile)
		args := append([]string{"sweep", "--launcher", "mpirun", "--mpirun", faultFile(t, "fake-mpirun"), "--np", "2",
			"--hosts", "spark5:1,spark6:1", "--bench", "/opt/nccl-tests/build/all_reduce_perf", "--min", "1M", "--max", "1M", "--no-warmup"},
			baseEnvArgs(env)...)
		if _, stderr, code := runCLI(t, db, args...); code != exitFabric {
			t.Fatalf("exit %d, want 3 (the fake mpirun fails)\n%s", code, stderr)
		}
		assertNotPwned(t, dir)
		data, err := os.ReadFile(argvFile)
		if err != nil {
			t.Fatal(err)
		}
		argv := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
		passed := map[string]bool{}
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == "-x" {
				passed[argv[i+1]] = true
			}
		}
		for k, v := range env {
			if !passed[k+"="+v] {
				t.Errorf("mpirun did not get -x %s=%q as one argument; it got %q", k, v, argv)
			}
		}
	})

	t.Run("knob values", func(t *testing.T) {
		for _, v := range []string{"$(touch " + filepath.Join(dir, "pwned-knob") + ")", "LL;touch x", "`id`", "LL\nSimple"} {
			_, stderr, code := runCLI(t, db, "sweep", "--sim", "spark4", "--env", "NCCL_PROTO="+v)
			if code != exitUsage || !strings.Contains(stderr, "is not one of LL, LL128, Simple") {
				t.Errorf("--env NCCL_PROTO=%q: exit %d, %s", v, code, stderr)
			}
		}
		assertNotPwned(t, dir)
	})
}
