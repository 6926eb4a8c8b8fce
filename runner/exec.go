package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/vocab"
)

// ErrBenchNotFound reports a benchmark executable that is not there. It
// is a fabric failure (vocab.ErrFabric, exit code 3) wherever it surfaces.
var ErrBenchNotFound = vocab.Mark(vocab.ErrFabric, errors.New("benchmark not found"))

// killGrace is how long a launch gets after SIGTERM before SIGKILL. mpirun
// needs a moment to take down remote ranks; a SIGKILLed mpirun orphans them.
var killGrace = 3 * time.Second

// outputGrace is how long a launch waits, once the benchmark has exited,
// for children it left behind to close its stdout and stderr.
var outputGrace = time.Second

// perIterUnsupported remembers benchmarks that rejected -I/-J (nccl-tests
// older than 2.19.2), so later launches go straight to text output.
var perIterUnsupported sync.Map

// Run performs one launch and classifies its outcome. It returns an error
// only when nothing could be launched or ctx was cancelled (the killed
// launch returned too); a benchmark that fails, hangs or reports wrong
// results is a Launch with that Outcome and a nil error.
func Run(ctx context.Context, spec Spec) (*benchfmt.Launch, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkExecutables(spec); err != nil {
		return nil, err
	}
	flavor := spec.MPIFlavor
	if spec.Launcher == "mpirun" && spec.Sim == nil && flavor == "" {
		f, err := DetectMPIFlavor(ctx, spec.MPIRun)
		if err != nil {
			return nil, err
		}
		flavor = f
	}
	perIter := spec.PerIter && !spec.torch() && spec.Batch == nil // the torch script and a batch print samples themselves
	if _, no := perIterUnsupported.Load(benchKey(spec)); no {
		perIter = false
	}
	l, err := runOnce(ctx, spec, flavor, perIter)
	if err == nil && perIter && rejectedPerIter(l) {
		perIterUnsupported.Store(benchKey(spec), true)
		l, err = runOnce(ctx, spec, flavor, false)
	}
	return l, err
}

func benchKey(s Spec) string {
	if s.Sim != nil {
		return s.Sim.Executable
	}
	return s.BenchPath()
}

// rejectedPerIter recognises nccl-tests' answer to an unknown option: it
// prints "invalid option" and its usage, and runs nothing.
func rejectedPerIter(l *benchfmt.Launch) bool {
	out := string(l.Stdout) + string(l.Stderr)
	return strings.Contains(out, "USAGE:") && strings.Contains(out, "invalid option") &&
		(l.Result == nil || len(l.Result.Rows) == 0)
}

func checkExecutables(spec Spec) error {
	if spec.Sim != nil {
		if spec.Sim.Executable == "" {
			return fmt.Errorf("simulated fabric: no executable to run it with")
		}
		return checkPrefix(spec)
	}
	switch spec.Launcher {
	case "mpirun":
		name := cmp.Or(spec.MPIRun, "mpirun")
		if _, err := lookPath(name); err != nil {
			return fmt.Errorf("%w: %s — install Open MPI or MPICH, or use --launcher local or srun", ErrLauncherNotFound, whyNotRunnable(name))
		}
		return nil // the benchmark lives on the ranks' hosts; mpirun reports if it is missing there
	case "srun":
		if _, err := lookPath("srun"); err != nil {
			return fmt.Errorf("%w: srun is not on PATH — run inside a Slurm allocation, or use --launcher mpirun or local", ErrLauncherNotFound)
		}
		return nil
	}
	if spec.torch() {
		return checkTorchLocal(spec)
	}
	if len(spec.Prefix) > 0 {
		// The wrapper runs the benchmark (perhaps elsewhere): only it must be here.
		return checkPrefix(spec)
	}
	return checkBench(spec)
}

// checkPrefix refuses a --prefix or --wrapper program that a local launch
// cannot start: the user's error, not vocab.ErrFabric.
func checkPrefix(spec Spec) error {
	if len(spec.Prefix) == 0 {
		return nil
	}
	if _, err := lookPath(spec.Prefix[0]); err != nil {
		return fmt.Errorf("--prefix/--wrapper: %s — give the program that runs in front of the benchmark, e.g. --wrapper scripts/fakehost.sh", whyNotRunnable(spec.Prefix[0]))
	}
	return nil
}

