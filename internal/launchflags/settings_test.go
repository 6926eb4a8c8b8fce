package launchflags

import (
	"errors"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
)

// TestLaunchDifferencesTorchScript: the torch instrument's script is
// compared and given back like the other run settings (the CLI test
// above cannot run the torch instrument).
func TestLaunchDifferencesTorchScript(t *testing.T) {
	study := &store.Study{Name: "s1", Launch: store.LaunchSettings{Launcher: "local", Instrument: "torch",
		Run: &store.RunSettings{TorchScript: "/shared/allreduce.py"}}}
	for _, tc := range []struct {
		now  string
		want []string
	}{
		{"/shared/allreduce.py", nil},
		{"", []string{"--torch-script: the study's /shared/allreduce.py, given none"}},
		{"/tmp/x.py", []string{"--torch-script: the study's /shared/allreduce.py, given /tmp/x.py"}},
	} {
		now := store.LaunchSettings{Launcher: "local", Instrument: "torch", Run: &store.RunSettings{TorchScript: tc.now}}
		if got := Differences(study, now, nil); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("given %q: %q, want %q", tc.now, got, tc.want)
		}
	}
	if args := strings.Join(Args(study), " "); !strings.Contains(args, "--torch-script /shared/allreduce.py") {
		t.Errorf("resume flags %q lack --torch-script", args)
	}
}

// TestArgsNegativeCounts: a negative --iters or --warmup in a stored
// study is not written back (only a positive count is a setting).
func TestArgsNegativeCounts(t *testing.T) {
	study := &store.Study{Name: "s1", Launch: store.LaunchSettings{Launcher: "local",
		Run: &store.RunSettings{Iters: -3, Warmup: -1}}}
	if args := strings.Join(Args(study), " "); strings.Contains(args, "--iters") || strings.Contains(args, "--warmup") {
		t.Errorf("Args = %q, want no --iters or --warmup", args)
	}
}

// TestArgsRoundTrip: the flags Args writes for a study, read back, give
// the study's own launch settings (no differences), for real hardware
// and the simulated fabric.
func TestArgsRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		{"--launcher", "mpirun", "--np", "4", "--hosts", "a:1,b:1", "--mpi-arg=--allow-run-as-root", "--mpi-arg=-x FOO",
			"--bench", "/opt/nccl tests/all_reduce_perf", "--bench-arg=-c", "--bench-arg=0", "--prefix", "docker exec 'my lane'",
			"--iters", "5", "--warmup", "2", "--mpi-flavor", "openmpi", "--mpirun", "/opt/mpi/bin/mpirun",
			"--base-env", "NCCL_IB_HCA==mlx5_0,mlx5_1", "--base-env", "NCCL_SOCKET_IFNAME=it's"},
		{"--sim", "spark4", "--noise", "0.25", "--base-env", "NCCL_DEBUG=WARN"},
	} {
		l, err := read(t, args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		study := &store.Study{Name: "s1", Launch: studyrun.StoredLaunchSettings(l.Spec, l.Seed), BaseEnv: l.Spec.BaseEnv}
		words, err := runner.SplitCommandLine(strings.Join(Args(study), " "))
		if err != nil {
			t.Fatalf("Args(%q) is not a shell command line: %v", args, err)
		}
		again, err := read(t, words...)
		if err != nil {
			t.Fatalf("reading back %q: %v", words, err)
		}
		if d := Differences(study, studyrun.StoredLaunchSettings(again.Spec, again.Seed), again.Spec.BaseEnv); len(d) > 0 {
			t.Errorf("%q read back as %q differs: %q", args, words, d)
		}
	}
}

// TestCheckRelaunch: other settings are refused with the study's own
// flags and every difference; a study stored before the run settings were
// recorded is noted, not refused.
func TestCheckRelaunch(t *testing.T) {
	study := &store.Study{Name: "s7", Launch: store.LaunchSettings{Launcher: "local", Bench: "/b", Run: &store.RunSettings{Iters: 5}},
		BaseEnv: map[string]string{"NCCL_IB_HCA": "mlx5"}}
	now := studyrun.LaunchSettings{Spec: runner.Spec{Launcher: "local", Bench: "/b", Iters: 6, BaseEnv: map[string]string{"NCCL_DEBUG": "WARN"}}}
	var note strings.Builder
	err := CheckRelaunch(study, "resume", now, &note)
	want := `study s7 ran with other launch settings; resume it with the same ones (--bench /b --iters 5 --base-env NCCL_IB_HCA=mlx5): ` +
		`--iters: the study's 5, given 6; --base-env NCCL_DEBUG: the study's none, given "WARN"; --base-env NCCL_IB_HCA: the study's "mlx5", given none`
	if err == nil || err.Error() != want || !errors.Is(err, vocab.ErrUsage) {
		t.Errorf("CheckRelaunch = %v, want the usage error\n%s", err, want)
	}
	study.Launch.Run, study.BaseEnv, now.Spec.BaseEnv = nil, nil, nil
	if err := CheckRelaunch(study, "verify", now, &note); err != nil || !strings.Contains(note.String(), "study s7 was stored before nccltune recorded --iters") {
		t.Errorf("an old study: %v, note %q; want no error and the note", err, note.String())
	}
}

// TestResumeCommand: the study's name and launch flags, and --db unless
// the database is the default one.
func TestResumeCommand(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	study := &store.Study{Name: "s3-512K-4M", Launch: store.LaunchSettings{SimProfile: "spark4", SimNoise: 1}}
	for db, want := range map[string]string{
		"/data/nccltune/nccltune.db": "nccltune search --resume s3-512K-4M --sim spark4 --noise 1",
		"/tmp/my lane.db":            "nccltune search --resume s3-512K-4M --sim spark4 --noise 1 --db '/tmp/my lane.db'",
	} {
		if got := ResumeCommand(study, db); got != want {
			t.Errorf("db %s: %s, want %s", db, got, want)
		}
	}
}
