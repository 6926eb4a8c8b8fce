package main

// Faults a long search meets on a shared cluster, injected through the
// simulated fabric (testdata/faults/faults.json makes each channel cap fail
// in its own way) and through test doubles (testdata/faults/wrapper.sh,
// testdata/faults/fake-mpirun), and what nccltune does about them. Every
// test here runs real processes: the test binary is the simulator (see
// TestMain) and, with NCCLTUNE_TEST_CLI=1, nccltune itself.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

const (
	// cliChildEnv makes the test binary run nccltune's main (TestMain).
	cliChildEnv = "NCCLTUNE_TEST_CLI"
	// fsizeEnv sets RLIMIT_FSIZE in such a child: a full disk.
	fsizeEnv = "NCCLTUNE_TEST_FSIZE"
	// markEnv marks every process a test starts (children inherit it), so
	// the test can find any that outlive what started them.
	markEnv = "NCCLTUNE_TEST_MARK"
	// holdEnv names a file; while it exists testdata/faults/wrapper.sh
	// blocks the launch it fronts.
	holdEnv = "NCCLTUNE_TEST_HOLD"
)

// cliChild runs nccltune's main in a re-executed test binary, after
// limiting the size of files it may write when fsizeEnv asks for it.
func cliChild() {
	if v := os.Getenv(fsizeEnv); v != "" {
		lim, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad", fsizeEnv, err)
			os.Exit(2)
		}
		// Writes past the limit then fail with EFBIG instead of killing
		// the process, as a full disk fails them with ENOSPC.
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(2)
		}
	}
	main()
}

// faultFile is the absolute path of a file under testdata/faults.
func faultFile(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "faults", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// markProcesses marks every process started from now on by this test.
func markProcesses(t *testing.T) string {
	mark := processMark(t)
	t.Setenv(markEnv, mark)
	return mark
}

// processMark is a mark of this test's own, for markEnv: a parallel test
// hands it to its launches with --base-env instead of markProcesses.
func processMark(t *testing.T) string { return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()) }