// checkBench refuses a benchmark that is not there, and says how to get it.
func checkBench(spec Spec) error {
	bench := spec.BenchPath()
	if _, err := lookPath(bench); err != nil {
		op := spec.Op.OrAllReduce()
		if spec.Bench != "" && bench != spec.Bench {
			return fmt.Errorf("%w: %s (the %s benchmark beside --bench %s) is not there or not executable — build every nccl-tests binary (make in nccl-tests), or pass --bench DIR/%s", ErrBenchNotFound, bench, op, spec.Bench, op.Benchmark())
		}
		return fmt.Errorf("%w: %s — build nccl-tests (github.com/NVIDIA/nccl-tests) and pass --bench PATH/TO/%s or its build directory, or try --sim spark4", ErrBenchNotFound, whyNotRunnable(bench), op.Benchmark())
	}
	return nil
}

// lookPath is exec.LookPath for a program that must also be a regular
// file (input.Regular): LookPath takes a FIFO too.
func lookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if _, err := input.Regular(path); err != nil {
		return "", err
	}
	return path, nil
}

// whyNotRunnable says why lookPath refused name: a path as a path, only a
// bare name as "not on PATH".
func whyNotRunnable(name string) string {
	if !strings.Contains(name, string(filepath.Separator)) {
		found, err := exec.LookPath(name)
		if err != nil {
			return name + " is not on PATH"
		}
		name = found // on PATH, but not a regular file (lookPath)
	}
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if dir := filepath.Dir(name); !isDir(dir) {
			return name + " does not exist: there is no directory " + dir
		}
		return name + " does not exist"
	case err != nil:
		return name + ": " + err.Error()
	case fi.IsDir():
		return name + " is a directory"
	case !fi.Mode().IsRegular():
		return name + " is " + input.Describe(fi.Mode()) + ", not a program file"
	}
	return name + " is not executable (chmod +x it, or check that its file system is not mounted noexec)"
}

func runOnce(ctx context.Context, spec Spec, flavor string, perIter bool) (*benchfmt.Launch, error) {
	files, err := prepareLaunchFiles(&spec, perIter)
	if err != nil {
		return nil, err
	}
	defer files.cleanup()
	cmdSpec, err := spec.BuildCommand(flavor, files.jsonPath)
	if err != nil {
		return nil, err
	}

	l := &benchfmt.Launch{Op: spec.Op.OrAllReduce(), Argv: cmdSpec.Argv, Env: cmdSpec.Env, Simulated: spec.Sim != nil}
	runCtx := ctx
	var cancelTimeout context.CancelFunc = func() {}
	if spec.Timeout > 0 {
		runCtx, cancelTimeout = context.WithTimeout(ctx, spec.Timeout)
	}
	defer cancelTimeout()

	var stdout, stderr bytes.Buffer
	exitCode, stopped, inProcess := runInProcess(runCtx, cmdSpec, &stdout, &stderr, l)
	if !inProcess {
		waitErr, s, err := runProcess(runCtx, cmdSpec, &stdout, &stderr, l)
		if err != nil {
			return nil, err
		}
		exitCode, stopped = exitCodeOf(waitErr), s
	}
	l.Duration = time.Since(l.Start)
	l.Stdout, l.Stderr = stdout.Bytes(), stderr.Bytes()
	l.JSON = files.readJSON()
	l.ExitCode = exitCode

	switch {
	case stopped && ctx.Err() != nil: // Ctrl-C: not the config's fault
		parseStopped(l, spec)
		l.Outcome, l.Reason = benchfmt.Failed, benchfmt.ReasonInterrupted
		return l, ctx.Err()
	case stopped:
		parseStopped(l, spec)
		l.Outcome, l.Reason = benchfmt.TimedOut, timeoutReason(spec.Timeout, l)
		return l, nil
	case spec.Batch != nil:
		classifyBatch(l)
		return l, nil
	}
	classify(l)
	return l, nil
}

