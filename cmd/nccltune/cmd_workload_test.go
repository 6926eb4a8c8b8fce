package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
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
	t.Parallel()
	stdout, stderr, code := runWorkloadCLI(t, perProcessLogs()...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{
		"communicator 0x8d3c1f5e2a7b9c01: 4 ranks (ranks 0-3 logged), 116 calls",
		"all_reduce                         92     79.3 %",
		`calls: ["all_reduce:131072:80", "all_reduce:2097152:12", "all_gather:256000:3", "all_gather:1024000:20", "broadcast:8:1"]`,
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
	t.Parallel()
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
			Calls    []struct {
				Call       string `json:"call"`
				Op         string `json:"op"`
				Bytes      int64  `json:"bytes"`
				Calls      int64  `json:"calls"`
				MeasuredAt string `json:"measured_at"`
			} `json:"calls"`
			Parts []struct {
				Part string `json:"part"`
			} `json:"parts"`
		} `json:"proposal"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.SchemaVersion != 1 || doc.Calls != 116 || len(doc.Communicators) != 1 || doc.Communicators[0].NRanks != 4 ||
		len(doc.Communicators[0].Ranks) != 4 || doc.Proposal.Coverage != 1 || len(doc.Proposal.Calls) != 5 || len(doc.Proposal.Parts) != 5 || doc.Out != out {
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
		Calls     []string `yaml:"calls"`
	}
	if err := yaml.Unmarshal(written, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Generated != vocab.GeneratedWorkload || len(cfg.Calls) != len(doc.Proposal.Calls) {
		t.Errorf("config %+v", cfg)
	}
	for i, spec := range cfg.Calls {
		c := doc.Proposal.Calls[i]
		p, err := nccl.ParseCall(spec)
		if err != nil || spec != c.Call || p.Logged[0] != c.Bytes || p.Calls != float64(c.Calls) || nccl.FormatSize(p.Band.Min) != c.MeasuredAt {
			t.Errorf("call %q: %v; JSON %+v", spec, err, c)
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
	t.Parallel()
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
		{"coverage", append(perProcessLogs(), "--coverage", "0.9"), "--coverage is gone: the proposal holds every call"},
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
// communicator, its ops with their counts, every call proposed.
func TestWorkloadCommandRealCapture(t *testing.T) {
	t.Parallel()
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
		"every op and size they call, with its calls, as logged",
		`calls: ["all_reduce:4:1", "all_reduce:262144:336", "all_reduce:4194304:48", "all_gather:2048000:24", "broadcast:1048576:1"]`,
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}

// TestWorkloadConfigRunsSearch (issue 40): the written study config runs
// as it is, and the study it runs is timed and holds exactly the (op,
// size, calls) the real logs gave: workload --out w.yaml, then search
// --config w.yaml on the simulated 4-rank loopback. (Was: parts of
// bands with weights by calls, the 2 MB calls cut, a one-band study.)
func TestWorkloadConfigRunsSearch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		logs  []string
		calls string
	}{
		{"COLL logs, one per process", perProcessLogs(), "all_reduce 131072×80, 2097152×12; all_gather 256000×3, 1024000×20; broadcast 8×1"},
		{"torch COLL logs", []string{parseInput("workload/torch-coll")}, "all_reduce 4×1, 262144×336, 4194304×48; all_gather 2048000×24; broadcast 1048576×1"},
		{"Inspector", []string{parseInput("workload/inspector")}, "all_reduce 4×1, 262144×336, 4194304×48; all_gather 2048000×24; broadcast 1048576×1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "w.yaml")
			if _, stderr, code := runWorkloadCLI(t, append(tc.logs, "--out", cfg)...); code != exitOK {
				t.Fatalf("workload: exit %d: %s", code, stderr)
			}
			db := filepath.Join(dir, "t.db")
			stdout, stderr, code := runCLI(t, db, "search", "--config", cfg, "--sim", "h200-loopback", "--np", "4", "--noise", "0", "--budget", "60", "--json")
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
			w := storedStudy(t, db, "1").study.Parts()
			if !w.Timed() || w.CallsText() != tc.calls {
				t.Errorf("the stored workload (timed %v) is %s\nwant the logged calls %s", w.Timed(), w.CallsText(), tc.calls)
			}
		})
	}
}

// Each file is read once, however it is named: the same path twice, a
// directory and a file in it, a symbolic link to a file given. The calls
// are those of the four files, and the output says what was skipped.
func TestWorkloadCommandReadsEachFileOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logs := perProcessLogs()
	link := filepath.Join(dir, "link")
	target, err := filepath.Abs(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "logs")
	if err := os.Mkdir(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copied, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Sends count once per rank that sent them: a file read twice would
	// count them twice.
	sends := filepath.Join(dir, "sends.log")
	if err := os.WriteFile(sends, []byte("h:1:1 [0] NCCL INFO Send: opCount 0 sendbuff (nil) recvbuff 0x1 count 1048576 datatype 9 op 0 root 1 comm 0xa [nranks=2] stream 0x2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		calls int64
		says  string
	}{
		{"same path twice", append(slices.Clone(logs), logs[0]), 116, logs[0] + " is the same file as " + logs[0] + ": read once"},
		{"sends given twice", append(slices.Clone(logs[:3]), sends, sends), 117, sends + " is the same file as " + sends},
		{"a symbolic link", append(slices.Clone(logs), link), 116, link + " is the same file as " + logs[0]},
		{"a directory and a file in it", []string{copied, filepath.Join(copied, "nccl.gpu0.1003")}, 116, "nccl.gpu0.1003 is the same file as"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runWorkloadCLI(t, append(tc.args, "--json")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				Calls   int64    `json:"calls"`
				Sources []any    `json:"sources"`
				Notes   []string `json:"notes"`
			}
			decodeOneJSON(t, stdout, &doc)
			if doc.Calls != tc.calls || len(doc.Sources) != 4 {
				t.Errorf("%d calls from %d files; want %d from 4", doc.Calls, len(doc.Sources), tc.calls)
			}
			if notes := strings.Join(doc.Notes, "\n"); !strings.Contains(notes, tc.says) {
				t.Errorf("notes do not say %q:\n%s", tc.says, notes)
			}
		})
	}
}

// Standard input can be read once: "workload - -" is refused, as a usage
// error, rather than reading it twice (the second read found nothing).
func TestWorkloadCommandStdinOnce(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(perProcessLogs()[0])
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err = runWorkload(context.Background(), workloadOptions{files: []string{"-", "-"}, cmdIO: cmdIO{stdin: bytes.NewReader(data), stdout: &stdout, stderr: &stdout}})
	if !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), "standard input (-) is named twice") {
		t.Errorf("workload - -: %v; want a usage error saying stdin is named twice", err)
	}
}

// One read budget for all the files of a run, not one per file: many small
// logs that together pass it are refused, naming the budget and what to
// do; within it they are read.
func TestWorkloadCommandReadBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var line strings.Builder
	for r := range 64 {
		fmt.Fprintf(&line, "h:%d:1 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x2 count 262144 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0x3\n", 1000, r)
	}
	total := 0
	for i := range 200 {
		text := strings.ReplaceAll(line.String(), "h:1000:", fmt.Sprintf("h:%d:", 1000+i))
		total += len(text)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("nccl.h.%d", 1000+i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	opts := workloadOptions{files: []string{dir}, cmdIO: cmdIO{stdout: &out, stderr: &out, json: true}}
	if err := runWorkload(context.Background(), opts); err != nil {
		t.Fatalf("within the default budget: %v", err)
	}
	opts.readBudget = int64(total / 2)
	err := runWorkload(context.Background(), opts)
	if !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), "the inputs together are larger than") ||
		!strings.Contains(err.Error(), "pass fewer files") {
		t.Errorf("%d bytes in 200 files over a budget of %d: %v; want a usage error naming the budget", total, opts.readBudget, err)
	}
}
