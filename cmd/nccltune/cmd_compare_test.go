package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
)

// compare --part guards every other op by default, as search does; an op
// whose *_perf is missing beside the benchmark is left out, and compare
// says so, each op with why, in its text, its JSON and the stored study
// (show), as search does, rather than dropping it silently.
func TestCompareNamesSkippedGuardOps(t *testing.T) {
	saved, err := os.ReadFile(filepath.Join("..", "..", "benchfmt", "testdata", "text", "sim_spark4.txt"))
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