// parseStopped keeps what a stopped launch printed: a batch's rounds so
// far, or one run's rows.
func parseStopped(l *benchfmt.Launch, spec Spec) {
	if spec.Batch != nil {
		l.BatchOutput, _ = benchfmt.ParseBatch(append(append([]byte{}, l.Stdout...), l.Stderr...))
		return
	}
	l.Result, _ = benchfmt.ParseLaunch(l)
}

// launchFiles are the files one launch needs beside its command.
type launchFiles struct {
	jsonPath string
	planPath string // the batch plan written for this launch, "" for none
	ownFiles bool   // jsonPath and planPath are in launchDir: cleanup removes them
	// tmpDir is a directory of this launch alone, for the torch script's
	// fixed name; removeDir removes it, also at exit.
	tmpDir    string
	removeDir func()
}

// launchDir is the temporary directory this process's launches write
// their JSON output and batch plans to when the spec names no WorkDir:
// made once, not per launch (a mkdir and rmdir were a good part of a
// launch's CPU), and removed at exit (outfile.RemoveAtExit).
var launchDir struct {
	sync.Mutex
	path string
}

// processLaunchDir returns launchDir's path, making the directory if
// there is none yet or if it went away (a /tmp cleaner, RemoveTemps).
func processLaunchDir() (string, error) {
	launchDir.Lock()
	defer launchDir.Unlock()
	if launchDir.path != "" && ownPrivateDir(launchDir.path) {
		return launchDir.path, nil
	}
	d, err := makeLaunchDir()
	if err != nil {
		return "", err
	}
	outfile.RemoveAtExit(d)
	launchDir.path = d
	return d, nil
}

// makeLaunchDir makes a private temporary directory for launch files.
func makeLaunchDir() (string, error) {
	d, err := os.MkdirTemp("", "nccltune-launch-")
	if err != nil {
		return "", fmt.Errorf("making a directory for the benchmark's JSON output: %w (set TMPDIR to a writable directory, or give --work-dir)", err)
	}
	return d, nil
}

// ownPrivateDir reports whether path is still the directory MkdirTemp
// made (not a link, this user's, closed to others): if a /tmp cleaner
// removed it, another user could make one there and swap the files.
func ownPrivateDir(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

// launchSeq numbers this process's launch files: concurrent launches may
// start in the same clock tick.
var launchSeq atomic.Uint64

// launchFileName is a name unique across launches and processes sharing
// the directory: the pid, a sequence number, and the time.
func launchFileName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d-%d.json", prefix, os.Getpid(), launchSeq.Add(1), time.Now().UnixNano())
}

// prepareLaunchFiles chooses the JSON output path (with perIter) and
// writes the torch script and batch plan the launch needs.
func prepareLaunchFiles(spec *Spec, perIter bool) (launchFiles, error) {
	var f launchFiles
	needScript := spec.torch() && spec.TorchScript == ""
	if !perIter && !needScript && spec.Batch == nil {
		return f, nil
	}
	dir := spec.WorkDir
	switch {
	case dir != "":
	case needScript: // its fixed name needs a directory of its own
		d, err := makeLaunchDir()
		if err != nil {
			return f, err
		}
		dir, f.tmpDir, f.removeDir = d, d, outfile.RemoveAtExit(d)
	default:
		d, err := processLaunchDir()
		if err != nil {
			return f, err
		}
		dir, f.ownFiles = d, true
	}
	if perIter {
		f.jsonPath = filepath.Join(dir, launchFileName("launch"))
	}
	if needScript {
		path, err := WriteTorchScript(dir)
		if err != nil {
			f.cleanup()
			return launchFiles{}, err
		}
		spec.TorchScript = path
	}
	if spec.Batch != nil {
		path, err := writeBatchPlan(dir, spec.Batch)
		if err != nil {
			f.cleanup()
			return launchFiles{}, err
		}
		spec.batchPlanPath, f.planPath = path, path
	}
	return f, nil
}

