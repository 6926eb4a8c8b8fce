package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
)

// TestMain lets the test binary act as the simulated benchmark: commands
// run with --sim launch os.Executable() (this binary) as the simulator,
// those run in this process testdata/simchild, or sim.Main in process
// for a plain launch (useSmallSimulator). See faults_test.go for its
// third role.
func TestMain(m *testing.M) {
	sim.RunIfChild()
	// As a stand-in for docker, kubectl or an engine (standin_test.go).
	if role := os.Getenv(standinEnv); role != "" {
		standinMain(role)
	}
	// With NCCLTUNE_TEST_CLI=1 the binary is nccltune itself, for tests
	// that need a real process (kill -9, a second writer, resource limits).
	if os.Getenv(cliChildEnv) == "1" {
		cliChild()
	}
	becomeSubreaper()
	overlapWaits()
	simDir := useSmallSimulator()
	// The in-process commands' databases need not survive a power cut;
	// nccltune run as a process (startCLI) still syncs every commit.
	store.SkipSync = true
	code := m.Run()
	outfile.RemoveTemps() // the runner's launch directory, made once per process
	removeSharedStudies()
	if simDir != "" {
		os.RemoveAll(simDir)
	}
	os.Exit(code)
}

// overlapWaits runs twice GOMAXPROCS parallel tests at once (at least
// 4) unless -parallel says how many: many of this package's tests wait
// on processes, kills and time-outs with their slot idle, and
// TestRecipesAsWritten holds one for its whole run. With GOMAXPROCS slots
// (go test's default) the package took 37 s alone on 2 cores, with 4
// slots 31 s, for the same CPU.
func overlapWaits() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
}

// useSmallSimulator builds testdata/simchild (the simulator alone) and
// points launchflags.SimExecutable at it for the commands the tests run in
// this process, and has the runner run its plain launches in process
// (simInProcess): the tests make thousands of simulated launches, and a
// process start costs this binary, with every package nccltune links and
// the tests' own, about 7 ms of CPU, simchild about 2, sim.Main in
// process none. Commands run as a process of their own (startCLI, the
// recipes' nccltune) still start this binary as their simulator, as
// nccltune starts itself. Where the build fails the tests run with this
// binary as the simulator, only slower. It returns the directory to
// remove.
func useSmallSimulator() string {
	dir, err := os.MkdirTemp("", "nccltune-simchild-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "simchild: the simulated launches start this test binary:", err)
		return ""
	}
	exe := filepath.Join(dir, "simchild")
	out, err := exec.Command("go", "build", "-o", exe, "./testdata/simchild").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "simchild: the simulated launches start this test binary: go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		return ""
	}
	launchflags.SimExecutable = func() (string, error) { return exe, nil }
	runner.InProcess = simInProcess(exe)
	return dir
}

// simInProcess returns the runner.InProcess hook that runs a launch of
// simchild (exe) in this process, as sim.Main, the function simchild
// runs: the same output, JSON file and exit code, without a process
// start for each of the tests' thousands of launches. It takes only the
// plain launches: a profile whose rules never hang (a built-in, or a
// regular JSON file such as the resume tests' fabric, parsed once per
// content), only the arguments the runner gives a simulated launch (no
// --bench-arg, no endless -N 0), and no NCCLTUNE_SIM_FAULT. Every other
// launch (a fault, a hang, a wrapper, a profile file with a hang rule or
// that does not parse, a FIFO) gets its real process, which the tests
// about timeouts, kills and process groups, and the simulator's own
// refusals, need.
func simInProcess(exe string) func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
	hangs := func(p *sim.Profile) bool {
		return slices.ContainsFunc(p.Faults, func(r sim.FaultRule) bool { return r.Fault == sim.FaultHang || r.Fault == sim.FaultInitHang })
	}
	plain := map[string]bool{}
	for _, name := range sim.BuiltinProfiles() {
		if p, err := sim.LoadProfile(name); err == nil {
			plain[name] = !hangs(p)
		}
	}
	// A profile file is read at each launch, as the simulator reads it,
	// and parsed once per content: a test that writes new rules to a file
	// it used gets them. Only a small regular file is read (a FIFO would
	// block here; the simulator refuses it).
	var mu sync.Mutex
	files := map[string]bool{}
	plainFile := func(path string) bool {
		fi, err := os.Stat(path)
		if !strings.HasSuffix(strings.ToLower(path), ".json") || err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			return false
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		ok, seen := files[string(data)]
		if !seen {
			p, err := sim.ParseProfile(data)
			ok = err == nil && !hangs(p)
			files[string(data)] = ok
		}
		return ok
	}
	// The options the runner passes a simulated launch (runner.BenchArgv),
	// each with its value.
	runnerFlags := map[string]bool{
		"--profile": true, "--noise": true, "--seed": true, "--launch": true,
		"--collective": true, "--ranks": true, "--batch": true,
		"-b": true, "-e": true, "-f": true, "-n": true, "-w": true, "-c": true, "-I": true, "-J": true,
	}
	return func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
		if len(argv) < 2 || argv[0] != exe || argv[1] != sim.ChildArg {
			return 0, false
		}
		args := argv[2:]
		if len(args)%2 != 0 {
			return 0, false
		}
		for i := 0; i < len(args); i += 2 {
			if !runnerFlags[args[i]] || args[i] == "--profile" && !plain[args[i+1]] && !plainFile(args[i+1]) {
				return 0, false
			}
		}
		for _, kv := range env {
			if strings.HasPrefix(kv, sim.FaultEnv+"=") {
				return 0, false
			}
		}
		return sim.Main(args, env, stdout, stderr), true
	}
}
