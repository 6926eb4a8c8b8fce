package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// callLogs are the synthetic call logs of benchfmt's tests, in NCCL
// 2.28.3's exact formats.
func callLog(name string) string { return parseInput(filepath.Join("calls", name)) }

func perProcessLogs() []string {
	var out []string
	for _, n := range []string{"nccl.gpu0.1001", "nccl.gpu0.1002", "nccl.gpu0.1003", "nccl.gpu0.1004"} {
		out = append(out, callLog(n))
	}
	return out
}

func runWorkloadCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), append([]string{"workload"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// One file per process: the communicator with its four ranks, each op's
// calls counted once, and the proposal with its YAML.
func TestWorkloadCommandText(t *testing.T) {
	stdout, stderr, code := runWorkloadCLI(t, perProcessLogs()...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{
		"communicator 0x8d3c1f5e2a7b9c01: 4 ranks (ranks 0-3 logged), 116 calls",
		"all_reduce                         92     79.3 %",
		`part: ["all_reduce:128K:0.71", "all_gather:1M:0.18", "all_reduce:2M:0.11"]`,
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	checkGolden(t, "workload/per_process.txt", []byte(strings.ReplaceAll(stdout, parseInputDir, "TESTDATA")))
}

// --out writes the study config; --json prints the same data as one
// document; a directory reads its files.
func TestWorkloadCommandOutAndJSON(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range perProcessLogs() {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(logs, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "workload.yaml")
	plot := filepath.Join(dir, "workload.svg")
	stdout, stderr, code := runWorkloadCLI(t, logs, "--out", out, "--plot", plot, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Calls         int64  `json:"calls"`
		Config        string `json:"config_yaml"`
		Out           string `json:"out"`
		Communicators []struct {
			ID     string `json:"id"`
			NRanks int    `json:"nranks"`
			Ranks  []int  `json:"ranks"`
			Ops    []struct {
				Op        string `json:"op"`
				Calls     int64  `json:"calls"`
				Histogram []struct {
					Bytes int64 `json:"bytes"`
					Calls int64 `json:"calls"`
				} `json:"histogram"`
			} `json:"ops"`
		} `json:"communicators"`
		Proposal struct {
			Coverage float64 `json:"coverage"`
			Parts    []struct {
				Part string `json:"part"`
			} `json:"parts"`
		} `json:"proposal"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.SchemaVersion != 1 || doc.Calls != 116 || len(doc.Communicators) != 1 || doc.Communicators[0].NRanks != 4 ||
		len(doc.Communicators[0].Ranks) != 4 || doc.Proposal.Coverage < 0.9 || len(doc.Proposal.Parts) != 3 || doc.Out != out {
		t.Errorf("JSON document %+v", doc)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != doc.Config {
		t.Errorf("the file and the JSON's config_yaml differ:\n%s\n---\n%s", written, doc.Config)
	}
	var cfg struct {
		Generated string   `yaml:"generated-by"`
		Part      []string `yaml:"part"`
	}
	if err := yaml.Unmarshal(written, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Generated != vocab.GeneratedWorkload || len(cfg.Part) != len(doc.Proposal.Parts) {
		t.Errorf("config %+v", cfg)
	}
	for i, spec := range cfg.Part {
		if _, err := nccl.ParsePart(spec); err != nil || spec != doc.Proposal.Parts[i].Part {
			t.Errorf("part %q: %v", spec, err)
		}
	}
	if !strings.Contains(string(written), "# run: nccltune search --config "+out) {
		t.Errorf("the header does not say how to run it:\n%s", written)
	}
	if svg, err := os.ReadFile(plot); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}

// Inputs that are not call logs, and bad flags, are usage errors that
// name the file and what was expected; nothing is written.
func TestWorkloadCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no files", nil, "workload needs the log files"},
		{"missing file", []string{filepath.Join(dir, "nope")}, "no such file; give the path of an NCCL log"},
		{"nccl-tests output", []string{parseInput("fixtures/ag3.txt")}, "ag3.txt: no NCCL collective calls found: expected NCCL_DEBUG=INFO log lines with NCCL_DEBUG_SUBSYS=COLL"},
		{"NCCL lines without COLL", []string{parseInput("fixtures/ar2_mps_info.txt")}, "add COLL to NCCL_DEBUG_SUBSYS"},
		{"one bad file among good ones", append(perProcessLogs(), parseInput("fixtures/ag3.txt")), "ag3.txt: no NCCL collective calls"},
		{"coverage", append(perProcessLogs(), "--coverage", "90"), "--coverage 90 must be a fraction"},
		{"ranks absent", append(perProcessLogs(), "--ranks", "8"), "no communicator has 8 ranks: the log has 4 ranks"},
		{"plot format", append(perProcessLogs(), "--plot", filepath.Join(dir, "w.pdf")), "--plot: cannot write a .pdf plot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runWorkloadCLI(t, append(tc.args, "--out", out)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused run wrote --out")
			}
		})
	}
}

// The real capture (torch.distributed on the 4-rank loopback): one 4-rank
// communicator, its ops with their counts, bands holding ≥ 90 %.
func TestWorkloadCommandRealCapture(t *testing.T) {
	stdout, stderr, code := runWorkloadCLI(t, parseInput("workload/torch-coll"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{
		"NCCL 2.28.9: 1 communicator, 410 calls",
		"4 ranks (4 processes logged), 410 calls",
		"all_reduce                         385",
		"all_gather                         24",
		"broadcast                          1",
		"the parts hold 94 % of the calls",
		`part: ["all_reduce:256K:0.88", "all_reduce:4M:0.12"]`,
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}

// The written study config runs as it is: search --config FILE on the
// simulated fabric. It needs search's --part (the workload's parts).
func TestWorkloadConfigRunsSearch(t *testing.T) {
	hasPart := false
	for _, f := range searchCommand().Flags {
		if slices.Contains(f.Names(), "part") {
			hasPart = true
		}
	}
	if !hasPart {
		t.Skip("search has no --part yet: the workload's YAML cannot run")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "workload.yaml")
	if _, stderr, code := runWorkloadCLI(t, parseInput("workload/torch-coll"), "--out", cfg); code != exitOK {
		t.Fatalf("workload: exit %d: %s", code, stderr)
	}
	db := filepath.Join(dir, "t.db")
	stdout, stderr, code := runCLI(t, db, "search", "--config", cfg, "--sim", "spark4", "--noise", "0", "--budget", "130", "--json")
	if code != exitOK {
		t.Fatalf("search --config %s: exit %d: %s", cfg, code, stderr)
	}
	var doc struct {
		Simulated bool `json:"simulated"`
		Launches  int  `json:"launches"`
	}
	decodeOneJSON(t, stdout, &doc)
	if !doc.Simulated || doc.Launches == 0 {
		t.Errorf("search document %s", stdout)
	}
}
