package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tunerRows are a tuner CSV's rows (not its comments), in order, each
// split into its fields.
func tunerRows(csv string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(csv, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Split(line, ","))
		}
	}
	return rows
}

// firstRow is the row the example plugin applies to a call of coll at x
// bytes: the first that matches (plugin.c pluginGetCollInfo returns on
// the first match).
func firstRow(t *testing.T, rows [][]string, coll string, x uint64) []string {
	t.Helper()
	for _, r := range rows {
		lo, err1 := strconv.ParseUint(r[1], 10, 64)
		hi, err2 := strconv.ParseUint(r[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %v: sizes do not read", r)
		}
		if r[0] == coll && x >= lo && x <= hi {
			return r
		}
	}
	t.Fatalf("no %s row matches %d bytes", coll, x)
	return nil
}

// decodeConfig is the workload config nccltune workload writes in dir
// from the real decode capture, and its text.
func decodeConfig(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	cfg := filepath.Join(dir, "decode.yaml")
	if _, stderr, code := runCLI(t, filepath.Join(dir, "db0"), "workload", "../../internal/benchfmt/testdata/workload/torch-decode", "--out", cfg); code != 0 {
		t.Fatalf("workload: exit %d: %s", code, stderr)
	}
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, text
}

// Issue 41: a workload study's tuner CSV gave the 81920-byte all-reduces
// of the real decode process the choice nccl-tests' NCCL made at 64K
// (Ring/LL), where the process's own NCCL ran them Ring/Simple. From the
// workload config of that capture (its chose:), a study whose
// recommendation keeps NCCL's defaults exports an exact row at each
// called size with the log's choice, matched before the bin's row; the
// same study from a config without chose: exports the rows it did before.
func TestTunerCSVKeepsTheLoggedChoice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, text := decodeConfig(t, dir)
	if !strings.Contains(string(text), `"all_reduce:81920:ring:simple"`) {
		t.Fatalf("the config does not keep the log's choice at 81920 bytes:\n%s", text)
	}
	var without []string
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "chose:") {
			without = append(without, line)
		}
	}
	cfgWithout := filepath.Join(dir, "decode-without.yaml")
	if err := os.WriteFile(cfgWithout, []byte(strings.Join(without, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	export := func(db, cfg string) string {
		t.Helper()
		if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg, "--budget", "55", "--seed", "3"); code != 0 {
			t.Fatalf("search: exit %d: %s", code, stderr)
		}
		csv, stderr, code := runCLI(t, db, "export", "1", "--format", "nccl-tuner")
		if code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr)
		}
		return csv
	}
	with := export(filepath.Join(dir, "db1"), cfg)
	rows := tunerRows(with)
	// The study keeps NCCL's defaults: no row fixes a channel count.
	for _, r := range rows {
		if r[5] != "0" {
			t.Fatalf("row %v sets channels: this test needs a study that keeps the defaults\n%s", r, with)
		}
	}
	got := firstRow(t, rows, "allreduce", 81920)
	if got[1] != "81920" || got[2] != "81920" || got[3] != "ring" || got[4] != "simple" {
		t.Errorf("the plugin applies %v to the 81920-byte all-reduces, want the exact row 81920,81920,ring,simple,0\n%s", got, with)
	}
	for _, c := range []struct {
		coll        string
		x           uint64
		algo, proto string
	}{{"allreduce", 10240, "ring", "ll"}, {"allreduce", 2048000, "ring", "simple"}, {"allgather", 2048000, "ring", "simple"}, {"broadcast", 1048576, "ring", "simple"}} {
		if r := firstRow(t, rows, c.coll, c.x); r[1] != r[2] || r[3] != c.algo || r[4] != c.proto {
			t.Errorf("%s at %d: the plugin applies %v, want the exact row with %s/%s", c.coll, c.x, r, c.algo, c.proto)
		}
	}
	if !strings.Contains(with, "4, 10240, 81920, 327680, 512000, 2048000 bytes: the process's own NCCL choice at that exact size") {
		t.Errorf("the header does not name the sizes that carry the log's choice:\n%s", with)
	}

	plain := tunerRows(export(filepath.Join(dir, "db2"), cfgWithout))
	var binRows [][]string
	for _, r := range rows {
		if r[1] != r[2] {
			binRows = append(binRows, r)
		}
	}
	if !slices.EqualFunc(plain, binRows, slices.Equal) {
		t.Errorf("without chose: the rows are\n%v\nwant the bins' rows the study with chose: wrote\n%v", plain, binRows)
	}
	if len(binRows) == len(rows) {
		t.Errorf("no exact row was written:\n%v", rows)
	}
}

