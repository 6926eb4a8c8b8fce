package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/ui"
)

// TestFirstRunSaysWhere: a search into a new database says which file it
// created; the next one names the file without calling it new. Only the
// default location's directory is created: a --db in a directory that
// does not exist is refused, naming it, before anything is stored.
func TestFirstRunSaysWhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent", "dir", "x.db")
	_, stderr, code := runCLI(t, missing, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4")
	if code != exitUsage || !strings.Contains(stderr, "its directory "+filepath.Dir(missing)+" does not exist") || !strings.Contains(stderr, "mkdir -p") {
		t.Errorf("--db in a missing directory: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(missing))); err == nil {
		t.Errorf("--db created the directory %s", filepath.Dir(missing))
	}
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("NCCLTUNE_DB", "")
	var stdout, errOut bytes.Buffer
	if code := runMain(t.Context(), []string{"sweep", "--sim", "flat", "--min", "1M", "--max", "1M"}, &stdout, &errOut); code != 0 {
		t.Errorf("the default location: exit %d\n%s", code, errOut.String())
	} else if _, err := os.Stat(filepath.Join(data, "nccltune", "nccltune.db")); err != nil {
		t.Errorf("the default database was not created: %v", err)
	}

	db := filepath.Join(t.TempDir(), "nccltune.db")
	_, stderr, code = runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stored in "+db+" (a new database") {
		t.Errorf("the first run does not say where the study went:\n%s", stderr)
	}
	_, stderr, code = runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stored in "+db+"\n") || strings.Contains(stderr, "a new database") {
		t.Errorf("the second run:\n%s", stderr)
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	out, stderr, code := runCLI(t, db, "version")
	if code != 0 || !strings.HasPrefix(out, "nccltune "+releaseVersion) {
		t.Errorf("version: exit %d, %q %q", code, out, stderr)
	}
	// The commit, or that it is unknown: never nothing.
	if !strings.Contains(out, "(commit ") {
		t.Errorf("version names no commit: %q", out)
	}
	var doc struct {
		SchemaVersion int     `json:"schema_version"`
		Version       string  `json:"version"`
		Commit        *string `json:"commit"`
	}
	out, _, code = runCLI(t, db, "version", "--json")
	decodeOneJSON(t, out, &doc)
	if code != 0 || doc.SchemaVersion != ui.SchemaVersion || !strings.HasPrefix(doc.Version, releaseVersion) || !strings.Contains(out, `"commit":`) {
		t.Errorf("version --json: exit %d, %+v\n%s", code, doc, out)
	}
	if doc.Commit != nil && !strings.Contains(doc.Version, (*doc.Commit)[:12]) {
		t.Errorf("commit %s is not the version's %s", *doc.Commit, doc.Version)
	}
}

// TestVersionCommit: the commit comes from the build's stamp, else from
// the checkout go run built (git, in that checkout), else is said to be
// unknown with the way to record it.
func TestVersionCommit(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		b    build
		want string
	}{
		{stamped([]debug.BuildSetting{{Key: "vcs.revision", Value: hash}, {Key: "vcs.modified", Value: "false"}}), "commit abababababab"},
		{stamped([]debug.BuildSetting{{Key: "vcs.revision", Value: hash}, {Key: "vcs.modified", Value: "true"}}), "commit abababababab, with uncommitted changes"},
		{build{Commit: hash, From: "checkout"}, "commit abababababab of the checkout go run built from; the build recorded none"},
		{stamped([]debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}), "commit unknown: the build recorded none, built with -buildvcs=false"},
	} {
		if got := tc.b.text(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want %q…", tc.b, got, tc.want)
		}
	}
	// This test runs in nccltune's own checkout (when git is here).
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	head, err := exec.Command(git, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	if got := checkoutCommit("."); got.Commit != strings.TrimSpace(string(head)) || got.From != "checkout" {
		t.Errorf("checkoutCommit: %+v, want %s", got, head)
	}
	if got := checkoutCommit(t.TempDir()); got.Commit != "" {
		t.Errorf("outside a checkout: %+v", got)
	}
}