// readJSON returns what the benchmark wrote to the JSON file and removes
// the file unless cleanup removes its directory.
func (f launchFiles) readJSON() []byte {
	if f.jsonPath == "" {
		return nil
	}
	data, err := os.ReadFile(f.jsonPath)
	if f.tmpDir == "" {
		os.Remove(f.jsonPath)
	}
	if err != nil {
		return nil
	}
	return data
}

func (f launchFiles) cleanup() {
	switch {
	case f.removeDir != nil:
		f.removeDir()
	case f.ownFiles: // also where readJSON never ran
		if f.jsonPath != "" {
			os.Remove(f.jsonPath)
		}
		if f.planPath != "" {
			os.Remove(f.planPath)
		}
	case f.planPath != "":
		os.Remove(f.planPath) // the plan is this launch's alone: not left in the user's work dir
	}
}

// InProcess, when set, may run a launch's command in this process: it
// gets the argv and the process's whole environment, writes its output,
// and returns its exit code and true; false (before writing anything)
// leaves it to a real process. Only tests set it, for their thousands of
// simulated launches.
var InProcess func(argv, env []string, stdout, stderr io.Writer) (exitCode int, ok bool)

// processEnv is the whole environment the command runs with: nccltune's
// own, then the launch's variables, which win.
func (c Command) processEnv() []string {
	return (&exec.Cmd{Env: append(os.Environ(), c.Env...)}).Environ()
}

// runInProcess runs the command through InProcess when that takes it
// (ok); a ctx that ended meanwhile counts as stopped by SIGTERM.
func runInProcess(ctx context.Context, cmdSpec Command, stdout, stderr io.Writer, l *benchfmt.Launch) (exitCode int, stopped, ok bool) {
	hook := InProcess
	if hook == nil {
		return 0, false, false
	}
	l.Start = time.Now()
	code, ok := hook(cmdSpec.Argv, cmdSpec.processEnv(), stdout, stderr)
	if !ok {
		return 0, false, false
	}
	if ctx.Err() != nil {
		return 128 + int(syscall.SIGTERM), true, true
	}
	return code, false, true
}

// runProcess starts the command in a process group of its own, sets
// l.Start, and waits for it to exit or for ctx to end (then the group is
// stopped: stopped is true). err is for a command that could not start.
func runProcess(ctx context.Context, cmdSpec Command, stdout, stderr *bytes.Buffer, l *benchfmt.Launch) (waitErr error, stopped bool, err error) {
	cmd := exec.Command(cmdSpec.Argv[0], cmdSpec.Argv[1:]...)
	cmd.Env = cmdSpec.processEnv()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A child holding the output open must not keep Wait going.
	cmd.WaitDelay = outputGrace
	// Own process group: the timeout kills everything it started, and a
	// terminal's Ctrl-C reaches nccltune alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// If nccltune is killed, the benchmark gets SIGTERM (Linux). The
	// signal follows the starting thread, so it stays locked until Wait.
	setParentDeathSignal(cmd.SysProcAttr)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	l.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("%w: starting %s: %v", ErrBenchNotFound, cmdSpec.Argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	select {
	case waitErr = <-done:
	case <-ctx.Done():
		stopped = true
		waitErr = killGroup(cmd.Process.Pid, done)
	}
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		waitErr = nil // it exited 0; its leftovers are killed below
	}
	// No child left in the group may outlive the launch.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return waitErr, stopped, nil
}

// killGroup stops a process group: SIGTERM, then SIGKILL after killGrace.
func killGroup(pid int, done <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(killGrace):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return <-done
}