// Two studies of one communicator shape whose logs recorded different
// choices at the same called size cannot both be kept by one CSV (the
// plugin applies the first matching row): the export refuses, naming
// both studies and both choices, where it once kept the first study's
// without a word.
func TestTunerCSVRefusesConflictingLoggedChoices(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, chose := range []string{"all_reduce:81920:ring:simple", "all_reduce:81920:ring:ll"} {
		if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:2048000:10",
			"--chose", chose, "--budget", "30", "--seed", "3"); code != 0 {
			t.Fatalf("search --chose %s: exit %d: %s", chose, code, stderr)
		}
	}
	csv, stderr, code := runCLI(t, db, "export", "1", "2", "--format", "nccl-tuner")
	if code == 0 {
		t.Fatalf("export of two studies whose logs disagree at 81920 bytes succeeded:\n%s", csv)
	}
	for _, want := range []string{"81920", "ring/simple", "ring/ll", "s1-", "s2-"} {
		if !strings.Contains(strings.ToLower(stderr), want) {
			t.Errorf("the refusal does not name %q: %s", want, stderr)
		}
	}
	// The same choice in both is no conflict.
	db2 := filepath.Join(t.TempDir(), "db")
	for range 2 {
		if _, stderr, code := runCLI(t, db2, "search", "--sim", "spark4", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:2048000:10",
			"--chose", "all_reduce:81920:ring:simple", "--budget", "30", "--seed", "3"); code != 0 {
			t.Fatalf("search: exit %d: %s", code, stderr)
		}
	}
	if _, stderr, code := runCLI(t, db2, "export", "1", "2", "--format", "nccl-tuner"); code != 0 {
		t.Errorf("export of two studies whose logs agree: exit %d: %s", code, stderr)
	}
}

// A start-up call taken out of the study as the refusal advises (its
// calls: entry removed, its chose: entry kept) stays covered by the
// tuner CSV: an exact row at NCCL's own logged choice, so the process's
// broadcast does not fall to the plugin's one channel ("No matching
// config found", as on the real loopback with the trimmed workload), and
// the header says so. Without the chose: entry the broadcast has no row.
func TestTunerCSVCoversACallTakenOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, text := decodeConfig(t, dir)
	trim := func(name string, chose bool) string {
		var lines []string
		for _, line := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(line, "calls:") || !chose && strings.HasPrefix(line, "chose:") {
				line = strings.Replace(line, `, "broadcast:1048576:1"`, "", 1)
				line = strings.Replace(line, `, "broadcast:1048576:ring:simple"`, "", 1)
			}
			lines = append(lines, line)
		}
		out := strings.Join(lines, "\n")
		if strings.Contains(out, `"broadcast:1048576:1"`) || chose != strings.Contains(out, `"broadcast:1048576:ring:simple"`) {
			t.Fatalf("the capture's config no longer holds the start-up broadcast as this test expects:\n%s", text)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var searched string
	export := func(db, cfg string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg, "--budget", "55", "--seed", "3")
		if code != 0 {
			t.Fatalf("search --config %s: exit %d: %s", cfg, code, stderr)
		}
		searched = stdout
		csv, stderr, code := runCLI(t, db, "export", "1", "--format", "nccl-tuner")
		if code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr)
		}
		return csv
	}
	csv := export(filepath.Join(dir, "db1"), trim("taken-out.yaml", true))
	// The search says, as it starts, that the call is out of the study and
	// what each export does with it.
	if !strings.Contains(searched, "not guarded: broadcast at 1048576 bytes, in chose: but not in calls:") {
		t.Errorf("search does not name the broadcast taken out:\n%s", searched)
	}
	if r := firstRow(t, tunerRows(csv), "broadcast", 1048576); r[1] != "1048576" || r[2] != "1048576" || r[3] != "ring" || r[4] != "simple" || r[5] != "0" {
		t.Errorf("the plugin applies %v to the start-up broadcast, want the exact row 1048576,1048576,ring,simple,0 (NCCL's own choice)\n%s", r, csv)
	}
	if !strings.Contains(csv, "broadcast on 4 ranks on 4 nodes: no study measured it; 1048576 bytes") || !strings.Contains(csv, "any other broadcast size matches no row and gets ONE channel") ||
		!strings.Contains(strings.ReplaceAll(csv, "\n#   ", " "), "broadcast on 4 ranks on 4 nodes (only the sizes its log shows: every other size of it gets ONE channel)") {
		t.Errorf("the header does not say what the broadcast rows are:\n%s", csv)
	}
	shown, stderr, code := runCLI(t, filepath.Join(dir, "db1"), "show", "1", "--json")
	var doc struct {
		TakenOut []string `json:"taken_out"`
	}
	if err := json.Unmarshal([]byte(shown), &doc); code != 0 || err != nil || !slices.Equal(doc.TakenOut, []string{"broadcast:1048576:ring:simple"}) {
		t.Errorf("show --json lists %q taken out (exit %d, %v, %s), want the broadcast", doc.TakenOut, code, err, stderr)
	}
	page := filepath.Join(dir, "report.html")
	if _, stderr, code := runCLI(t, filepath.Join(dir, "db1"), "report", "1", "--out", page); code != 0 {
		t.Errorf("report: exit %d: %s", code, stderr)
	} else if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "not guarded: broadcast at 1048576 bytes, in chose: but not in calls:") {
		t.Errorf("the report does not name the broadcast taken out (%v)", err)
	}
	// The env export changes the call too, unmeasured: its header says so.
	env, stderr, code := runCLI(t, filepath.Join(dir, "db1"), "export", "1", "--format", "env")
	if code != 0 || !strings.Contains(env, "# not guarded: broadcast at 1048576 bytes, in chose: but not in calls:") {
		t.Errorf("the env export's header does not name the broadcast taken out (exit %d, %s):\n%s", code, stderr, env)
	}
	plain := export(filepath.Join(dir, "db2"), trim("dropped.yaml", false))
	for _, r := range tunerRows(plain) {
		if r[0] == "broadcast" {
			t.Errorf("without the chose: entry the CSV has a broadcast row %v", r)
		}
	}
}
