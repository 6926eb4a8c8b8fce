package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Test helpers that several of the command's test files share.

// runMain runs nccltune in process with args (after the program name)
// as main does: the error it prints goes to stderr, and it returns the
// exit code main would use.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, append([]string{"nccltune"}, args...), stdout, stderr)
	if err != nil && err != errCheckFailed {
		reportError(stderr, err)
	}
	return exitCode(err)
}

// runCLI runs nccltune with args against db and returns stdout, stderr
// and the exit code main would use.
func runCLI(t *testing.T, db string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), append([]string{"--db", db}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// runWatched runs nccltune in process with ctx, calling on with each
// stderr line, and returns stdout, stderr and the exit code.
func runWatched(ctx context.Context, db string, on func(string), args ...string) (string, string, int) {
	var stdout bytes.Buffer
	stderr := &watchWriter{on: on}
	code := runMain(ctx, append([]string{"--db", db}, args...), &stdout, stderr)
	return stdout.String(), stderr.String(), code
}

// watchWriter collects what a command writes to stderr and calls on with
// each complete line, as it is written.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	part string
	on   func(line string)
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		i := strings.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := w.part[:i]
		w.part = w.part[i+1:]
		if w.on != nil {
			w.on(line)
		}
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// checkGolden compares got with testdata/NAME, after replacing dates and
// times (which change every run) with placeholders of the same width.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), normaliseTimes(got))
}

