package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 38, item 7: text from outside (a communicator id, a file name, a
// log line, a value) reaches the terminal escaped, never as an escape
// sequence or a line of its own; --json stays encoding/json's.

// hostileInspector is Inspector output of one 4-rank communicator named id.
func hostileInspector(id string) string {
	quoted, _ := json.Marshal(id)
	var b strings.Builder
	for sn := range 4 {
		for r := range 4 {
			fmt.Fprintf(&b, `{"header":{"id":%s,"rank":%d,"n_ranks":4,"nnodes":1},"metadata":{"hostname":"h","pid":%d},`+
				`"coll_perf":{"coll":"AllReduce","coll_sn":%d,"coll_msg_size_bytes":1048576,"coll_exec_time_us":100,"coll_timing_source":"kernel_gpu"}}`+"\n",
				quoted, r, 100+r, sn)
		}
	}
	return b.String()
}

// writeHostile writes data to a file named name in a new directory.
func writeHostile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkNoRawControls fails when out holds ESC, BEL, CR, a C1 control or a
// Unicode line or paragraph separator.
func checkNoRawControls(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexAny(out, "\x1b\a\r\v\f\u0085\u009b\u2028\u2029"); i >= 0 {
		t.Errorf("%s: a raw control at byte %d: %q", what, i, out[max(0, i-40):min(len(out), i+40)])
	}
}

func TestWorkloadPrintsOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	const id = "0xc0\x1b]0;pwned\a\x1b[2J\u2028id"
	path := writeHostile(t, "insp\x1b[31m\u2028ector.json", []byte(hostileInspector(id)))
	stdout, stderr, code := runWorkloadCLI(t, path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkNoRawControls(t, "workload", stdout)
	if !strings.Contains(stdout, `communicator 0xc0\x1b]0;pwned\a\x1b[2J\u2028id: 4 ranks`) {
		t.Errorf("the communicator id is not shown escaped:\n%s", stdout)
	}
	// --json keeps the id as data: encoding/json's escapes, the id itself.
	stdout, stderr, code = runWorkloadCLI(t, path, "--json")
	var doc struct {
		Communicators []struct {
			ID string `json:"id"`
		} `json:"communicators"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != exitOK || err != nil || len(doc.Communicators) != 1 || doc.Communicators[0].ID != id {
		t.Errorf("--json: exit %d, %v, %+v: %s", code, err, doc, stderr)
	}
	if !strings.Contains(stdout, `0xc0\u001b]0;pwned\u0007\u001b[2J\u2028id`) {
		t.Errorf("--json does not write the id as encoding/json does:\n%s", stdout)
	}
}

func TestImportPrintsOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(importDir + "ar2_full_periter.txt")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "import.db")
	stdout, stderr, code := runCLI(t, db, "import",
		writeHostile(t, "run\x1b[31m.txt", good), writeHostile(t, "junk\x1b[2J\u2028.txt", []byte("not \x1b[5m nccl-tests output\n")))
	if code == exitOK || code == exitUsage {
		t.Fatalf("exit %d, want the skipped file's failure: %s", code, stderr)
	}
	checkNoRawControls(t, "import stdout", stdout)
	checkNoRawControls(t, "import stderr", stderr)
	for _, want := range []string{`run\x1b[31m.txt`, `junk\x1b[2J\u2028.txt: `} {
		if !strings.Contains(stdout, want) {
			t.Errorf("import does not show %q:\n%s", want, stdout)
		}
	}
}

func TestDoctorPrintsOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	log, err := os.ReadFile(doctorLog("ar2_mps_info.txt"))
	if err != nil {
		t.Fatal(err)
	}
	log = bytes.ReplaceAll(log, []byte("lo:127.0.0.1<0>"), []byte("lo\x1b]0;pwned\a:127.0.0.1<0>"))
	log = append(log, "fakehost0:3121:3121 [0] NCCL WARN \x1b[2J\x1b[31mall is\u2028well\n"...)
	path := writeHostile(t, "log\x1b[31m.txt", log)
	stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "doctor", "--log", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkNoRawControls(t, "doctor", stdout)
	for _, want := range []string{`log\x1b[31m.txt`, `lo\x1b]0;pwned\a:127.0.0.1<0>`, `\x1b[2J\x1b[31mall is\u2028well`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor does not show %q:\n%s", want, stdout)
		}
	}
}

// TestErrorsPrintOutsideTextEscaped: an error that echoes a path or a
// value is one line on stderr, its controls and line breaks escaped.
func TestErrorsPrintOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"parse", filepath.Join(dir, "x\x1b[31m\nnccltune: wrote /etc/passwd")}, `x\x1b[31m\nnccltune: wrote /etc/passwd: no such file`},
		{[]string{"workload", filepath.Join(dir, "y\u2028\x1b]0;t\a")}, `y\u2028\x1b]0;t\a`},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--base-env", "NCCL_PROTO=a\nb\x1b[8m"}, `--base-env: NCCL_PROTO=a\nb\x1b[8m: "a\nb\x1b[8m" is not one of`},
	} {
		_, stderr, code := runCLI(t, filepath.Join(dir, "db"), tc.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
		checkNoRawControls(t, fmt.Sprint(tc.args), stderr)
	}
}

// TestShowPrintsOutsideTextEscaped: what a benchmark printed (quoted in a
// failed launch's reason) and a --base-env value reach the terminal
// escaped in the launch lines and in show, never as an escape sequence
// or a line of their own. Round five of issue 38: both were printed raw.
func TestShowPrintsOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bench := filepath.Join(dir, "bench")
	script := "#!/bin/sh\nprintf 'common.cu:1454 \\033]0;pwned\\007\\033[2J \\302\\233 2J\\342\\200\\250failed\\n' >&2\nexit 3\n"
	if err := os.WriteFile(bench, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db")
	_, stderr, code := runCLI(t, db, "sweep", "--bench", bench, "--launcher", "local", "--np", "1", "--min", "1M", "--max", "2M",
		"--base-env", "NCCL_IB_HCA=mlx5\x1b[8m\nrecommendation: NCCL_PROTO=LL")
	if code != exitFabric {
		t.Fatalf("sweep: exit %d, want %d: %s", code, exitFabric, stderr)
	}
	checkNoRawControls(t, "sweep's launch lines", stderr)
	stdout, stderr, code := runCLI(t, db, "show", "s1", "--trials")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	checkNoRawControls(t, "show", stdout)
	for _, want := range []string{
		`NCCL_IB_HCA=mlx5\x1b[8m\nrecommendation: NCCL_PROTO=LL`,
		`common.cu:1454 \x1b]0;pwned\a\x1b[2J \u009b 2J\u2028failed`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show does not show %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\nrecommendation: NCCL_PROTO=LL") {
		t.Errorf("a --base-env value forged a line of show:\n%s", stdout)
	}
}

// TestParsePrintsOutsideTextEscaped: parse quotes a saved output's host
// and GPU names, NCCL's warnings and the file's name; each is shown
// escaped. Round five of issue 38: printed raw.
func TestParsePrintsOutsideTextEscaped(t *testing.T) {
	t.Parallel()
	text := "# nccl-tests version 2.19.6\n" +
		"#  Rank  0 Group  0 Pid 1 on h\x1b]0;pwned\aost device  0 [0x1b] NVIDIA\x1b[31m H200\u2028x\n" +
		"h:1:1 [0] NCCL WARN \x1b[2Jall is\u2028well\n"
	path := writeHostile(t, "run\x1b[5m.txt", []byte(text))
	stdout, _, _ := runCLI(t, filepath.Join(t.TempDir(), "db"), "parse", path)
	checkNoRawControls(t, "parse", stdout)
	for _, want := range []string{`run\x1b[5m.txt:`, `h\x1b]0;pwned\aost`, `NVIDIA\x1b[31m H200`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("parse does not show %q:\n%s", want, stdout)
		}
	}
}