// TestSweepSaysWhyNoInterval: five launches give no 95 % interval of a
// median, and the table says so instead of leaving the column blank.
func TestSweepSaysWhyNoInterval(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, tc := range []struct {
		repeats  string
		wantNote bool
	}{{"5", true}, {"6", false}} {
		out, stderr, code := runCLI(t, db, "sweep", "--sim", "spark4", "--min", "1M", "--max", "2M", "--repeats", tc.repeats)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		note := strings.Contains(out, "no interval: "+tc.repeats+" launches are too few") && strings.Contains(out, "--repeats 6 or more")
		if note != tc.wantNote {
			t.Errorf("--repeats %s: note %v, want %v\n%s", tc.repeats, note, tc.wantNote, out)
		}
	}
}

// TestJSONShapes: every document has schema_version; history's trial
// count and show's list agree under one name; durations are seconds.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	out, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4", "--timeout", "90s", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var search struct {
		SchemaVersion int    `json:"schema_version"`
		Study         string `json:"study"`
	}
	decodeOneJSON(t, out, &search)
	var hist struct {
		SchemaVersion int `json:"schema_version"`
		Studies       []struct {
			Trials     int `json:"trials"`
			TrialCount int `json:"trial_count"`
		} `json:"studies"`
	}
	out, _, _ = runCLI(t, db, "history", "--json")
	decodeOneJSON(t, out, &hist)
	var show struct {
		SchemaVersion int              `json:"schema_version"`
		Trials        []map[string]any `json:"trials"`
		TrialCount    int              `json:"trial_count"`
		Launch        map[string]any   `json:"launch"`
	}
	out, _, _ = runCLI(t, db, "show", search.Study, "--json")
	decodeOneJSON(t, out, &show)
	if search.SchemaVersion != ui.SchemaVersion || hist.SchemaVersion != ui.SchemaVersion || show.SchemaVersion != ui.SchemaVersion {
		t.Errorf("schema versions %d %d %d", search.SchemaVersion, hist.SchemaVersion, show.SchemaVersion)
	}
	if len(hist.Studies) != 1 || hist.Studies[0].TrialCount != len(show.Trials) || show.TrialCount != len(show.Trials) || hist.Studies[0].Trials != show.TrialCount {
		t.Errorf("history %+v, show trial_count %d with %d trials", hist.Studies, show.TrialCount, len(show.Trials))
	}
	if show.Launch["timeout_s"] != 90.0 || show.Launch["timeout"] != nil {
		t.Errorf("launch %v: want timeout_s 90 and no nanoseconds", show.Launch)
	}
}

// TestPreflightStoresNothing: a launch that cannot start (no benchmark,
// no mpirun, a misspelt profile) is refused before the database opens.
func TestPreflightStoresNothing(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"search", "--band", "1M-2M", "--bench", "/nonexistent/all_reduce_perf"}, 3, "/nonexistent/all_reduce_perf does not exist: there is no directory /nonexistent"},
		{[]string{"sweep", "--bench", "/nonexistent/all_reduce_perf"}, 3, "benchmark not found"},
		{[]string{"gate", "--at", "1M:9", "--bench", "/nonexistent/all_reduce_perf"}, 3, "benchmark not found"},
		{[]string{"search", "--band", "1M-2M", "--launcher", "mpirun", "--mpirun", "/nonexistent/mpirun"}, 3, "/nonexistent/mpirun does not exist"},
		{[]string{"search", "--band", "1M-2M", "--launcher", "mpirun", "--mpirun", "no-such-mpirun"}, 3, "no-such-mpirun is not on PATH"},
		{[]string{"search", "--band", "1M-2M", "--sim", "spark5"}, 2, "spark2"},
	} {
		_, stderr, code := runCLI(t, db, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created the database", tc.args)
		}
	}
}