var (
	dateTimeRE = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`)
	clockRE    = regexp.MustCompile(`since \d\d:\d\d`)
)

func normaliseTimes(b []byte) []byte {
	b = dateTimeRE.ReplaceAllFunc(b, func(m []byte) []byte {
		if len(m) > 16 {
			return []byte("YYYY-MM-DD hh:mm:ss")
		}
		return []byte("YYYY-MM-DD hh:mm")
	})
	return clockRE.ReplaceAll(b, []byte("since hh:mm"))
}

// decodeOneJSON decodes stdout into v and checks nothing else is there.
func decodeOneJSON(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
	}
}

// isErrorDocument reports whether stdout is the one JSON document a
// --json command prints when it fails: {"error": {...}}, nothing else.
func isErrorDocument(stdout string) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(stdout), &doc) != nil {
		return false
	}
	delete(doc, "schema_version")
	_, ok := doc["error"]
	return ok && len(doc) == 1
}

// openStore opens db for reading; the test fails if it cannot.
func openStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the database does not open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// studyState is a study with its trials and launches, as stored.
type studyState struct {
	study    *store.Study
	trials   []*store.Trial
	launches []*store.Launch
}

func storedStudy(t *testing.T, db, name string) studyState {
	t.Helper()
	st := openStore(t, db)
	s, err := st.Study(name)
	if err != nil {
		t.Fatalf("study %s: %v", name, err)
	}
	trials, err := st.Trials(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return studyState{s, trials, launches}
}

// fillReviewDB stores four studies: a finished simulated search with a
// recommendation, a real sweep, an import that kept the defaults, and a
// search still running.
func fillReviewDB(t testing.TB, path string) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gdr := false
	search := &store.Study{
		Kind: vocab.KindSearch, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB,
		Sizes: []int64{512 * nccl.KiB, nccl.MiB, 2 * nccl.MiB, 4 * nccl.MiB}, GuardSizes: []int64{256 * nccl.MiB},
		Collective: "all_reduce",
		Space:      map[string][]string{"NCCL_PROTO": {"", "LL", "^LL128"}, "NCCL_MAX_NCHANNELS": {"", "4", "8"}},
		BaseEnv:    map[string]string{"NCCL_IB_HCA": "=rocep1s0f1", "NCCL_SOCKET_IFNAME": "enP7s7"},
		Launch: store.LaunchSettings{Launcher: "mpirun", NP: 4, Hosts: []string{"spark5", "spark6", "spark7", "spark8"},
			Bench: "all_reduce_perf", Timeout: 2 * time.Minute, SimProfile: "spark4", SimNoise: 1, SimSeed: 3},
		Platform:  store.Platform{NCCLVersion: "2.28.3", Ranks: 4, Nodes: 4, GPU: "NVIDIA GB10", Transport: "IB", GDR: &gdr},
		Simulated: true, Seed: 3, Budget: store.Budget{Launches: 60},
	}
	sweep := &store.Study{Kind: vocab.KindSweep, Band: "32K-256M", BandMin: 32 * nccl.KiB, BandMax: 256 * nccl.MiB,
		Launch:   store.LaunchSettings{Launcher: "local", Bench: "/opt/nccl-tests/build/all_reduce_perf", BenchArgs: []string{"-g", "2"}},
		Platform: store.Platform{NCCLVersion: "2.27.7", Ranks: 2, Nodes: 1, GPU: "NVIDIA H200", Transport: "P2P"}}
	imported := &store.Study{Kind: vocab.KindImport, Name: "lab-runs"}
	running := &store.Study{Kind: vocab.KindSearch, Band: "1M", BandMin: nccl.MiB, BandMax: nccl.MiB, Simulated: true,
		Launch: store.LaunchSettings{SimProfile: "flat"}}
	for _, s := range []*store.Study{search, sweep, imported, running} {
		if err := st.CreateStudy(s); err != nil {
			t.Fatal(err)
		}
	}
	addTrial := func(study *store.Study, role string, state vocab.TrialState, reason string, cfg nccl.Config, scores ...float64) {
		tr := &store.Trial{StudyID: study.ID, Config: cfg, Role: role, State: state, Reason: reason}
		if err := st.AddTrial(tr); err != nil {
			t.Fatal(err)
		}
		for _, sc := range scores {
			l := &store.Launch{StudyID: study.ID, TrialID: tr.ID, Phase: vocab.PhaseExplore, Outcome: benchfmt.OK,
				Scored: sc > 0, ScoreUS: sc, Simulated: study.Simulated,
				Sizes: []benchfmt.Size{{Bytes: nccl.MiB, TimeUS: sc, Samples: []float64{sc, sc + 1}}}}
			if err := st.AddLaunch(l, &store.Raw{Stdout: []byte(fmt.Sprintf("# launch score %v\n", sc))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	addTrial(search, vocab.RoleBaseline, vocab.TrialComplete, "", nil, 0, 1150.25, 1149.5)
	addTrial(search, vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, 141.5, 140.75)
	addTrial(search, vocab.RoleExplore, vocab.TrialFailed, "exit status 1: NCCL WARN invalid protocol", nccl.Config{"NCCL_PROTO": "LL"}, 0)
	addTrial(search, vocab.RoleExplore, vocab.TrialRunning, "", nccl.Config{"NCCL_MAX_NCHANNELS": "4"})
	addTrial(sweep, vocab.RoleSweep, vocab.TrialComplete, "", nil, 380.5)
	addTrial(imported, vocab.RoleImport, vocab.TrialComplete, "", nccl.Config{"NCCL_ALGO": "Tree"}, 250, 251)
	addTrial(running, vocab.RoleBaseline, vocab.TrialRunning, "", nil, 0)

	search.Status = vocab.StatusDone
	search.Recommendation = &store.Recommendation{
		Env: map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, Speedup: 8.125, SpeedupCI: [2]float64{7.875, 8.375}, CILevel: 0.95,
		Significant: true, PValue: 0.0002, Reason: "significant and above the 3% minimum effect", MinEffect: 0.03,
		BaselineScoreUS: 1150.25, ScoreUS: 141.5, BaselineLaunches: 6, CandidateLaunches: 6,
		PerSize: []store.SizeComparison{{Bytes: nccl.MiB, BaselineUS: 1150.25, BaselineLo: 1100, BaselineHi: 1200,
			CandidateUS: 141.5, CandidateLo: 140, CandidateHi: 143, Speedup: 8.125, Significant: true}},
	}
	sweep.Status = vocab.StatusDone
	imported.Status = vocab.StatusDone
	imported.Recommendation = &store.Recommendation{Speedup: 1.01, SpeedupCI: [2]float64{0.97, 1.05}, CILevel: 0.95, Reason: "the gain is not significant (p=0.41)"}
	for _, s := range []*store.Study{search, sweep, imported} {
		if err := st.UpdateStudy(s); err != nil {
			t.Fatal(err)
		}
	}
}

// sharedStudy is a study several tests read and none changes: its search
// runs once per test binary (the first test to ask waits for it) and each
// test gets a copy of the database of its own.
type sharedStudy struct {
	args   []string // the search's, after "search"
	once   sync.Once
	db     string
	failed string
}

// sharedDirs are the shared studies' directories, removed by TestMain.
var sharedDirs struct {
	sync.Mutex
	paths []string
}

// timedStudy is the timed workload on the simulated 4-rank loopback that
// the TestTimedStudy tests read.
var timedStudy = &sharedStudy{args: []string{"--sim", "h200-loopback", "--np", "4", "--seed", "1", "--budget", "80",
	"--calls", "all_reduce:10240:760", "--calls", "all_reduce:81920:120", "--calls", "all_reduce:2048000:80", "--calls", "all_gather:1048576:13"}}

// copyTo copies the study's database to db, running its search first if
// no test has.
func (s *sharedStudy) copyTo(t *testing.T, db string) {
	t.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "nccltune-shared-")
		if err != nil {
			s.failed = err.Error()
			return
		}
		sharedDirs.Lock()
		sharedDirs.paths = append(sharedDirs.paths, dir)
		sharedDirs.Unlock()
		s.db = filepath.Join(dir, "db")
		var stdout, stderr bytes.Buffer
		if code := runMain(context.Background(), append([]string{"--db", s.db, "search"}, s.args...), &stdout, &stderr); code != exitOK {
			s.failed = fmt.Sprintf("search %q: exit %d: %s", s.args, code, stderr.String())
		}
	})
	if s.failed != "" {
		t.Fatal(s.failed)
	}
	copyFile(t, s.db, db, 0o600)
}

// removeSharedStudies removes the shared studies' databases.
func removeSharedStudies() {
	sharedDirs.Lock()
	defer sharedDirs.Unlock()
	for _, d := range sharedDirs.paths {
		os.RemoveAll(d)
	}
}
