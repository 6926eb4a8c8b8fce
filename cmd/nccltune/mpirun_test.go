package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestMpirunFailsBeforeNCCLStarts: mpirun that stops before any rank runs
// (Open MPI refusing root, or failing to start its daemons) fails the
// search at its first launch with exit 3, Open MPI's own words and the
// fix, and the study is stored as failed with that launch and its output.
func TestMpirunFailsBeforeNCCLStarts(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"root", []string{"the baseline (NCCL defaults) failed", "exit status 1", "add --mpi-arg=--allow-run-as-root"}},
		{"daemons", []string{"the baseline (NCCL defaults) failed", "exit status 1", "ORTE was unable to reliably start one or more daemons"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			mark := markProcesses(t)
			t.Setenv("NCCLTUNE_TEST_MPI_ERROR", tc.kind)
			db := filepath.Join(t.TempDir(), "db")
			_, stderr, code := runCLI(t, db, "search", "--band", "1M", "--launcher", "mpirun", "--mpirun", faultFile(t, "fake-mpirun"),
				"--np", "2", "--hosts", "spark5:1,spark6:1", "--bench", "/opt/nccl-tests/build/all_reduce_perf")
			if code != exitFabric {
				t.Fatalf("exit %d, want 3\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			got := storedStudy(t, db, "s1-1M")
			if got.study.Status != "failed" || !strings.Contains(got.study.Reason, "exit status 1") || len(got.launches) != 1 || got.launches[0].ExitCode != 1 {
				t.Fatalf("stored: %s (%s), %d launches", got.study.Status, got.study.Reason, len(got.launches))
			}
			raw, err := openStore(t, db).RawOutput(got.launches[0].ID)
			if err != nil || !bytes.Contains(raw.Stderr, []byte("--------")) {
				t.Errorf("mpirun's output was not kept: %v", err)
			}
			assertNoProcessesLeft(t, mark)
		})
	}
}
