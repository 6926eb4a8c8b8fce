package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// useInProcess sets InProcess for one test; tests that set it are not
// parallel, so no other launch sees it.
func useInProcess(t *testing.T, hook func(argv, env []string, stdout, stderr io.Writer) (int, bool)) {
	t.Helper()
	InProcess = hook
	t.Cleanup(func() { InProcess = nil })
}

// TestInProcessLaunchIsParsedAsAProcess: a launch InProcess takes gets
// the argv and environment its process would get (the launch's variables
// winning over nccltune's own), and its output and exit code go through
// the same classification as a process's.
func TestInProcessLaunchIsParsedAsAProcess(t *testing.T) {
	spec := fakeSpec(t, "ok")
	t.Setenv("NCCL_PROTO", "Simple") // nccltune's own environment…
	spec.Config = map[string]string{"NCCL_PROTO": "^LL128"}
	table := string(fixture("ar2_mps_info.txt"))
	tests := []struct {
		name    string
		out     string
		code    int
		outcome benchfmt.Outcome
		reason  string
	}{
		{"ok", table, 0, benchfmt.OK, ""},
		{"wrong-exit", strings.Replace(strings.Replace(table,
			"1048576        262144     float     sum      -1   508.57    2.06    2.06       0",
			"1048576        262144     float     sum      -1   508.57    2.06    2.06      17", 1),
			"# Out of bounds values : 0 OK", "# Out of bounds values : 1 FAILED", 1), 7,
			benchfmt.Invalid, "wrong results at 1M (#wrong 17): never use this config; it corrupts data (exit status 7)"},
		{"silent", "", 0, benchfmt.Failed, "printed nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotArgv, protos []string
			useInProcess(t, func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
				gotArgv = argv
				for _, kv := range env {
					if strings.HasPrefix(kv, "NCCL_PROTO=") {
						protos = append(protos, kv)
					}
				}
				io.WriteString(stdout, tt.out)
				return tt.code, true
			})
			l, err := Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if l.Outcome != tt.outcome || !strings.Contains(l.Reason, tt.reason) || l.ExitCode != tt.code {
				t.Fatalf("outcome %s (%q), exit %d; want %s (%q), exit %d", l.Outcome, l.Reason, l.ExitCode, tt.outcome, tt.reason, tt.code)
			}
			if strings.Join(gotArgv, " ") != strings.Join(l.Argv, " ") || gotArgv[0] != spec.Bench {
				t.Errorf("the hook got argv %q, the launch records %q", gotArgv, l.Argv)
			}
			// …is overridden by the launch's, as exec does for a process.
			if strings.Join(protos, " ") != "NCCL_PROTO=^LL128" {
				t.Errorf("the hook got %q, want the launch's NCCL_PROTO=^LL128 alone", protos)
			}
			if string(l.Stdout) != tt.out {
				t.Errorf("the output was not kept as written")
			}
		})
	}
}

// TestInProcessDeclinedRunsTheProcess: a launch the hook does not take
// (false) runs as a process.
func TestInProcessDeclinedRunsTheProcess(t *testing.T) {
	asked := 0
	useInProcess(t, func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
		asked++
		return 0, false
	})
	t.Setenv("FAKE_BENCH_PIDFILE", os.DevNull)
	l, err := Run(context.Background(), fakeSpec(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 || l.Outcome != benchfmt.OK || len(l.Result.Rows) != 12 {
		t.Fatalf("hook asked %d times; outcome %s (%s)", asked, l.Outcome, l.Reason)
	}
}

// TestInProcessStoppedByCancel: a launch in process while the context
// ends is stopped as its process would be: interrupted, kept for the
// record, with the cancellation returned.
func TestInProcessStoppedByCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	useInProcess(t, func(argv, env []string, stdout, stderr io.Writer) (int, bool) {
		io.WriteString(stdout, string(fixture("ar2_mps_info.txt"))[:2000])
		cancel() // Ctrl-C while it runs
		return 0, true
	})
	l, err := Run(ctx, fakeSpec(t, "ok"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if l == nil || l.Outcome != benchfmt.Failed || l.Reason != benchfmt.ReasonInterrupted || l.ExitCode != 143 {
		t.Fatalf("launch %+v", l)
	}
	if len(l.Stdout) != 2000 {
		t.Errorf("what it printed was not kept")
	}
}
