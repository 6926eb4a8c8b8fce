package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/store"
)

// verify --tuner-plugin on the simulated fabric: the CSV through a plugin
// built from 2.30.7 source reproduces the study's gain; through one built
// from 2.28.3 source the first (debug) launch dies in the plugin, verify
// names the cause and the fix, exits 3 and measures nothing.
func TestVerifyTunerPlugin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "1", "--budget", "30"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	plugin := func(source string) string {
		p := filepath.Join(dir, "tuner-"+source+".so")
		if err := os.WriteFile(p, sim.TunerPluginFile(source), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stdout, stderr, code := runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", plugin("2.30.7"))
	if code != 0 {
		t.Fatalf("verify through the 2.30.7 plugin: exit %d: %s", code, stderr)
	}
	var doc struct {
		Consistent bool `json:"consistent"`
		Tuner      struct {
			Check struct {
				Interface int `json:"interface"`
				Applied   int `json:"applied"`
				NoMatch   int `json:"no_match"`
			} `json:"check"`
			Warnings    []struct{ Code string } `json:"warnings"`
			Reproduces  bool                    `json:"reproduces"`
			PluginAlone *struct {
				Launches int `json:"launches"`
				Sizes    []struct {
					Op     string         `json:"op"`
					Bytes  int64          `json:"bytes"`
					Plugin map[string]any `json:"plugin"`
					Rows   map[string]any `json:"rows"`
				} `json:"sizes"`
			} `json:"plugin_alone"`
		} `json:"tuner_plugin"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// spark4 is four GB10 nodes: the example plugin rewrites NCCL's
	// Blackwell constants there, its one warning.
	if !doc.Tuner.Reproduces || !doc.Consistent || doc.Tuner.Check.Interface != 6 || doc.Tuner.Check.Applied == 0 || doc.Tuner.Check.NoMatch != 0 ||
		len(doc.Tuner.Warnings) != 1 || doc.Tuner.Warnings[0].Code != fabric.CodeTunerExampleConstants {
		t.Errorf("the 2.30.7 plugin: %+v", doc)
	}
	checkStoredTunerCSV(t, db, "s2") // the empty CSV's removal too
	// Four GB10 nodes: the plugin with an empty CSV was measured beside
	// the CSV at every size the CSV is judged at.
	var sizes []int64
	if a := doc.Tuner.PluginAlone; a != nil && a.Launches == 6 {
		for _, s := range a.Sizes {
			if s.Op == "all_reduce" && s.Plugin["verdict"] != nil && s.Rows["verdict"] != nil {
				sizes = append(sizes, s.Bytes)
			}
		}
	}
	if !slices.Equal(sizes, []int64{256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20}) {
		t.Errorf("the plugin alone: %+v, want 6 launches and all_reduce 256K-8M", doc.Tuner.PluginAlone)
	}
	stdout, _, _ = runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--tuner-plugin", plugin("2.30.7"))
	if !strings.Contains(stdout, "the plugin alone (an empty CSV, 6 launches interleaved after the CSV's)") || !regexp.MustCompile(`(?m)^all_reduce +8M +\+[0-9.]+% +significantly slower +-[0-9.]+% +significantly faster$`).MatchString(stdout) {
		t.Errorf("verify's text lacks the plugin alone's table (one channel slower at 8M, the rows faster):\n%s", stdout)
	}

	// A CSV whose first row is stretched from 0 bytes to the band's edge
	// (one channel of LL where NCCL runs many) slows the size just below
	// the band, which the band never measures: verify names it, exit 1.
	stretched := filepath.Join(dir, "stretched.csv")
	if err := os.WriteFile(stretched, []byte("allreduce,0,524287,ring,ll,1,4,4,-1,-1\n"+
		"allreduce,524288,4194304,ring,simple,8,4,4,-1,-1\n"+
		"allreduce,4194305,18446744073709551615,ring,simple,0,4,4,-1,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", plugin("2.30.7"), "--tuner-config", stretched)
	if code != 1 {
		t.Fatalf("verify of a stretched CSV: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	var slow struct {
		Failed  bool   `json:"failed"`
		Refused string `json:"refused"`
		Reason  string `json:"reason"`
		Guards  []struct {
			Sizes   []int64 `json:"sizes"`
			PerSize []struct {
				Bytes  int64 `json:"bytes"`
				Slower bool  `json:"slower"`
			} `json:"per_size"`
		} `json:"guards"`
	}
	if err := json.Unmarshal([]byte(stdout), &slow); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !slow.Failed || slow.Refused != "all_reduce at 256K" || !strings.Contains(slow.Reason, "significantly slower at 256K") || len(slow.Guards) != 1 {
		t.Fatalf("the stretched CSV: failed %v, refused %q, reason %q, guards %+v", slow.Failed, slow.Refused, slow.Reason, slow.Guards)
	}
	for _, s := range slow.Guards[0].PerSize {
		if s.Slower != (s.Bytes == 256<<10) {
			t.Errorf("%d bytes: slower %v; only 256K, which the stretched row alone changes, is", s.Bytes, s.Slower)
		}
	}

	stdout, stderr, code = runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--tuner-plugin", plugin("2.28.3"))
	if code != 3 {
		t.Fatalf("verify through the 2.28.3 plugin: exit %d, want 3\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"SIGSEGV inside the tuner plugin", "NCCL < 2.30.3", "2.30.3 or newer source", "gcc -Inccl -fPIC -shared"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the crash's message lacks %q:\n%s", want, stderr)
		}
	}
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study("s5") // s2, s3 and s4 are the verifies above
	if err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	if study.Status != "failed" || len(launches) != 1 || launches[0].Scored || launches[0].Outcome != "failed" {
		t.Errorf("the crashed verify stored status %s and %d launches (want failed, one unscored failed launch)", study.Status, len(launches))
	}
}

// What verify --tuner-plugin refuses before anything is stored.
func TestVerifyTunerPluginUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	so := filepath.Join(dir, "p.so")
	if err := os.WriteFile(so, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tuner-plugin", filepath.Join(dir, "missing.so")}, "no such file here"},
		{[]string{"--tuner-plugin", so, "--env", "NCCL_PROTO=Simple"}, "give one of them"},
		{[]string{"--tuner-plugin", so, "--base-env", "NCCL_TUNER_CONFIG_FILE=/x.csv"}, "drop it from --base-env"},
		{[]string{"--tuner-config", so}, "give the plugin with --tuner-plugin"},
		{[]string{"--tuner-plugin", so, "--tuner-config", filepath.Join(dir, "missing.csv")}, "no such file here"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"verify", "s1", "--sim", "spark4"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tt.args, code, tt.want, stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused verify created the database")
	}
}

// checkStoredTunerCSV: a verify --tuner-plugin study keeps the CSV NCCL
// read, the rows export --format nccl-tuner writes of the verified study,
// while the temporary file its candidate's NCCL_TUNER_CONFIG_FILE named
// is gone (was: only that path was stored, naming a missing file).
func checkStoredTunerCSV(t *testing.T, db, verify string) {
	t.Helper()
	exported, stderr, code := runCLI(t, db, "export", "s1", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study(verify)
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	for _, line := range strings.Split(study.TunerCSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows++
		if !strings.Contains(exported, line+"\n") {
			t.Errorf("stored CSV row %q is not in the study's export:\n%s", line, exported)
		}
	}
	if rows == 0 {
		t.Errorf("study %s stored no tuner CSV rows: %q", verify, study.TunerCSV)
	}
	trials, err := st.Trials(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, tr := range trials {
		if p := tr.Config[nccl.TunerConfigVar]; p != "" {
			named++
			if _, err := os.Stat(p); err == nil {
				t.Errorf("the temporary CSV %s is still there", p)
			}
		}
	}
	if named == 0 {
		t.Errorf("no trial of %s names the CSV it measured", verify)
	}
}

// TestVerifyTunerCSVGoneAfterSecondInterrupt: a second Ctrl-C, which ends
// nccltune at once (no deferred call runs), still removes the temporary
// tuner CSV and the launch's directory (was: both left in $TMPDIR). The
// wrapper hangs the tuner's first launch and ignores SIGTERM, so the
// first Ctrl-C's orderly stop is still waiting on it when the second
// one comes.
func TestVerifyTunerCSVGoneAfterSecondInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	mark := markProcesses(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	plugin := filepath.Join(dir, "tuner.so")
	wrapper := filepath.Join(dir, "hang-tuner.sh")
	if err := os.WriteFile(plugin, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	hung := filepath.Join(dir, "hung")
	script := "#!/bin/sh\nif [ -n \"$NCCL_TUNER_PLUGIN\" ]; then trap '' TERM; touch " + hung + "; exec sleep 600; fi\nexec \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "1", "--budget", "30", "--wrapper", wrapper); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	tmp := t.TempDir()
	p := startCLI(t, "", nil, []string{"TMPDIR=" + tmp}, "--db", db, "verify", "s1", "--sim", "spark4", "--launches", "4",
		"--tuner-plugin", plugin, "--wrapper", wrapper, "--timeout", "10m")
	t.Cleanup(func() {
		for _, left := range markedProcesses(mark) {
			pid, _ := strconv.Atoi(strings.Fields(left)[0])
			syscall.Kill(pid, syscall.SIGKILL) // the hung launch, which ignores SIGTERM
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(hung); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tuner's launch never started")
		}
	}
	// The study's CSV and, on spark4's four GB10 nodes, the empty one
	// the plugin alone is measured with.
	if csvs, _ := filepath.Glob(filepath.Join(tmp, "nccltune-tuner-*.csv")); len(csvs) != 2 {
		t.Fatalf("while verify runs, $TMPDIR holds %v; want its two tuner CSVs", csvs)
	}
	p.cmd.Process.Signal(os.Interrupt)
	time.Sleep(500 * time.Millisecond) // the first stop is under way, waiting on the launch
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	var code int
	var stderr string
	go func() { code, stderr = p.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("nccltune did not end within 10 s of the second SIGINT")
	}
	if code != exitInterrupted {
		t.Errorf("exit %d, want 130: %s", code, stderr)
	}
	if names := namesIn(tmp); len(names) != 0 {
		t.Errorf("$TMPDIR still holds %v after the second Ctrl-C", names)
	}
}

// TestNormalExitLeavesNothingInTMPDIR: a search that ends as it should
// leaves $TMPDIR as it found it. Its launches share one directory for the
// process (runner.processLaunchDir), which only the exit removes: main
// must remove it on a normal exit too, not only after a second Ctrl-C.
func TestNormalExitLeavesNothingInTMPDIR(t *testing.T) {
	tmp := t.TempDir()
	db := filepath.Join(t.TempDir(), "db")
	p := startCLI(t, "", nil, []string{"TMPDIR=" + tmp}, "--db", db, "search", "--sim", "spark4",
		"--band", "1M", "--seed", "1", "--budget", "15", "--confirm", "4")
	if code, stderr := p.wait(); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if names := namesIn(tmp); len(names) != 0 {
		t.Errorf("$TMPDIR still holds %v after the search ended", names)
	}
}

// namesIn lists what directory dir holds (nothing when it cannot be read).
func namesIn(dir string) []string {
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	return names
}