// TestNameLabelRmRename: a study named and labelled at creation, renamed,
// and removed; the others stay.
func TestNameLabelRmRename(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "sweep", "--sim", "flat", "--min", "1M", "--max", "2M", "--name", "lane-a", "--label", "lane=spark4", "--label", "ticket=OPS-12")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, stderr, code = runCLI(t, db, "sweep", "--sim", "flat", "--min", "1M", "--max", "2M"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	out, _, _ := runCLI(t, db, "show", "lane-a")
	if !strings.Contains(out, "lane=spark4 ticket=OPS-12") {
		t.Errorf("show does not list the labels:\n%s", out)
	}
	var show struct {
		Study  string            `json:"study"`
		Labels map[string]string `json:"labels"`
	}
	out, _, _ = runCLI(t, db, "show", "lane-a", "--json")
	decodeOneJSON(t, out, &show)
	if show.Study != "lane-a" || show.Labels["ticket"] != "OPS-12" {
		t.Errorf("show --json: %+v", show)
	}
	for _, bad := range [][]string{
		{"sweep", "--sim", "flat", "--name", "lane-a"},
		{"sweep", "--sim", "flat", "--name", "12"},
		{"sweep", "--sim", "flat", "--label", "novalue"},
		{"rename", "lane-a", "s2-sweep"},
		{"rename", "nosuch", "x"},
		{"rename", "lane-a", "12"},
		{"rm", "nosuch"},
		{"rm"},
	} {
		if _, stderr, code := runCLI(t, db, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, code, stderr)
		}
	}
	var labelled struct {
		Studies []struct {
			Study string `json:"study"`
		} `json:"studies"`
	}
	out, _, _ = runCLI(t, db, "history", "--label", "lane=spark4", "--json")
	decodeOneJSON(t, out, &labelled)
	if len(labelled.Studies) != 1 || labelled.Studies[0].Study != "lane-a" {
		t.Errorf("history --label lane=spark4: %+v", labelled.Studies)
	}
	if out, stderr, code := runCLI(t, db, "rename", "lane-a", "lane-b"); code != 0 || !strings.Contains(out, "renamed lane-a to lane-b") {
		t.Fatalf("rename: exit %d %s %s", code, out, stderr)
	}
	if out, stderr, code := runCLI(t, db, "rm", "lane-b"); code != 0 || !strings.Contains(out, "removed lane-b") {
		t.Fatalf("rm: exit %d %s %s", code, out, stderr)
	}
	var hist struct {
		Studies []struct {
			Study string `json:"study"`
		} `json:"studies"`
	}
	out, _, _ = runCLI(t, db, "history", "--json")
	decodeOneJSON(t, out, &hist)
	if len(hist.Studies) != 1 || hist.Studies[0].Study != "s2-sweep" {
		t.Errorf("history after rm: %+v", hist.Studies)
	}
}

