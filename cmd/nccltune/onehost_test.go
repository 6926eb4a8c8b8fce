package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/runner"
)

// fakeBench writes a stand-in for all_reduce_perf that prints out (a saved
// nccl-tests output) whatever it is asked.
func fakeBench(t *testing.T, out string) string {
	t.Helper()
	abs, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "all_reduce_perf")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec cat '"+abs+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// One process driving both GPUs of a host: --launcher local with
// nccl-tests' -g 2 passed through --bench-arg. doctor reads two ranks on
// one node connected by P2P, and a sweep stores them as two ranks.
func TestOneProcessDrivesTwoGPUs(t *testing.T) {
	bench := fakeBench(t, filepath.Join("..", "..", "runner", "testdata", "text", "x2_g2_direct_pointer.txt"))
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "doctor", "--json", "--launcher", "local", "--bench", bench,
		"--bench-arg=-g", "--bench-arg=2", "--base-env", "NCCL_NVLS_ENABLE=0")
	if code != exitOK {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	var rep struct {
		doctorJSON
		Argv    []string       `json:"argv"`
		Summary string         `json:"transport_summary"`
		Routes  []runner.Route `json:"routes"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(rep.Argv, "-g"); i < 0 || i+1 >= len(rep.Argv) || rep.Argv[i+1] != "2" {
		t.Errorf("argv %q lacks -g 2", rep.Argv)
	}
	if rep.Transport != "P2P" || rep.NRanks != 2 || rep.NNodes != 1 || len(rep.Warnings) != 0 ||
		!strings.HasPrefix(rep.Summary, "P2P over NVLink (P2P/direct pointer) between ranks 0-1 within a host") {
		t.Errorf("doctor: transport %q, %d ranks on %d nodes, warnings %+v, summary %q", rep.Transport, rep.NRanks, rep.NNodes, rep.Warnings, rep.Summary)
	}
	stdout, stderr, code = runCLI(t, db, "sweep", "--json", "--launcher", "local", "--bench", bench,
		"--bench-arg=-g", "--bench-arg=2", "--base-env", "NCCL_NVLS_ENABLE=0", "--min", "32K", "--max", "256M")
	if code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	var sw struct {
		Rows []struct {
			Bytes int64   `json:"bytes"`
			BusBW float64 `json:"busbw"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &sw); err != nil || len(sw.Rows) != 7 || sw.Rows[6].Bytes != 128<<20 || math.Abs(sw.Rows[6].BusBW-283.67) > 0.01 {
		t.Errorf("sweep rows %+v (%v); want 7 sizes, 283.67 GB/s at 128M", sw.Rows, err)
	}
}
