package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
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
	t.Parallel()
	bench := fakeBench(t, filepath.Join("..", "..", "internal", "benchfmt", "testdata", "text", "x2_g2_direct_pointer.txt"))
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "doctor", "--json", "--launcher", "local", "--bench", bench,
		"--bench-arg=-g", "--bench-arg=2", "--base-env", "NCCL_NVLS_ENABLE=0")
	if code != exitOK {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	var rep struct {
		doctorJSON
		Argv    []string         `json:"argv"`
		Summary string           `json:"transport_summary"`
		Routes  []benchfmt.Route `json:"routes"`
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

// A study stored before nccltune read NCCL's channel lines holds "Using
// network Socket" as its explain launch's transport, although NVLink
// carried everything. show and report read the stored log again.
func TestOldStudyTransportReadAgain(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	study := &store.Study{Kind: vocab.KindSearch, Band: "512K-4M", BandMin: 512 << 10, BandMax: 4 << 20,
		Sizes: []int64{512 << 10, 1 << 20, 2 << 20, 4 << 20}, Collective: "all_reduce",
		Platform: store.Platform{NCCLVersion: "2.28.3", Ranks: 2, Nodes: 1, GPU: "NVIDIA H200", Hosts: []string{"vm"}}}
	if err := st.CreateStudy(study); err != nil {
		t.Fatal(err)
	}
	tr := &store.Trial{StudyID: study.ID, Config: nccl.Config{}, Role: "baseline", State: "complete"}
	if err := st.AddTrial(tr); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(doctorLog("x2_mpirun_p2p_debug.txt"))
	if err != nil {
		t.Fatal(err)
	}
	old := &benchfmt.Facts{NCCLVersion: "2.28.3", NRanks: 2, NNodes: 1, Transport: "Socket", NICs: []string{"eth0:192.0.2.2<0>"}}
	l := &store.Launch{StudyID: study.ID, TrialID: tr.ID, Phase: vocab.PhaseExplain, Outcome: benchfmt.OK, Facts: old}
	if err := st.AddLaunch(l, &store.Raw{Stdout: log}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	const paths = "P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host, 48 connections"
	stdout, stderr, code := runCLI(t, db, "show", "1")
	if code != exitOK || !strings.Contains(stdout, "2 ranks on 1 node, NVIDIA H200, P2P") || !strings.Contains(stdout, paths) {
		t.Errorf("show: exit %d %s\n%s", code, stderr, stdout)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runCLI(t, db, "report", "1", "--out", out); code != exitOK {
		t.Fatalf("report: exit %d %s", code, stderr)
	}
	page, _ := os.ReadFile(out)
	if !strings.Contains(string(page), "P2P: "+paths) || strings.Contains(string(page), "eth0") {
		t.Errorf("the report's fabric section does not say P2P (or still names the NIC)")
	}
}
