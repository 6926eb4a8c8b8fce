package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/runner"
)

// TestSimInProcessIsTheProcess: the launches the tests run in process
// (runner.InProcess, simInProcess) print what simchild prints as a
// process, byte for byte, with its exit code; the launches that need a
// process are left to one.
func TestSimInProcessIsTheProcess(t *testing.T) {
	t.Parallel()
	exe, err := launchflags.SimExecutable()
	if err != nil || runner.InProcess == nil {
		t.Skip("testdata/simchild was not built: every launch runs as a process")
	}
	json := filepath.Join(t.TempDir(), "launch.json")
	plain := []string{exe, sim.ChildArg, "--profile", "spark4", "--noise", "1", "--seed", "5", "--launch", "1",
		"-b", "524288", "-e", "8388608", "-f", "2", "-n", "1", "-w", "1", "-c", "0"}
	for _, tt := range []struct {
		name string
		argv []string
		env  []string
	}{
		{"plain", plain, nil},
		{"debug, wrong results", plain[:len(plain)-2], []string{"NCCL_DEBUG=INFO", "NCCL_PROTO=LL128"}}, // checked: no -c 0
		{"per-iteration JSON", append(plain[:len(plain):len(plain)], "-I", "1", "-J", json), nil},
		{"other op, ranks", append(plain[:len(plain):len(plain)], "--collective", "all_gather", "--ranks", "2"), nil},
		// A profile file without a hang rule (the resume tests' fabric),
		// twice: parsed once, the second launch from the cache.
		{"a profile file that never hangs", append([]string{exe, sim.ChildArg, "--profile", ownSizeFabric}, plain[4:]...), nil},
		{"the same file again", append([]string{exe, sim.ChildArg, "--profile", ownSizeFabric, "--collective", "broadcast"}, plain[4:]...), nil},
	} {
		env := append(os.Environ(), tt.env...)
		var inOut, inErr bytes.Buffer
		code, ok := runner.InProcess(tt.argv, env, &inOut, &inErr)
		if !ok {
			t.Fatalf("%s: not run in process", tt.name)
		}
		inJSON, _ := os.ReadFile(json)
		os.Remove(json)
		cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		procCode := 0
		if errors.As(err, &ee) {
			procCode = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		procJSON, _ := os.ReadFile(json)
		os.Remove(json)
		// The JSON's start and end times are the wall clock's, to the
		// second: two runs under load may straddle one.
		if code != procCode || inOut.String() != out.String() || inErr.String() != errOut.String() || !bytes.Equal(clockless(inJSON), clockless(procJSON)) {
			t.Errorf("%s: in process exit %d, %d+%d bytes, JSON %d bytes; as a process exit %d, %d+%d bytes, JSON %d bytes",
				tt.name, code, inOut.Len(), inErr.Len(), len(inJSON), procCode, out.Len(), errOut.Len(), len(procJSON))
		}
		if tt.name == "debug, wrong results" && code != 7 {
			t.Errorf("forced LL128 on spark4: exit %d, want nccl-tests' 7 for wrong results", code)
		}
	}
	// The simulator refuses it, exit 2: its process says why.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"nranks": "four"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		argv []string
		env  []string
	}{
		{"a fault asked for", plain, []string{sim.FaultEnv + "=crash"}},
		{"a profile file with hang rules", append([]string{exe, sim.ChildArg, "--profile", "testdata/faults/faults.json"}, plain[4:]...), nil},
		{"a profile file that does not parse", append([]string{exe, sim.ChildArg, "--profile", bad}, plain[4:]...), nil},
		{"an endless run", append(plain[:len(plain):len(plain)], "-N", "0"), nil},
		{"a wrapper in front", append([]string{"testdata/faults/wrapper.sh"}, plain...), nil},
		{"another program", append([]string{"/bin/true"}, plain[1:]...), nil},
	} {
		var out, errOut bytes.Buffer
		if _, ok := runner.InProcess(tt.argv, append(os.Environ(), tt.env...), &out, &errOut); ok || out.Len()+errOut.Len() > 0 {
			t.Errorf("%s: run in process; it needs a process", tt.name)
		}
	}
}

var wallClock = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)

// clockless is b with every wall-clock time the simulator prints masked.
func clockless(b []byte) []byte { return wallClock.ReplaceAll(b, []byte("TIME")) }