// exitText names an exit code; codes above 128 are how a signal death is
// recorded (see exitCodeOf).
func exitText(code int) string {
	if code > 128 && code < 128+65 {
		sig := syscall.Signal(code - 128)
		return fmt.Sprintf("killed by signal %d (%s)", code-128, sig)
	}
	return fmt.Sprintf("exit status %d", code)
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// classify sets Outcome and Reason for a launch that ended by itself.
func classify(l *benchfmt.Launch) {
	res, perr := benchfmt.ParseLaunch(l)
	l.Result = res
	switch {
	case l.ExitCode != 0 && res != nil && res.Invalid() != "":
		// nccl-tests exits non-zero after reporting wrong results.
		l.Outcome = benchfmt.Invalid
		l.Reason = fmt.Sprintf("%s (%s)", res.Invalid(), exitText(l.ExitCode))
	case l.ExitCode != 0 && torchScriptLacks(l, "--op"):
		l.Outcome = benchfmt.Failed
		l.Reason = fmt.Sprintf("%s: the torch script (--torch-script) is a copy from before it took --op and measures all_reduce only; copy nccltune's scripts/%s over it (it measures every op)", exitText(l.ExitCode), TorchScriptName)
	case l.ExitCode != 0:
		l.Outcome = benchfmt.Failed
		l.Reason = fmt.Sprintf("%s: %s", exitText(l.ExitCode), failureCause(l, perr))
	case res != nil && res.Instrument == benchfmt.InstrumentTorch && len(res.Rows) > 0 && res.Op().OrAllReduce() != l.Op.OrAllReduce():
		// Never store one op's times as another's.
		l.Outcome = benchfmt.Failed
		l.Reason = fmt.Sprintf("the torch script measured %s, not %s: a --bench-arg gave it another --op, or its copy (--torch-script) does not honour --op; leave --op to nccltune, and copy scripts/%s again", res.Op().OrAllReduce(), l.Op.OrAllReduce(), TorchScriptName)
	case perr != nil || res == nil || len(res.Rows) == 0:
		l.Outcome = benchfmt.Failed
		l.Reason = "exit status 0 but " + failureCause(l, perr)
	case !res.Complete:
		l.Outcome = benchfmt.Failed
		l.Reason = "output was cut short before nccl-tests' closing lines (" + lastLine(l) + ")"
	case res.Invalid() != "":
		l.Outcome = benchfmt.Invalid
		l.Reason = res.Invalid()
	default:
		l.Outcome = benchfmt.OK
	}
	// A reason quotes the benchmark's output and reaches terminals.
	l.Reason = safetext.Escape(l.Reason)
}

// failureCause names the most specific cause the output offers.
func failureCause(l *benchfmt.Launch, perr error) string {
	var fe *benchfmt.FailureError
	if errors.As(perr, &fe) {
		return hint(fe.Error())
	}
	if l.Result != nil && len(l.Result.Errors) > 0 {
		return hint(l.Result.Errors[0])
	}
	if len(bytes.TrimSpace(l.Stdout)) == 0 && len(bytes.TrimSpace(l.Stderr)) == 0 {
		return "the benchmark printed nothing"
	}
	if perr != nil {
		return perr.Error() + "; last output: " + lastLine(l)
	}
	return "last output: " + lastLine(l)
}

// hint adds the fix the field found for well-known launcher errors.
func hint(msg string) string {
	l := strings.ToLower(msg)
	switch {
	case strings.Contains(l, "allow-run-as-root") || strings.Contains(l, "run as root"):
		return msg + " — add --mpi-arg=--allow-run-as-root"
	case strings.Contains(l, "corresponding process entry"):
		return msg + " — MPI wired up over an interface both hosts share (docker0?): pin it with --mpi-arg=--mca --mpi-arg=oob_tcp_if_include --mpi-arg=IFACE (and btl_tcp_if_include)"
	}
	return msg
}

func timeoutReason(timeout time.Duration, l *benchfmt.Launch) string {
	where := "during NCCL initialisation (no table row printed)"
	if l.Result != nil && len(l.Result.Rows) > 0 {
		last := l.Result.Rows[len(l.Result.Rows)-1]
		where = fmt.Sprintf("after the %d-byte row", last.Bytes)
	}
	return fmt.Sprintf("no end within the %s timeout, hung %s; killed its process group", timeout, where)
}

func lastLine(l *benchfmt.Launch) string {
	for _, b := range [][]byte{l.Stderr, l.Stdout} {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if s := strings.TrimSpace(lines[len(lines)-1]); s != "" {
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			return s
		}
	}
	return "nothing"
}
