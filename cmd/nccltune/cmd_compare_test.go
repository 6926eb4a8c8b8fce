package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/search"
)

// compare --part guards every other op by default, as search does; an op
// whose *_perf is missing beside the benchmark is left out, and compare
// says so, each op with why, in its text, its JSON and the stored study
// (show), as search does, rather than dropping it silently.
func TestCompareNamesSkippedGuardOps(t *testing.T) {
	t.Parallel()
	saved, err := os.ReadFile(filepath.Join("..", "..", "internal", "benchfmt", "testdata", "text", "sim_spark4.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The same output every launch, not marked simulated: A and B tie, so
	// no guarded op is launched and no *_perf but all_reduce_perf runs.
	var kept []string
	for _, line := range strings.Split(string(saved), "\n") {
		if !strings.Contains(line, "SIMULATED") {
			kept = append(kept, line)
		}
	}
	out := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(out, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	bench := fakeBench(t, out)
	// broadcast_perf is there, every other op's is not.
	if err := os.Symlink(bench, filepath.Join(filepath.Dir(bench), "broadcast_perf")); err != nil {
		t.Fatal(err)
	}
	var missing []nccl.Op
	for _, op := range search.DefaultGuardOps(nccl.Workload{{Op: nccl.AllReduce}}) {
		if op != nccl.Broadcast {
			missing = append(missing, op)
		}
	}
	db := filepath.Join(t.TempDir(), "db")
	args := []string{"compare", "--part", "all_reduce:512K-4M", "--launcher", "local", "--bench", bench, "--launches", "4",
		"--env-b", "NCCL_PROTO=Simple"}
	checkSkipped := func(what string, skipped []string) {
		t.Helper()
		if len(skipped) != len(missing) {
			t.Fatalf("%s: guard_ops_skipped %q, want one for each of %v", what, skipped, missing)
		}
		for i, op := range missing {
			if !strings.HasPrefix(skipped[i], string(op)+": ") || !strings.Contains(skipped[i], string(op)+"_perf") {
				t.Errorf("%s: skipped %q does not name %s and its missing %s_perf", what, skipped[i], op, op)
			}
		}
	}

	stdout, stderr, code := runCLI(t, db, append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("compare --json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Study   string    `json:"study"`
		Skipped *[]string `json:"guard_ops_skipped"`
	}
	decodeOneJSON(t, stdout, &doc)
	if !strings.Contains(stderr, "not guarded: alltoall: ") {
		t.Errorf("compare --json: stderr does not say alltoall is not guarded as the comparison starts:\n%s", stderr)
	}
	if doc.Skipped == nil {
		t.Fatalf("compare --json has no guard_ops_skipped:\n%s", stdout)
	}
	checkSkipped("compare --json", *doc.Skipped)

	stdout, stderr, code = runCLI(t, db, "show", doc.Study, "--json")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	var shown struct {
		Skipped []string `json:"guard_ops_skipped"`
	}
	decodeOneJSON(t, stdout, &shown)
	checkSkipped("show --json", shown.Skipped)

	stdout, stderr, code = runCLI(t, db, args...)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, op := range missing {
		if !strings.Contains(stdout, "not guarded: "+string(op)+": ") {
			t.Errorf("compare's text does not say %s is not guarded:\n%s", op, stdout)
		}
	}
	if strings.Contains(stdout, "not guarded: broadcast") || !slices.Contains(missing, nccl.AllToAll) {
		t.Errorf("broadcast, whose broadcast_perf is there, is named as not guarded (or the case is wrong):\n%s", stdout)
	}
}

// compare STUDY-A STUDY-B of two stored workloads compares every op both
// measured, each over its own launches: the text has one table and band
// line per shared op, headed by the op, and --json one entry of "ops" per
// shared op (the top-level fields the first op's); an op only one
// measured is named in a warning; a workload and a study that share no
// op are refused, naming each side's ops and the fresh form.
func TestCompareStoredWorkloads(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs simulated searches")
	}
	db := filepath.Join(t.TempDir(), "db")
	for _, args := range [][]string{
		{"--name", "wa", "--seed", "1", "--budget", "40", "--part", "all_reduce:512K-4M:0.5", "--part", "alltoall:512K-8M:0.5"},
		{"--name", "wb", "--seed", "2", "--budget", "60", "--part", "alltoall:1M-8M", "--part", "all_reduce:512K-4M", "--part", "all_gather:1M-4M"},
		{"--name", "bc", "--seed", "3", "--budget", "20", "--op", "broadcast", "--band", "1M-4M"},
	} {
		if _, stderr, code := runCLI(t, db, append([]string{"search", "--sim", "spark4", "--guard-ops", "none"}, args...)...); code != exitOK {
			t.Fatalf("search %v: exit %d\n%s", args, code, stderr)
		}
	}
	shared := []nccl.Op{nccl.AllReduce, nccl.AllToAll}
	onlyB := "wb measured all_gather, which wa did not (it measured all_reduce, alltoall): not compared"

	stdout, stderr, code := runCLI(t, db, "compare", "wa", "wb", "--json")
	if code != exitOK {
		t.Fatalf("compare --json: exit %d\n%s", code, stderr)
	}
	type arm struct {
		Study    string `json:"study"`
		Launches int    `json:"launches"`
		Workload string `json:"workload"`
	}
	type row struct {
		Bytes int64 `json:"bytes"`
	}
	type opDoc struct {
		Op      string   `json:"op"`
		A       arm      `json:"a"`
		B       arm      `json:"b"`
		Rows    []row    `json:"rows"`
		Speedup *float64 `json:"speedup"`
	}
	var doc struct {
		opDoc
		Ops      []opDoc  `json:"ops"`
		Warnings []string `json:"warnings"`
	}
	decodeOneJSON(t, stdout, &doc)
	if len(doc.Ops) != len(shared) {
		t.Fatalf("--json has %d ops, want %v:\n%s", len(doc.Ops), shared, stdout)
	}
	for i, op := range shared {
		o := doc.Ops[i]
		if o.Op != string(op) || len(o.Rows) == 0 || o.Speedup == nil || o.A.Study != "wa" || o.A.Launches == 0 || o.B.Launches == 0 {
			t.Errorf("ops[%d] = %+v, want %s with its rows, speedup and each arm's launches of it", i, o, op)
		}
	}
	// alltoall's common sizes are its own (1M and up, as wb measured it),
	// not all_reduce's.
	if r := doc.Ops[1].Rows; r[0].Bytes != nccl.MiB {
		t.Errorf("alltoall's rows start at %d bytes, want 1M (the sizes both measured of alltoall)", r[0].Bytes)
	}
	if doc.Op != "all_reduce" || len(doc.Rows) != len(doc.Ops[0].Rows) || doc.B.Study != "wb" || doc.B.Workload == "" {
		t.Errorf("the top-level fields are not the first op's: op %q, %d rows, b %+v", doc.Op, len(doc.Rows), doc.B)
	}
	if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.HasPrefix(w, onlyB) }) {
		t.Errorf("--json's warnings lack %q: %q", onlyB, doc.Warnings)
	}

	stdout, stderr, code = runCLI(t, db, "compare", "wa", "wb")
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"A: wa trial ", "workload all_reduce:512K-4M:0.5 alltoall:512K-8M:0.5  [SIMULATED]", "warning: " + onlyB} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare's text lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "first op") {
		t.Errorf("compare's text still says it compares the first op only:\n%s", stdout)
	}
	// One table per shared op, in A's parts' order, each with its band line.
	at := 0
	for i, op := range shared {
		head := fmt.Sprintf("\n%s: A %d launches, B %d launches\nsize  A µs", op, doc.Ops[i].A.Launches, doc.Ops[i].B.Launches)
		j := strings.Index(stdout[at:], head)
		if j < 0 {
			t.Fatalf("compare's text has no table headed %q after the previous op's:\n%s", head, stdout)
		}
		at += j + len(head)
		if !strings.Contains(stdout[at:], "over these sizes: B is ") {
			t.Errorf("%s's table has no band line:\n%s", op, stdout)
		}
	}
	if n := strings.Count(stdout, "over these sizes:"); n != len(shared) {
		t.Errorf("%d band lines, want one per shared op (%d):\n%s", n, len(shared), stdout)
	}

	_, stderr, code = runCLI(t, db, "compare", "wa", "bc")
	if code != exitUsage || !strings.Contains(stderr, "studies wa (all_reduce, alltoall) and bc (broadcast) measured no op in common") ||
		!strings.Contains(stderr, "compare --part OP:BAND") {
		t.Errorf("a workload and a study of another op: exit %d, %q; want exit %d naming each side's ops and compare --part", code, stderr, exitUsage)
	}
}
