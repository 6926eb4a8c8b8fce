package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/outfile"
)

// The test binary doubles as a fake benchmark: with FAKE_BENCH set it
// behaves as that mode says, so launches go through real processes.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FAKE_BENCH"); mode != "" {
		os.Exit(fakeBench(mode, os.Args[1:]))
	}
	code := m.Run()
	outfile.RemoveTemps() // the launch directory (processLaunchDir)
	os.Exit(code)
}

func fixture(name string) []byte {
	data, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_BENCH_DIR"), name))
	if err != nil {
		panic(err)
	}
	return data
}

func fakeBench(mode string, args []string) int {
	hasArg := func(a string) bool {
		for _, x := range args {
			if x == a {
				return true
			}
		}
		return false
	}
	switch mode {
	case "ok":
		os.Stdout.Write(fixture("ar2_mps_info.txt"))
	case "ok-json":
		// Like nccl-tests 2.19.2+: -J writes the JSON file.
		for i, a := range args {
			if a == "-J" && i+1 < len(args) {
				os.WriteFile(args[i+1], fixture("ar2_full_periter.json"), 0o600)
			}
		}
		os.Stdout.Write(fixture("ar2_full_periter.txt"))
	case "old":
		// nccl-tests before 2.19.2: -I is an unknown option.
		if hasArg("-I") {
			fmt.Println("invalid option 'I'")
			fmt.Println("USAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] ")
			return 0
		}
		os.Stdout.Write(fixture("ar2_mps_info.txt"))
	case "env":
		// Prints the table only if the config reached it.
		if os.Getenv("NCCL_PROTO") != "^LL128" || os.Getenv("NCCL_IB_HCA") != "=mlx5_0,mlx5_1" {
			fmt.Fprintln(os.Stderr, "env not passed")
			return 5
		}
		os.Stdout.Write(fixture("ar2_mps_info.txt"))
	case "bad-proto":
		os.Stdout.Write(fixture("ar2_bad_proto.txt"))
		return 3
	case "crash":
		os.Stdout.Write(fixture("ar2_mps_info.txt")[:3000])
		fmt.Fprintln(os.Stderr, "*** Process received signal ***")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "wrong":
		out := strings.Replace(string(fixture("ar2_mps_info.txt")),
			"1048576        262144     float     sum      -1   508.57    2.06    2.06       0",
			"1048576        262144     float     sum      -1   508.57    2.06    2.06      17", 1)
		out = strings.Replace(out, "# Out of bounds values : 0 OK", "# Out of bounds values : 1 FAILED", 1)
		fmt.Print(out)
	case "wrong-exit":
		// nccl-tests 2.19: the table with #wrong, then "Test failure" and a
		// non-zero exit status.
		out := strings.Replace(string(fixture("ar2_mps_info.txt")),
			"1048576        262144     float     sum      -1   508.57    2.06    2.06       0",
			"1048576        262144     float     sum      -1   508.57    2.06    2.06      17", 1)
		out = strings.Replace(out, "# Out of bounds values : 0 OK", "# Out of bounds values : 1 FAILED", 1)
		fmt.Print(out)
		fmt.Println(" .. fakehost0 pid 2101: Test failure common.cu:1454")
		return 7
	case "orphan":
		// Exits at once, leaving a child that holds its stdout and stderr
		// (a helper a wrapper started, say).
		child := exec.Command("sleep", "300")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		child.Start()
		os.WriteFile(os.Getenv("FAKE_BENCH_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		os.Stdout.Write(fixture("ar2_mps_info.txt"))
	case "garbage":
		fmt.Println("\x00\x01 segfault? ]]] 12 abc")
	case "silent":
	case "truncated":
		data := string(fixture("ar2_mps_info.txt"))
		fmt.Print(data[:strings.Index(data, "# Out of bounds")])
	case "hang":
		// A rank that never finishes, with a child of its own, as NCCL on an
		// unsupported GPU does; the child writes its pid for the test.
		os.Stdout.Write(fixture("ar2_mps_info.txt")[:2000])
		child := exec.Command("sleep", "300")
		child.Start()
		os.WriteFile(os.Getenv("FAKE_BENCH_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		// Ignore SIGTERM so that only the SIGKILL escalation can end it.
		signalIgnoreTerm()
		time.Sleep(300 * time.Second)
	}
	return 0
}

func fakeSpec(t *testing.T, mode string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The fake benchmark prints the parser's fixtures (real nccl-tests output).
	abs, _ := filepath.Abs("../internal/benchfmt/testdata/fixtures")
	t.Setenv("FAKE_BENCH", mode)
	t.Setenv("FAKE_BENCH_DIR", abs)
	return Spec{Bench: exe, MinBytes: 32 << 10, MaxBytes: 64 << 20, Timeout: 20 * time.Second}
}

func TestRunOutcomes(t *testing.T) {
	tests := []struct {
		mode    string
		outcome benchfmt.Outcome
		reason  string // substring of Reason
		rows    int
	}{
		{"ok", benchfmt.OK, "", 12},
		{"bad-proto", benchfmt.Failed, "invalid usage", 0},
		{"crash", benchfmt.Failed, "killed by signal 9", -1},
		{"wrong", benchfmt.Invalid, "wrong results at 1M (#wrong 17)", 12},
		{"wrong-exit", benchfmt.Invalid, "wrong results at 1M (#wrong 17): never use this config; it corrupts data (exit status 7)", 12},
		{"garbage", benchfmt.Failed, "no nccl-tests results table", 0},
		{"silent", benchfmt.Failed, "printed nothing", 0},
		{"truncated", benchfmt.Failed, "cut short", 12},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			l, err := Run(context.Background(), fakeSpec(t, tt.mode))
			if err != nil {
				t.Fatal(err)
			}
			if l.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s", l.Outcome, l.Reason, tt.outcome)
			}
			if !strings.Contains(l.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", l.Reason, tt.reason)
			}
			if tt.rows >= 0 && (l.Result == nil && tt.rows > 0 || l.Result != nil && len(l.Result.Rows) != tt.rows) {
				t.Errorf("rows: got %v, want %d", l.Result, tt.rows)
			}
			if len(l.Stdout)+len(l.Stderr) == 0 && tt.mode != "silent" {
				t.Errorf("output was not kept")
			}
		})
	}
}

func TestRunPassesEnv(t *testing.T) {
	spec := fakeSpec(t, "env")
	spec.Config = map[string]string{"NCCL_PROTO": "^LL128"}
	spec.BaseEnv = map[string]string{"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
	l, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if l.Outcome != benchfmt.OK {
		t.Fatalf("outcome %s: %s", l.Outcome, l.Reason)
	}
	want := []string{"NCCL_IB_HCA==mlx5_0,mlx5_1", "NCCL_PROTO=^LL128"}
	if strings.Join(l.Env, " ") != strings.Join(want, " ") {
		t.Errorf("recorded env %q, want %q", l.Env, want)
	}
}

// perIterLaunch runs the fake benchmark once with per-iteration JSON and
// fails the test unless it ran and wrote some.
func perIterLaunch(t *testing.T) *benchfmt.Launch {
	t.Helper()
	spec := fakeSpec(t, "ok-json")
	spec.PerIter = true
	l, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if l.Outcome != benchfmt.OK || len(l.JSON) == 0 {
		t.Fatalf("outcome %s (%s), %d JSON bytes", l.Outcome, l.Reason, len(l.JSON))
	}
	return l
}

func TestRunPerIterationJSON(t *testing.T) {
	l := perIterLaunch(t)
	if !strings.Contains(strings.Join(l.Argv, " "), "-I 1 -J ") {
		t.Errorf("argv %q lacks -I 1 -J", l.Argv)
	}
	row := l.Result.Rows[len(l.Result.Rows)-1]
	if row.Out.Iter == nil || len(row.Out.Iter.TimesUS) != 20 {
		t.Fatalf("per-iteration samples not taken from the JSON: %+v", row.Out.Iter)
	}
}

// TestLaunchesShareOneDirectory: launches without a WorkDir write their
// JSON to one directory for the process, not to one made per launch (a
// mkdir and a rmdir per launch were a good part of a search's CPU), each
// under a name of its own, removed once the launch is read.
func TestLaunchesShareOneDirectory(t *testing.T) {
	var dirs []string
	for i := 0; i < 2; i++ {
		l := perIterLaunch(t)
		path := ""
		for j, a := range l.Argv {
			if a == "-J" && j+1 < len(l.Argv) {
				path = l.Argv[j+1]
			}
		}
		if path == "" {
			t.Fatalf("argv %q names no JSON file", l.Argv)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("launch %d left its JSON file %s (stat: %v)", i, path, err)
		}
		dirs = append(dirs, filepath.Dir(path))
	}
	if dirs[0] != dirs[1] {
		t.Errorf("the launches wrote to %s and %s; want one directory for the process", dirs[0], dirs[1])
	}
	if fi, err := os.Stat(dirs[0]); err != nil || !fi.IsDir() {
		t.Errorf("the launch directory %s is gone before the process ends: %v", dirs[0], err)
	}
}

// TestLaunchFileNamesUnique: launches running at once in one process
// never share a file name.
func TestLaunchFileNamesUnique(t *testing.T) {
	const goroutines, each = 8, 200
	names := make(chan string, goroutines*each)
	done := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		go func() {
			for i := 0; i < each; i++ {
				names <- launchFileName("launch")
			}
			done <- struct{}{}
		}()
	}
	for g := 0; g < goroutines; g++ {
		<-done
	}
	close(names)
	// Uniqueness within the process rests on the sequence number, not on
	// the clock (two launches may start in one tick): each name's is its
	// own.
	seen, seqs := map[string]bool{}, map[string]bool{}
	for n := range names {
		if seen[n] {
			t.Fatalf("%s given twice", n)
		}
		seen[n] = true
		f := strings.Split(strings.TrimSuffix(n, ".json"), "-")
		if len(f) != 4 || f[1] != strconv.Itoa(os.Getpid()) || seqs[f[2]] {
			t.Fatalf("%s: want launch-PID-SEQ-NANOS with a sequence number no other name has", n)
		}
		seqs[f[2]] = true
	}
}

func TestRunFallsBackWithoutPerIteration(t *testing.T) {
	spec := fakeSpec(t, "old")
	spec.PerIter = true
	for i := 0; i < 2; i++ {
		l, err := Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if l.Outcome != benchfmt.OK {
			t.Fatalf("launch %d: outcome %s: %s", i, l.Outcome, l.Reason)
		}
		if strings.Contains(strings.Join(l.Argv, " "), "-I 1") {
			t.Errorf("launch %d still asks for -I 1: %q", i, l.Argv)
		}
	}
}

// TestRunTimeoutKillsProcessGroup: a benchmark that ignores SIGTERM and
// has a child of its own is killed at the timeout, child included.
func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	old := killGrace
	killGrace = 300 * time.Millisecond
	defer func() { killGrace = old }()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_BENCH_PIDFILE", pidFile)
	spec := fakeSpec(t, "hang")
	spec.Timeout = 1 * time.Second

	start := time.Now()
	l, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the hung launch took %s to stop", took)
	}
	if l.Outcome != benchfmt.TimedOut || !strings.Contains(l.Reason, "1s timeout") {
		t.Fatalf("outcome %s: %s", l.Outcome, l.Reason)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake benchmark did not start its child: %v", err)
	}
	pid, _ := strconv.Atoi(string(data))
	assertGone(t, pid)
}