// TestSearchBaselineEnv: a study against the lane's current settings
// records them, states the recommendation as a change to them, and says
// how NCCL's defaults did; conflicting or misplaced settings are refused.
func TestSearchBaselineEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	file := filepath.Join(dir, "lane.env")
	if err := os.WriteFile(file, []byte("# today's lane\nexport NCCL_ALGO=Tree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "3",
		"--baseline-env-file", file, "--baseline-env", "NCCL_MAX_NCHANNELS=2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"against your baseline (NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=2)",
		"change from your baseline: NCCL_ALGO Tree → ",
		"NCCL defaults: ", "your baseline while exploring",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the result lacks %q:\n%s", want, out)
		}
	}
	var show struct {
		BaselineEnv map[string]string `json:"baseline_env"`
		Trials      []struct {
			Env  map[string]string `json:"env"`
			Role string            `json:"role"`
		} `json:"trials"`
	}
	out, _, _ = runCLI(t, db, "show", "s1", "--json")
	decodeOneJSON(t, out, &show)
	if show.BaselineEnv["NCCL_MAX_NCHANNELS"] != "2" {
		t.Errorf("show --json baseline_env %v", show.BaselineEnv)
	}
	if len(show.Trials) == 0 || show.Trials[0].Env["NCCL_ALGO"] != "Tree" || show.Trials[0].Role != "baseline" {
		t.Errorf("trial 0 is not the baseline: %+v", show.Trials[:1])
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--baseline-env", "NCCL_IB_HCA=mlx5_0"}, "--base-env"},
		{[]string{"--baseline-env", "NCCL_PROTO=^LL128", "--base-env", "NCCL_PROTO=^LL128"}, "both --baseline-env and --base-env"},
		{[]string{"--baseline-env", "NCCL_PORTO=LL"}, "NCCL_PROTO"},
	} {
		args := append([]string{"search", "--sim", "spark4", "--band", "512K-4M"}, tc.args...)
		if _, stderr, code := runCLI(t, db, args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestVerifyBaselineAndCompare: verify measures against --baseline-env
// (and drops the search's claim, made against another baseline); compare
// measures two configs interleaved, and two stored studies side by side.
func TestVerifyBaselineAndCompare(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--name", "tuned"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	var v struct {
		BaselineEnv map[string]string `json:"baseline_env"`
		Claimed     *runresult.Claim  `json:"claimed"`
		Speedup     float64           `json:"speedup"`
	}
	out, stderr, code := runCLI(t, db, "verify", "tuned", "--sim", "spark4", "--launches", "6", "--baseline-env", "NCCL_ALGO=Tree", "--json")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, stderr)
	}
	decodeOneJSON(t, out, &v)
	if v.BaselineEnv["NCCL_ALGO"] != "Tree" || v.Claimed != nil || v.Speedup <= 1 {
		t.Errorf("verify against a baseline: %+v", v)
	}
	out, stderr, code = runCLI(t, db, "compare", "--sim", "spark4", "--band", "512K-4M", "--launches", "6",
		"--env-a", "NCCL_ALGO=Tree", "--env-b", "NCCL_PROTO=^LL128", "--env-b", "NCCL_MAX_NCHANNELS=8", "--name", "ab")
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"compare ab: B NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128 against A NCCL_ALGO=Tree", "size  A µs (95% CI)", "B is "} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	out, stderr, code = runCLI(t, db, "compare", "tuned", "ab")
	if code != 0 {
		t.Fatalf("compare studies: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"A: tuned trial", "B: ab trial 1, NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128, 6 launches", "not interleaved", "B vs A", "over these sizes: B is ×"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare of studies lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range [][]string{
		{"compare", "tuned"},
		{"compare", "tuned", "ab", "--band", "1M-2M"},
		{"compare", "--sim", "spark4", "--env-b", "NCCL_PROTO=LL"},
		{"compare", "--sim", "spark4", "--band", "1M-2M", "--env-a", "NCCL_PROTO=LL", "--env-b", "NCCL_PROTO=LL"},
	} {
		if _, stderr, code := runCLI(t, db, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, code, stderr)
		}
	}
}