// markedProcesses lists the live processes (zombies do not count: they run
// nothing) whose environment holds mark, other than this one.
func markedProcesses(mark string) []string {
	want := []byte(markEnv + "=" + mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(d + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		stat, _ := os.ReadFile(d + "/stat")
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(d + "/cmdline")
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
	}
	return out
}

// assertNoProcessesLeft fails if any process this test started is still
// running after a short settle time (and kills it).
func assertNoProcessesLeft(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	var left []string
	for {
		if left = markedProcesses(mark); len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("%d processes outlived their launch:\n%s", len(left), strings.Join(left, "\n"))
	for _, p := range left {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// goroutineLabel is the pprof label withTestLabel gives the goroutines a
// command starts (goroutines inherit their creator's labels), so that
// the ones left over are this test's whatever other tests run.
const goroutineLabel = "nccltune-test"

// withTestLabel runs f with the test's name as goroutineLabel.
func withTestLabel(t *testing.T, f func()) {
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, t.Name()), func(context.Context) { f() })
}

// assertNoGoroutinesLeft fails if a goroutine that withTestLabel's
// command started still runs, once the ones ending have had a moment to
// end.
func assertNoGoroutinesLeft(t *testing.T) {
	t.Helper()
	label := fmt.Sprintf("%q:%q", goroutineLabel, t.Name())
	deadline := time.Now().Add(2 * time.Second)
	for {
		var all bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&all, 1)
		var left []string
		for _, stack := range strings.Split(all.String(), "\n\n") {
			if strings.Contains(stack, label) {
				left = append(left, stack)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines the command started still run:\n%s", strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkBoltFile runs bbolt's own consistency check over the file.
func checkBoltFile(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("bbolt cannot open %s: %v", path, err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("bbolt check of %s: %v", path, err)
	}
}

// resumeToTheEnd continues study name after an interruption and checks
// what the issue asks: every launch stored before is still there, as it
// was; no config is two trials; the study finishes within its budget with
// every launch counted once.
func resumeToTheEnd(t *testing.T, db, name string, before []*store.Launch, budget int, launchArgs ...string) studyState {
	t.Helper()
	stdout, stderr, code := runCLI(t, db, append([]string{"search", "--resume", name, "--sim", "spark4"}, launchArgs...)...)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	after := storedStudy(t, db, name)
	if after.study.Status != vocab.StatusDone || after.study.Recommendation == nil {
		t.Fatalf("resumed study: status %s, recommendation %v", after.study.Status, after.study.Recommendation)
	}
	byID := map[uint64]*store.Launch{}
	seqs := map[int]bool{}
	for _, l := range after.launches {
		byID[l.ID] = l
		if seqs[l.Seq] {
			t.Errorf("two launches have seq %d", l.Seq)
		}
		seqs[l.Seq] = true
	}
	for _, l := range before {
		got := byID[l.ID]
		if got == nil {
			t.Fatalf("launch %d (seq %d) was committed before the interruption and is gone", l.ID, l.Seq)
		}
		if !reflect.DeepEqual(got, l) {
			t.Errorf("launch %d changed:\nbefore %+v\nafter  %+v", l.ID, l, got)
		}
	}
	// Every launch of the budget is stored, or the study says it left the
	// rest unspent (a confirmation that decided, a last launch no pair
	// can use): nothing was lost or launched twice across the resume.
	if n := len(after.launches); n > budget || !strings.Contains(stdout, fmt.Sprintf(" %d of %d launches", n, budget)) {
		t.Errorf("%d launches stored, budget %d, and the resumed study does not say so\n%s%s", n, budget, stdout, stderr)
	}
	keys := map[string]bool{}
	counted := 0
	for _, tr := range after.trials {
		if keys[tr.Key] {
			t.Errorf("config %q is two trials", tr.Key)
		}
		keys[tr.Key] = true
		counted += tr.Launches
	}
	if counted != len(after.launches) {
		t.Errorf("the trials count %d launches, %d are stored", counted, len(after.launches))
	}
	return after
}

// TestSearchSurvivesFaultyConfigs: a search whose channel caps hang (in
// NCCL's init and mid-table), crash, report wrong results, print garbage
// or print nothing goes on past each of them, records each with its
// cause, never measures one again, and recommends the healthy cap. The
// hung launches end at the 1 s timeout with their whole process group
// (the wrapper's grandchild included); no process and no goroutine
// outlives the search.
func TestSearchSurvivesFaultyConfigs(t *testing.T) {
	t.Parallel()
	mark := processMark(t)
	db := filepath.Join(t.TempDir(), "db")
	// Healthy launches take ~30 ms; on two cores shared with other test
	// binaries, up to a second, and under the race detector more. The
	// timeout must pass every healthy launch: the hung ones wait it out
	// whatever it is.
	timeout := 4 * time.Second
	if raceEnabled {
		timeout = 10 * time.Second
	}
	start := time.Now()
	var stdout, stderr string
	var code int
	withTestLabel(t, func() {
		stdout, stderr, code = runCLI(t, db, "search", "--sim", faultFile(t, "faults.json"), "--band", "512K-4M",
			"--space-only", "--space", "NCCL_MAX_NCHANNELS=unset,1,2,3,4,8,16,32,64", "--sampler", "grid",
			"--budget", "24", "--confirm", "4", "--timeout", timeout.String(), "--wrapper", faultFile(t, "wrapper.sh"), "--json",
			"--base-env", markEnv+"="+mark)
	})
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc searchJSONDoc
	decodeOneJSON(t, stdout, &doc)
	if !reflect.DeepEqual(doc.Recommendation.Env, map[string]string{"NCCL_MAX_NCHANNELS": "8"}) || !doc.Recommendation.Significant {
		t.Errorf("recommendation %+v, want the healthy NCCL_MAX_NCHANNELS=8", doc.Recommendation)
	}
	merged := false
	if doc.Plans != nil {
		for _, m := range doc.Plans.Merged {
			merged = merged || strings.Contains(m.Reason, "cap at or above")
		}
	}
	if !merged {
		t.Errorf("plans %+v: NCCL_MAX_NCHANNELS=64 should be merged by the cap rule", doc.Plans)
	}
	got := storedStudy(t, db, doc.Study)
	want := map[string]struct {
		state, reason, outcome string
	}{
		"1":  {"timeout", "no end within the " + timeout.String() + " timeout, hung after the 1048576-byte row; killed its process group", "timeout"},
		"3":  {"timeout", "hung during NCCL initialisation", "timeout"},
		"2":  {"failed", "killed by signal 6", "failed"},
		"4":  {"invalid", "wrong results at 1M", "invalid"},
		"16": {"failed", "no nccl-tests results table", "failed"},
		"32": {"failed", "the benchmark printed nothing", "failed"},
		"8":  {"complete", "", "ok"},
	}
	launchesOf := map[uint64][]*store.Launch{}
	for _, l := range got.launches {
		launchesOf[l.TrialID] = append(launchesOf[l.TrialID], l)
	}
	seen := map[string]bool{}
	for _, tr := range got.trials {
		v := tr.Config["NCCL_MAX_NCHANNELS"]
		if v == "64" {
			t.Errorf("NCCL_MAX_NCHANNELS=64 is NCCL's own 64 channels here: it runs NCCL's plan and must be merged with the defaults, not launched")
		}
		w, ok := want[v]
		if !ok {
			continue
		}
		seen[v] = true
		if string(tr.State) != w.state || !strings.Contains(tr.Reason, w.reason) {
			t.Errorf("NCCL_MAX_NCHANNELS=%s: trial %s (%s), want %s (%s)", v, tr.State, tr.Reason, w.state, w.reason)
		}
		ls := launchesOf[tr.ID]
		if w.state != "complete" && len(ls) != 1 {
			t.Errorf("NCCL_MAX_NCHANNELS=%s failed and was launched %d times; once is enough", v, len(ls))
		}
		for _, l := range ls {
			if string(l.Outcome) != w.outcome {
				t.Errorf("NCCL_MAX_NCHANNELS=%s: launch %d %s, want %s", v, l.Seq, l.Outcome, w.outcome)
			}
			if w.state == "timeout" && (l.Duration < timeout || l.Duration > timeout+2*time.Second) {
				t.Errorf("NCCL_MAX_NCHANNELS=%s: the hung launch took %s, want the %s timeout and a prompt kill", v, l.Duration, timeout)
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("configs measured: %v; want every one of %v", seen, want)
	}
	// The output that was printed before each fault is kept.
	st := openStore(t, db)
	for _, l := range got.launches {
		if l.Outcome != "timeout" || !strings.Contains(l.Reason, "1048576-byte row") {
			continue
		}
		raw, err := st.RawOutput(l.ID)
		if err != nil || !bytes.Contains(raw.Stdout, []byte("1048576")) {
			t.Errorf("the hung launch's output before the hang was not kept: %v", err)
		}
	}
	t.Logf("search with 2 hangs, a crash, wrong results, garbage and silence: %s, %d launches", took.Round(100*time.Millisecond), len(got.launches))
	assertNoProcessesLeft(t, mark)
	assertNoGoroutinesLeft(t)
}

// TestCtrlCBetweenLaunches: Ctrl-C after a launch has been stored (the
// progress line is printed after the store commits) starts no further
// launch: exit 130, the study interrupted with exactly the launches made,
// and --resume finishes it without losing or repeating any.
func TestCtrlCBetweenLaunches(t *testing.T) {
	mark := markProcesses(t)
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 4/") {
			cancel()
		}
	}, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "20", "--confirm", "4")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "stopped: 4 launches of study s1-512K-4M are saved") || !strings.Contains(stderr, "nccltune search --resume s1-512K-4M --sim spark4") {
		t.Errorf("no account of what was saved and how to go on:\n%s", stderr)
	}
	before := storedStudy(t, db, "s1-512K-4M")
	if before.study.Status != vocab.StatusInterrupted || len(before.launches) != 4 {
		t.Fatalf("status %s with %d launches; want interrupted with the 4 launches made", before.study.Status, len(before.launches))
	}
	for _, l := range before.launches {
		if l.Outcome != "ok" {
			t.Errorf("launch %d: %s %s", l.Seq, l.Outcome, l.Reason)
		}
	}
	assertNoProcessesLeft(t, mark)
	resumeToTheEnd(t, db, "s1-512K-4M", before.launches, 20)
}

// TestCtrlCDuringLaunch: Ctrl-C while a launch runs stops it at once with
// its whole process group (SIGTERM; the wrapper and its grandchild go),
// keeps it on record as interrupted (not as the config's failure), exits
// 130, and --resume finishes the study. No process or goroutine is left.
func TestCtrlCDuringLaunch(t *testing.T) {
	mark := markProcesses(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	hold := filepath.Join(dir, "hold")
	t.Setenv(holdEnv, hold)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go withTestLabel(t, func() {
		_, stderr, code := runWatched(ctx, db, func(line string) {
			if strings.HasPrefix(line, "launch 3/") {
				os.WriteFile(hold, nil, 0o600) // the next launch blocks
			}
		}, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "20", "--confirm", "4",
			"--wrapper", faultFile(t, "wrapper.sh"), "--timeout", "1m")
		done <- result{stderr, code}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(hold + ".started"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fourth launch never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	stopped := time.Now()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("nccltune did not stop within 10 s of Ctrl-C")
	}
	took := time.Since(stopped)
	if res.code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", res.code, res.stderr)
	}
	if took > 2*time.Second {
		t.Errorf("stopping took %s after Ctrl-C", took)
	}
	t.Logf("stopped %s after Ctrl-C", took.Round(time.Millisecond))
	assertNoProcessesLeft(t, mark)
	assertNoGoroutinesLeft(t)

	before := storedStudy(t, db, "s1-512K-4M")
	if before.study.Status != vocab.StatusInterrupted || len(before.launches) != 4 {
		t.Fatalf("status %s with %d launches; want interrupted with 3 launches and the stopped one", before.study.Status, len(before.launches))
	}
	last := before.launches[3]
	if last.Outcome != "failed" || !strings.Contains(last.Reason, "interrupted") || last.Scored {
		t.Errorf("the stopped launch is stored as %s (%s), scored %v", last.Outcome, last.Reason, last.Scored)
	}
	for _, tr := range before.trials {
		if tr.ID == last.TrialID && tr.State != "running" {
			t.Errorf("the interrupted launch's config is marked %s (%s): Ctrl-C is not its fault", tr.State, tr.Reason)
		}
	}
	os.Remove(hold)
	// The same launch settings, the wrapper included: a resume refuses others.
	resumeToTheEnd(t, db, "s1-512K-4M", before.launches, 20, "--wrapper", faultFile(t, "wrapper.sh"))
}

// cliProcess is nccltune running as its own process (this test binary in
// its third role), with its stderr read line by line.
type cliProcess struct {
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	all   []string
	// waited makes wait once: a test may wait while its cleanup does.
	waited sync.Once
	code   int
}

// startCLI starts nccltune with args; env is added to this process's
// environment. The process is killed when the test ends.
func startCLI(t *testing.T, exe string, cred *syscall.Credential, env []string, args ...string) *cliProcess {
	t.Helper()
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe, args...)
	// A $TMPDIR of the test's own: a child the test kills (kill -9, a
	// second Ctrl-C's forced exit aside) leaves its launch directory
	// behind, and the test's $TMPDIR goes with the test. env may name
	// another (it comes last, and the last of a name wins).
	cmd.Env = append(append(os.Environ(), cliChildEnv+"=1", "TMPDIR="+t.TempDir()), env...)
	cmd.Stdout = io.Discard
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &cliProcess{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); p.wait() })
	return p
}

// wait drains stderr, waits for the process and returns its exit code
// (-1 when a signal killed it) and everything it wrote to stderr.
func (p *cliProcess) wait() (int, string) {
	p.waited.Do(func() {
		for range p.lines {
		}
		var ee *exec.ExitError
		if errors.As(p.cmd.Wait(), &ee) {
			p.code = ee.ExitCode()
		}
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.code, strings.Join(p.all, "\n")
}

// waitForHungSimulator waits until a simulated benchmark this test marked
// hangs: it has written the partial JSON file (-J) it writes just before
// it blocks, so it prints nothing more, or, a debug launch, which writes
// none, it has run for half a second.
func waitForHungSimulator(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	seen := map[string]time.Time{}
	for time.Now().Before(deadline) {
		for _, p := range markedProcesses(mark) {
			f := strings.Fields(p)
			if len(f) < 3 || f[2] != "__nccltune_sim" {
				continue
			}
			perIter := false
			for i, a := range f[:len(f)-1] {
				if a == "-J" {
					perIter = true
					if _, err := os.Stat(f[i+1]); err == nil {
						time.Sleep(50 * time.Millisecond) // its last flush
						return
					}
				}
			}
			// A debug launch (the study's first: NCCL's plan) writes no
			// per-iteration file: hung once it has run for half a second,
			// where a healthy simulated launch takes milliseconds.
			if first, ok := seen[f[0]]; !perIter && ok && time.Since(first) > 500*time.Millisecond {
				return
			} else if !ok {
				seen[f[0]] = time.Now()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the simulated benchmark never hung")
}

// TestKill9MidStudyThenResume: nccltune killed with SIGKILL at moments
// around a launch's commit leaves a database that passes bbolt's check
// and holds every launch it reported (at most the one in flight more);
// --resume finishes the study with every launch still there, unchanged,
// no config twice a trial and no launch counted twice.
func TestKill9MidStudyThenResume(t *testing.T) {
	for i, delay := range []time.Duration{0, 7 * time.Millisecond, 19 * time.Millisecond} {
		t.Run(fmt.Sprintf("kill-%dms-after-launch-8", delay.Milliseconds()), func(t *testing.T) {
			mark := markProcesses(t)
			db := filepath.Join(t.TempDir(), "db")
			p := startCLI(t, "", nil, nil, "--db", db, "search", "--sim", "spark4", "--band", "512K-4M",
				"--budget", "24", "--confirm", "4", "--seed", strconv.Itoa(i+1))
			printed := 0
			for line := range p.lines {
				if strings.HasPrefix(line, "launch ") {
					if printed++; printed == 8 {
						time.Sleep(delay)
						p.cmd.Process.Signal(syscall.SIGKILL)
						break
					}
				}
			}
			code, errText := p.wait()
			if code != -1 {
				t.Fatalf("nccltune ended with exit %d before it was killed", code)
			}
			// Launches finish in a few milliseconds: more may have been
			// reported between the 8th line and the kill. Every line it
			// wrote before dying counts as reported.
			printed = 0
			for _, line := range strings.Split(errText, "\n") {
				if strings.HasPrefix(line, "launch ") {
					printed++
				}
			}
			checkBoltFile(t, db)
			before := storedStudy(t, db, "s1-512K-4M")
			if n := len(before.launches); n < printed || n > printed+1 {
				t.Fatalf("%d launches reported, %d stored: only the one in flight may differ", printed, n)
			}
			for i, l := range before.launches {
				if l.Seq != i {
					t.Fatalf("launch %d has seq %d: a reported launch is missing", i, l.Seq)
				}
			}
			// Stored as running; no process holds the database any more, so
			// a reader sees it as interrupted. The kernel drops a killed
			// process's locks as its last descriptor closes, which on a
			// loaded machine can trail the parent's exit status by a moment
			// (its simulator child is still being signalled): give the
			// reader a few seconds, not forever.
			for deadline := time.Now().Add(3 * time.Second); before.study.Status != vocab.StatusInterrupted && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
				before = storedStudy(t, db, "s1-512K-4M")
			}
			if before.study.Status != vocab.StatusInterrupted {
				t.Errorf("the killed study says %s 3 s after the kill, want interrupted", before.study.Status)
			}
			assertNoProcessesLeft(t, mark)
			resumeToTheEnd(t, db, "s1-512K-4M", before.launches, 24)
		})
	}
}

// TestKill9DuringHungLaunch: when nccltune is killed with SIGKILL while a
// launch hangs, the hung benchmark does not run on with nobody left to
// stop it: Linux sends it SIGTERM as its parent dies.
func TestKill9DuringHungLaunch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	mark := markProcesses(t)
	db := filepath.Join(t.TempDir(), "db")
	p := startCLI(t, "", nil, nil, "--db", db, "search", "--sim", "spark4", "--band", "1M",
		"--base-env", "NCCLTUNE_SIM_FAULT=init-hang", "--timeout", "10m")
	waitForHungSimulator(t, mark)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait()
	assertNoProcessesLeft(t, mark)
}

// TestTwoNccltunesOnTheSameDatabase: two searches record studies in one
// database at once, as two lanes tuned side by side would. While one is
// stuck in a hung launch, another runs to the end with all its launches
// stored under its own name; a reader lists both; resuming the live one's
// study is refused, naming its process; and the stuck one, interrupted
// with SIGINT (Ctrl-C), stops its hung launch, keeps the study resumable
// and exits 130, leaving no process behind.
func TestTwoNccltunesOnTheSameDatabase(t *testing.T) {
	mark := markProcesses(t)
	db := filepath.Join(t.TempDir(), "db")
	holder := startCLI(t, "", nil, nil, "--db", db, "search", "--sim", "spark4", "--band", "1M",
		"--base-env", "NCCLTUNE_SIM_FAULT=init-hang", "--timeout", "10m")
	waitForHungSimulator(t, mark)

	_, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "24", "--confirm", "4")
	if code != 0 {
		t.Fatalf("second search beside a running one: exit %d\n%s", code, stderr)
	}
	if s := storedStudy(t, db, "s2-512K-4M"); s.study.Status != vocab.StatusDone || len(s.launches) != 24 || s.study.Launches != 24 {
		t.Errorf("second search: %s, %d launches stored, %d counted; want done with 24", s.study.Status, len(s.launches), s.study.Launches)
	}

	stdout, stderr, code := runCLI(t, db, "history", "--json")
	if code != 0 || !strings.Contains(stdout, `"s1-1M"`) || !strings.Contains(stdout, `"s2-512K-4M"`) {
		t.Errorf("history while a search runs: exit %d\n%s%s", code, stdout, stderr)
	}
	if s := storedStudy(t, db, "s1-1M"); s.study.Status != vocab.StatusRunning {
		t.Errorf("the live search's study reads %s, want running", s.study.Status)
	}

	_, stderr, code = runCLI(t, db, "search", "--resume", "s1-1M", "--sim", "spark4",
		"--base-env", "NCCLTUNE_SIM_FAULT=init-hang", "--timeout", "10m")
	if code == 0 {
		t.Fatal("resuming a study another live nccltune runs was not refused")
	}
	for _, want := range []string{"study s1-1M is being run by another nccltune", fmt.Sprintf("pid %d", holder.cmd.Process.Pid),
		"`nccltune.test search --sim spark4 --band 1M", "wait for it to finish"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("resume's error %q does not say %q", strings.TrimSpace(stderr), want)
		}
	}
	t.Logf("resume refused: %s", strings.TrimSpace(stderr))
	// Renaming it is refused too, and not as a typing mistake: the study
	// and the new name are fine, another process holds the study (exit 1).
	if _, stderr, code := runCLI(t, db, "rename", "s1-1M", "lane-x"); code != 1 || !strings.Contains(stderr, "being run by another nccltune") {
		t.Errorf("rename of a study another live nccltune runs: exit %d, want 1\n%s", code, stderr)
	}

	holder.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	var hcode int
	var hstderr string
	go func() { hcode, hstderr = holder.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("nccltune did not stop within 10 s of SIGINT")
	}
	if hcode != exitInterrupted || !strings.Contains(hstderr, "nccltune search --resume s1-1M") {
		t.Errorf("after SIGINT: exit %d\n%s", hcode, hstderr)
	}
	assertNoProcessesLeft(t, mark)
	if s := storedStudy(t, db, "s1-1M"); s.study.Status != vocab.StatusInterrupted || len(s.launches) != 1 || !strings.Contains(s.launches[0].Reason, "interrupted") {
		t.Errorf("the interrupted study: %s, %d launches", s.study.Status, len(s.launches))
	}
}

// TestTwoSearchesAtOnceOneKilled: two nccltune processes search at once
// on one database; both finish with every launch stored under distinct
// names while a third process lists them. Then, of two more, one is
// killed with SIGKILL: its study reads as interrupted while the other
// goes on to the end.
func TestTwoSearchesAtOnceOneKilled(t *testing.T) {
	mark := markProcesses(t)
	db := filepath.Join(t.TempDir(), "db")
	search := func(seed string) *cliProcess {
		return startCLI(t, "", nil, nil, "--db", db, "search", "--sim", "spark4", "--band", "512K-4M",
			"--budget", "24", "--confirm", "4", "--seed", seed)
	}
	// firstLaunch waits until p has reported a launch (so its study is
	// stored), then drains the rest in the background.
	firstLaunch := func(p *cliProcess) (wait func() (int, string)) {
		for line := range p.lines {
			if strings.HasPrefix(line, "launch ") {
				break
			}
		}
		type result struct {
			code int
			text string
		}
		ch := make(chan result, 1)
		go func() { c, s := p.wait(); ch <- result{c, s} }()
		return func() (int, string) { r := <-ch; return r.code, r.text }
	}
	a, b := search("1"), search("2")
	waitA, waitB := firstLaunch(a), firstLaunch(b)
	hist := exec.Command(os.Args[0], "--db", db, "history", "--json")
	hist.Env = append(os.Environ(), cliChildEnv+"=1")
	out, err := hist.Output()
	if err != nil || !strings.Contains(string(out), `"s1-512K-4M"`) || !strings.Contains(string(out), `"s2-512K-4M"`) {
		t.Errorf("history in a third process during two searches: %v\n%s", err, out)
	}
	for i, wait := range []func() (int, string){waitA, waitB} {
		if code, text := wait(); code != 0 {
			t.Fatalf("search %d beside another: exit %d\n%s", i+1, code, text)
		}
	}
	var both []studyState
	for _, name := range []string{"s1-512K-4M", "s2-512K-4M"} {
		s := storedStudy(t, db, name)
		if s.study.Status != vocab.StatusDone || len(s.launches) != 24 || s.study.Launches != 24 {
			t.Errorf("%s: %s, %d launches stored, %d counted; want done with 24", name, s.study.Status, len(s.launches), s.study.Launches)
		}
		both = append(both, s)
	}
	// They ran at once: each stored launches while the other was running.
	if a, b := both[0].study, both[1].study; !(a.Created.Before(b.Updated) && b.Created.Before(a.Updated)) {
		t.Errorf("the two searches did not overlap: %s–%s and %s–%s", a.Created, a.Updated, b.Created, b.Updated)
	}

	killed, survivor := search("3"), search("4")
	firstLaunch(survivor)
	for line := range killed.lines {
		if strings.HasPrefix(line, "launch ") {
			killed.cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	killed.wait()
	names := map[string]string{}
	deadline := time.Now().Add(3 * time.Second)
	for {
		sums, err := openStore(t, db).Studies()
		if err != nil || len(sums) != 4 {
			t.Fatalf("studies after the kill: %v (%d)", err, len(sums))
		}
		for _, s := range sums[2:] {
			names[s.Name] = s.Status
		}
		interrupted := names["s3-512K-4M"] == vocab.StatusInterrupted || names["s4-512K-4M"] == vocab.StatusInterrupted
		if interrupted || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Which of the two got which name depends on who wrote first.
	var killedName, survivorName string
	for name, status := range names {
		if status == vocab.StatusInterrupted {
			killedName = name
		} else {
			survivorName = name
		}
	}
	if killedName == "" || survivorName == "" {
		t.Fatalf("after one of two searches was killed, their studies read %v; want one interrupted", names)
	}
	_, stderr, code := runCLI(t, db, "show", survivorName)
	if code != 0 {
		t.Fatalf("show %s: exit %d\n%s", survivorName, code, stderr)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		s := storedStudy(t, db, survivorName)
		if s.study.Status == vocab.StatusDone {
			if len(s.launches) != 24 {
				t.Errorf("the search beside the killed one: %d launches stored, want 24", len(s.launches))
			}
			break
		}
		if s.study.Status != vocab.StatusRunning || time.Now().After(deadline) {
			t.Fatalf("the search beside the killed one: %s", s.study.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := storedStudy(t, db, killedName); s.study.Status != vocab.StatusInterrupted {
		t.Errorf("the killed search's study reads %s after the other finished, want interrupted", s.study.Status)
	}
	assertNoProcessesLeft(t, mark)
}
