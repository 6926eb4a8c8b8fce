package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsBeforeTheDatabase: bad flag values are exit 2, with a
// message naming the fix, before the database is opened or created.
func TestUsageErrorsBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "never.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `"bogus" is not a nccltune command`},
		{[]string{"serch", "--band", "1M"}, "did you mean search?"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--budgt", "3"}, "-budgt; did you mean --budget?"},
		{[]string{"history", "--jsn"}, "did you mean --json?"},
		{[]string{"export", "s1", "--format", "k8s", "--indnet", "8"}, "did you mean --indent?"},
		{[]string{"replay", "build", "x.db", "--ot", "y"}, "did you mean --out?"},
		{[]string{"search", "--sim", "spark5", "--band", "1M"}, "did you mean spark"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--noise", "NaN"}, "--noise NaN"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--alpha", "NaN"}, "--alpha NaN"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--min-effect", "NaN"}, "--min-effect NaN"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--min-effect", "Inf"}, "--min-effect +Inf"},
		{[]string{"search", "--sim", "spark4", "--band", "1"}, "below one element"},
		{[]string{"search", "--sim", "spark4", "--band", "2-8"}, "below one element"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--guard", "1"}, "below one element"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--guard", "3M"}, "--guard 3M: size 3M is not a power of two"},
		{[]string{"sweep", "--sim", "spark4", "--min", "2", "--max", "8"}, "below one element"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--space", "NCCL_MAX_NCHANNELS=4", "--space", "NCCL_MIN_NCHANNELS=8", "--space-only"}, "nothing to try"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--space", "NCCL_PROTO=LL", "--space", "NCCL_PROTO=Simple"}, "NCCL_PROTO is given twice to --space"},
		{[]string{"sweep", "--sim", "spark4", "--env", "NCCL_PROTO=LL", "--env", "NCCL_PROTO=Simple"}, "NCCL_PROTO is given twice to --env"},
		{[]string{"sweep", "--sim", "spark4", "--base-env", "NCCL_IB_HCA=a", "--base-env", "NCCL_IB_HCA=b"}, "NCCL_IB_HCA is given twice to --base-env"},
		{[]string{"import", "--env", "NCCL_PROTO=LL", "--env", "NCCL_PROTO=Simple", "x.txt"}, "NCCL_PROTO is given twice to --env"},
	} {
		_, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a usage error created the database")
	}
}

// TestGlobalFlagsAfterTheCommand: --db may follow the command, and "help"
// prints the help.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	want, _, _ := runCLI(t, db, "history")
	for _, args := range [][]string{{"nccltune", "history", "--db", db}, {"nccltune", "history", "--db=" + db}} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), args, &stdout, &stderr)
		if err != nil || stdout.String() != want {
			t.Errorf("%v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	if err := run(t.Context(), []string{"nccltune", "help", "export"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "nccltune export") {
		t.Errorf("help export: %v\n%s", err, stdout.String())
	}
}

// TestJSONOnEveryExit: with --json, a command that fails or is
// interrupted still prints one JSON document: the error, with its code.
func TestJSONOnEveryExit(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "json.db")
	check := func(args []string, stdout string, code int, kind string) {
		t.Helper()
		var doc struct {
			Error *struct {
				Code    int    `json:"code"`
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"error"`
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Errorf("%v: stdout is not one JSON document (%v):\n%s", args, err, stdout)
			return
		}
		if doc.Error == nil || doc.Error.Code != code || doc.Error.Kind != kind || doc.Error.Message == "" {
			t.Errorf("%v: exit %d, document %s", args, code, stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"search", "--sim", "spark5", "--band", "1M", "--json"}, exitUsage, "usage"},
		{[]string{"show", "nothing", "--json"}, exitUsage, "usage"},
		{[]string{"bogus", "--json"}, exitUsage, "usage"},
		{[]string{"history", "--json", "--db"}, exitUsage, "usage"},
	} {
		stdout, _, code := runCLI(t, db, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.args, code, tc.code)
		}
		check(tc.args, stdout, tc.code, tc.kind)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := []string{"search", "--sim", "spark4", "--band", "1M", "--budget", "20", "--json"}
	stdout, _, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 3/") {
			cancel()
		}
	}, args...)
	if code != exitInterrupted {
		t.Fatalf("exit %d", code)
	}
	check(args, stdout, exitInterrupted, "interrupted")
}

// TestExitCodesDocumented: nccltune --help and the README give the same
// exit codes, among them exit 1 for errors that are neither usage nor
// fabric (a busy or full database, a file that cannot be read).
func TestExitCodesDocumented(t *testing.T) {
	t.Parallel()
	help, _, _ := runCLI(t, filepath.Join(t.TempDir(), "db"), "--help")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	want := flat(exitCodesHelp)
	for name, text := range map[string]string{"--help": help, "README": string(readme)} {
		if !strings.Contains(flat(text), want) {
			t.Errorf("%s lacks the exit codes %q", name, want)
		}
	}
	for _, w := range []string{"database busy", "read-only", "a study another nccltune is running", "130 interrupted"} {
		if !strings.Contains(want, w) {
			t.Errorf("exit codes do not name %q", w)
		}
	}
}

// TestBandBetweenPowersOfTwo: a band whose ends are not powers of two is
// measured at the powers of two inside it (3M-5M: 4M), by a search and a
// comparison alike, instead of failing its first launch with "no samples
// at 4M" and leaving a failed study behind.
func TestBandBetweenPowersOfTwo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	out, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "3M-5M", "--budget", "19", "--confirm", "4", "--json")
	if code != 0 {
		t.Fatalf("search --band 3M-5M: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Band     string `json:"band"`
		Baseline struct {
			ScoreUS float64 `json:"score_us"`
		} `json:"baseline"`
	}
	decodeOneJSON(t, out, &doc)
	if doc.Baseline.ScoreUS <= 0 {
		t.Errorf("no baseline score:\n%s", out)
	}
	if _, stderr, code := runCLI(t, db, "compare", "--sim", "flat", "--band", "3M-5M", "--env-a", "NCCL_PROTO=Simple", "--env-b", "NCCL_MAX_NCHANNELS=8", "--launches", "4"); code != 0 {
		t.Errorf("compare --band 3M-5M: exit %d\n%s", code, stderr)
	}
}