// TestRunCancelStopsLaunch: Ctrl-C (a cancelled context) stops the launch
// and reports the cancellation, with the launch kept for the record.
func TestRunCancelStopsLaunch(t *testing.T) {
	old := killGrace
	killGrace = 300 * time.Millisecond
	defer func() { killGrace = old }()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_BENCH_PIDFILE", pidFile)
	spec := fakeSpec(t, "hang")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	l, err := Run(ctx, spec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if l == nil || l.Outcome != benchfmt.Failed || !strings.Contains(l.Reason, "interrupted") {
		t.Fatalf("launch %+v", l)
	}
	data, _ := os.ReadFile(pidFile)
	if pid, err := strconv.Atoi(string(data)); err == nil {
		assertGone(t, pid)
	}
}

// assertGone fails unless pid has exited (a zombie awaiting its reaper
// counts as gone: it runs nothing).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("process %d survived the launch", pid)
	syscall.Kill(pid, syscall.SIGKILL)
}

func TestRunMissingBenchmark(t *testing.T) {
	_, err := Run(context.Background(), Spec{Bench: "/nonexistent/all_reduce_perf"})
	if !errors.Is(err, ErrBenchNotFound) || !strings.Contains(err.Error(), "--bench") {
		t.Fatalf("err %v, want ErrBenchNotFound naming --bench", err)
	}
	_, err = Run(context.Background(), Spec{Launcher: "mpirun", MPIRun: "/nonexistent/mpirun"})
	if !errors.Is(err, ErrLauncherNotFound) {
		t.Fatalf("err %v, want ErrLauncherNotFound", err)
	}
}

