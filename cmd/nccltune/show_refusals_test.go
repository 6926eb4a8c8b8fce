package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowSaysRefusalsSoFar: a study interrupted after a refusal, while
// it confirms another candidate, stores its refusals so far
// (store.Study.Refusals); show says them in the words search says a
// refusal ("refused earlier …"), and show --json holds them, instead of
// showing only the new candidate under confirmation.
func TestShowSaysRefusalsSoFar(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first candidate confirmed (seed 3) is refused for the alltoall
	// call; the search then confirms another: interrupt at its first
	// confirmation launch.
	first := ""
	_, stderr, code := runWatched(ctx, db, func(line string) {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "launch" || f[2] != "confirm" || f[4] == "0" {
			return
		}
		switch {
		case first == "":
			first = f[4]
		case f[4] != first:
			cancel()
		}
	}, "search", "--sim", "h200-loopback", "--np", "4", "--seed", "3", "--name", "w",
		"--calls", "all_reduce:10240:240", "--calls", "all_reduce:327680:240", "--calls", "alltoall:8388608:4")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want the search interrupted at the second candidate's confirmation (the seed no longer refuses one?):\n%s", code, stderr)
	}
	show, stderr, code := runCLI(t, db, "show", "w")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(show, "refused earlier (its speedup ") || !strings.Contains(show, "significantly slower for its call alltoall") {
		t.Errorf("show of a study interrupted after a refusal does not say the refusal:\n%s", show)
	}
	out, stderr, code := runCLI(t, db, "show", "w", "--json")
	if code != 0 {
		t.Fatalf("show --json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Recommendation any `json:"recommendation"`
		Refusals       []struct {
			TrialID uint64            `json:"trial_id"`
			Env     map[string]string `json:"env"`
			Reason  string            `json:"reason"`
		} `json:"refusals_so_far"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Recommendation != nil {
		t.Fatalf("the interrupted study has a recommendation: %v", doc.Recommendation)
	}
	if len(doc.Refusals) != 1 || doc.Refusals[0].TrialID == 0 || len(doc.Refusals[0].Env) == 0 || !strings.Contains(doc.Refusals[0].Reason, "alltoall") {
		t.Errorf("show --json refusals_so_far = %+v, want the one refusal of the alltoall call", doc.Refusals)
	}
}