// TestExportComposeAndIndent: the compose format and --indent reach the
// user through the CLI; --indent is refused where nothing is indented.
func TestExportComposeAndIndent(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	out, stderr, code := runCLI(t, db, "export", "s1", "--format", "compose")
	if code != 0 || !strings.Contains(out, "\nenvironment:\n  NCCL_") {
		t.Errorf("compose: exit %d %s\n%s", code, stderr, out)
	}
	out, _, code = runCLI(t, db, "export", "s1", "--format", "k8s", "--indent", "8")
	if code != 0 || !strings.Contains(out, "\n        env:\n          - name: NCCL_") {
		t.Errorf("k8s --indent 8: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI(t, db, "export", "s1", "--format", "env", "--indent", "4"); code != 2 {
		t.Errorf("--indent with env: exit %d, want 2", code)
	}
}

// TestIndentDocumentedFromTheTest: export --help and the recipe catalogue
// (docs/EXPORT.md, which README sends the reader to) give each --indent
// that export's placement test pastes and parses, and README no other
// number for a Deployment.
func TestIndentDocumentedFromTheTest(t *testing.T) {
	t.Parallel()
	help, _, _ := runCLI(t, filepath.Join(t.TempDir(), "db"), "export", "--help")
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "EXPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	top, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme = append(readme, top...)
	for _, f := range []export.Format{export.FormatK8s, export.FormatCompose} {
		for _, l := range export.IndentGuide(f) {
			if !strings.Contains(help, l) {
				t.Errorf("export --help lacks %q", l)
			}
			if !strings.Contains(string(readme), "- "+l+"\n") {
				t.Errorf("docs/EXPORT.md lacks %q", l)
			}
		}
	}
	for _, stale := range []string{"--indent 6` writes it ready for a Deployment", "--indent 6 for a Deployment", "6: under a Deployment"} {
		if strings.Contains(string(readme)+help, stale) {
			t.Errorf("still documented: %q", stale)
		}
	}
}

// TestShowCSV: show --format csv is one row per trial, --curves one row
// per launch and size, both readable by a CSV reader.
func TestShowCSV(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "1M-2M", "--budget", "16", "--confirm", "4"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	var show struct {
		TrialCount int `json:"trial_count"`
	}
	out, _, _ := runCLI(t, db, "show", "s1", "--json")
	decodeOneJSON(t, out, &show)
	out, _, code := runCLI(t, db, "show", "s1", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != show.TrialCount+1 || rows[0][0] != "study" || rows[1][1] != "0" || rows[1][2] != "baseline" {
		t.Fatalf("trials CSV (exit %d, %v):\n%s", code, err, out)
	}
	out, _, code = runCLI(t, db, "show", "s1", "--format", "csv", "--curves")
	rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) < 10 || rows[0][6] != "bytes" {
		t.Fatalf("curves CSV (exit %d, %v):\n%s", code, err, out)
	}
	for _, r := range rows[1:] {
		if r[6] != "1048576" && r[6] != "2097152" && r[6] != "4194304" {
			t.Errorf("a size outside the band and its guard: %v", r)
		}
		if r[4] == "warmup" {
			t.Errorf("the warm-up is in the curves: %v", r)
		}
	}
	for _, bad := range [][]string{{"show", "s1", "--format", "xml"}, {"show", "s1", "--curves"}, {"show", "s1", "--json", "--format", "csv"}} {
		if _, _, code := runCLI(t, db, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestSearchBaselineIsTheBest: when the lane already runs the best plan
// (spark4's hand fix), the candidate whose no-op knobs drop away is the
// baseline itself; the study must never confirm the baseline against
// itself (one set of launches compared with itself reads as p = 1, ×1.00
// and looks like a measurement). It goes on to the next distinct config.
func TestSearchBaselineIsTheBest(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "1",
		"--baseline-env", "NCCL_PROTO=^LL128", "--baseline-env", "NCCL_MAX_NCHANNELS=8")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var show struct {
		Recommendation struct {
			Ending    string `json:"ending"`
			Candidate uint64 `json:"candidate_trial_id"`
		} `json:"recommendation"`
		Trials []struct {
			ID   uint64 `json:"id"`
			Role string `json:"role"`
		} `json:"trials"`
	}
	out, _, _ := runCLI(t, db, "show", "s1", "--json")
	decodeOneJSON(t, out, &show)
	rec := show.Recommendation
	if rec.Ending == "same-as-baseline" {
		return // the honest answer when nothing else is left to confirm
	}
	for _, tr := range show.Trials {
		if tr.Role == "baseline" && tr.ID == rec.Candidate {
			t.Fatalf("the baseline (trial id %d) was confirmed against itself: ending %q", tr.ID, rec.Ending)
		}
	}
	if rec.Candidate == 0 {
		t.Fatalf("no candidate recorded and ending %q", rec.Ending)
	}
}

// TestExportHintWorks: the export command a finished search prints runs
// as printed — with --db when the study is not in the default database —
// and exports the study (run here in process, as nccltune).
func TestExportHintWorks(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lane a.db")
	out, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var hint string
	for _, l := range strings.Split(out, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(l), "export it: "); ok {
			hint = h
		}
	}
	want := "nccltune export s1-512K-4M --format env --db '" + db + "'"
	if hint != want {
		t.Fatalf("hint %q, want %q\n%s", hint, want, out)
	}
	args := []string{"export", "s1-512K-4M", "--format", "env", "--db", db} // the hint, as a shell splits it
	var stdout, errOut bytes.Buffer
	if code := runMain(t.Context(), args, &stdout, &errOut); code != 0 || !strings.Contains(stdout.String(), "NCCL_") {
		t.Errorf("the hint fails: exit %d\n%s%s", code, stdout.String(), errOut.String())
	}
}