// TestWhyNotRunnable: a path the user gave is named as a path, with what
// is wrong with it; only a bare name is "not on PATH".
func TestWhyNotRunnable(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"all_reduce_perf", "all_reduce_perf is not on PATH"},
		{"/opt/nope/all_reduce_perf", "/opt/nope/all_reduce_perf does not exist: there is no directory /opt/nope"},
		{filepath.Join(dir, "gone"), filepath.Join(dir, "gone") + " does not exist"},
		{dir, dir + " is a directory"},
		{plain, plain + " is not executable"},
	} {
		if got := whyNotRunnable(tc.name); !strings.HasPrefix(got, tc.want) || strings.Contains(tc.name, "/") && strings.Contains(got, "PATH") {
			t.Errorf("whyNotRunnable(%q) = %q, want %q…", tc.name, got, tc.want)
		}
	}
}

// TestLaunchDirRemadeWhenNotOurs: a launch directory that is no longer
// the private one MkdirTemp made (opened to others, or replaced by a link
// after a /tmp cleaner removed it) is not written to again.
func TestLaunchDirRemadeWhenNotOurs(t *testing.T) {
	first, err := processLaunchDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(first, 0o777); err != nil {
		t.Fatal(err)
	}
	second, err := processLaunchDir()
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("the launch directory %s, opened to others, is used again", first)
	}
	os.Remove(first)
	elsewhere := t.TempDir()
	os.Remove(second)
	if err := os.Symlink(elsewhere, second); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(second)
	if third, err := processLaunchDir(); err != nil || third == second {
		t.Fatalf("the launch directory %s, now a link to %s, is used again (%v)", second, elsewhere, err)
	}
}
