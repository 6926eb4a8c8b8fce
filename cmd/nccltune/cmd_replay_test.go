package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReplayEndToEnd records a small fabric the way the real recording is
// made (one `sweep --no-warmup` study per launch, in interleaved rounds,
// and one `doctor --json --env` per config), builds a replay file from
// it, and runs sweeps and a doctor on the replay: everything says
// simulated, in the output and in the store.
func TestReplayEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.db")
	launch := []string{"--sim", "h200-loopback", "--min", "512K", "--max", "8M", "--iters", "5"}
	configs := [][]string{nil, {"--env", "NCCL_MAX_NCHANNELS=1"}}
	seed := 0
	for round := 0; round < 3; round++ {
		for _, env := range configs {
			seed++
			args := append(append([]string{"sweep", "--no-warmup", "--seed", strconv.Itoa(seed)}, env...), launch...)
			if _, errOut, code := runCLI(t, rec, args...); code != 0 {
				t.Fatalf("recording %v: exit %d: %s", args, code, errOut)
			}
		}
	}
	for i, env := range configs {
		out, errOut, code := runCLI(t, filepath.Join(dir, "unused.db"), append(append([]string{"doctor", "--json"}, env...), launch[:6]...)...)
		if code != 0 {
			t.Fatalf("doctor: exit %d: %s", code, errOut)
		}
		os.WriteFile(filepath.Join(dir, "doctor-"+strconv.Itoa(i)+".json"), []byte(out), 0o644)
	}
	// Its own store, an input beside it, and their lock are never the
	// output (was: replay build st.db --out st.db overwrote the store).
	for _, out := range []string{rec, rec + ".lock", filepath.Join(dir, "doctor-0.json")} {
		before, _ := os.ReadFile(out)
		if _, errOut, code := runCLI(t, rec, "replay", "build", rec, "--out", out); code != exitUsage || !strings.Contains(errOut, "never writes over a file it reads or holds") {
			t.Errorf("replay build --out %s: exit %d: %s", out, code, errOut)
		}
		if after, _ := os.ReadFile(out); string(after) != string(before) {
			t.Errorf("replay build --out %s changed it", out)
		}
	}
	file := filepath.Join(dir, "loop.json")
	if _, errOut, code := runCLI(t, rec, "replay", "build", rec, "--out", file, "--name", "loop"); code != 0 {
		t.Fatalf("replay build: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, rec, "replay", "show", file)
	if code != 0 || !strings.Contains(out, "SIMULATED") || !strings.Contains(out, "NCCL_MAX_NCHANNELS=1") || !strings.Contains(out, "3*") {
		t.Errorf("replay show: exit %d\n%s%s", code, out, errOut)
	}

	db := filepath.Join(dir, "replayed.db")
	for _, sim := range []string{"replay:" + file, rec} { // a replay file, and a store recognised by its magic
		out, errOut, code = runCLI(t, db, "sweep", "--json", "--sim", sim, "--min", "1M", "--max", "2M", "--repeats", "2", "--env", "NCCL_MAX_NCHANNELS=1")
		if code != 0 {
			t.Fatalf("sweep --sim %s: exit %d: %s", sim, code, errOut)
		}
		var sweep struct {
			Simulated  bool   `json:"simulated"`
			SimProfile string `json:"sim_profile"`
		}
		if err := json.Unmarshal([]byte(out), &sweep); err != nil || !sweep.Simulated || !strings.HasPrefix(sweep.SimProfile, "replay:") {
			t.Errorf("sweep --sim %s: %+v %v", sim, sweep, err)
		}
	}
	out, _, _ = runCLI(t, db, "history", "--json")
	var hist struct {
		Studies []struct {
			Simulated  bool   `json:"simulated"`
			SimProfile string `json:"sim_profile"`
		} `json:"studies"`
	}
	if err := json.Unmarshal([]byte(out), &hist); err != nil || len(hist.Studies) != 2 {
		t.Fatalf("history: %v\n%s", err, out)
	}
	for _, s := range hist.Studies {
		if !s.Simulated || !strings.HasPrefix(s.SimProfile, "replay:") {
			t.Errorf("a replayed study is stored as %+v, want simulated, profile replay:…", s)
		}
	}

	// A config the recording cannot speak for fails with that reason.
	_, errOut, code = runCLI(t, db, "sweep", "--sim", "replay:"+file, "--no-warmup", "--env", "NCCL_ALGO=Tree")
	if code != exitFabric || !strings.Contains(errOut, "cannot speak for NCCL_ALGO=Tree") {
		t.Errorf("an unrecorded config: exit %d, %s", code, errOut)
	}
	// A bad replay is a usage error before anything runs.
	_, errOut, code = runCLI(t, db, "sweep", "--sim", "replay:"+filepath.Join(dir, "missing.json"))
	if code != exitUsage || !strings.Contains(errOut, "replay") {
		t.Errorf("a missing replay: exit %d, %s", code, errOut)
	}
}
