package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// interruptedSearch runs a search that is interrupted after its third
// launch and returns its stderr.
func interruptedSearch(t *testing.T, db string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 3/") {
			cancel()
		}
	}, append([]string{"search", "--band", "512K-4M", "--budget", "24"}, args...)...)
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	return stderr
}

// TestResumeRefusesOtherLaunchSettings: a study resumed on another
// profile, noise or base env, or with its budget, seed or time limit
// given again, is refused with exit 2 before any launch, naming the
// difference; the printed resume command reproduces the settings.
func TestResumeRefusesOtherLaunchSettings(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stderr := interruptedSearch(t, db, "--sim", "spark4", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0")
	want := "nccltune search --resume s1-512K-4M --sim spark4 --noise 0 --base-env NCCL_SOCKET_IFNAME=eth0 --db " + db
	if !strings.Contains(stderr, want) {
		t.Errorf("resume command not printed as %q:\n%s", want, stderr)
	}
	before := len(storedStudy(t, db, "s1-512K-4M").launches)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sim", "spark2", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0"}, "--sim: the study's spark4, given spark2"},
		{[]string{"--sim", "spark4", "--base-env", "NCCL_SOCKET_IFNAME=eth0"}, "--noise: the study's 0, given 1"},
		{[]string{"--sim", "spark4", "--noise", "0"}, `--base-env NCCL_SOCKET_IFNAME: the study's "eth0", given none`},
		{[]string{"--sim", "spark4", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0", "--base-env", "NCCL_ALGO=Tree"}, "NCCL_ALGO"},
		{[]string{"--sim", "spark4", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0", "--budget", "100"}, "drop --budget"},
		{[]string{"--sim", "spark4", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0", "--seed", "5"}, "drop --seed"},
		{[]string{"--sim", "spark4", "--noise", "0", "--base-env", "NCCL_SOCKET_IFNAME=eth0", "--time", "1m"}, "drop --time"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"search", "--resume", "s1-512K-4M"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 naming %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	st := storedStudy(t, db, "s1-512K-4M")
	if len(st.launches) != before || st.study.Status != "interrupted" {
		t.Errorf("refused resumes changed the study: %d launches (was %d), status %s", len(st.launches), before, st.study.Status)
	}
	// The printed command itself resumes it.
	var stdout, errb bytes.Buffer
	if err := run(context.Background(), strings.Fields(want), &stdout, &errb); err != nil {
		stderr := errb.String()
		code := exitCode(err)
		t.Errorf("the printed resume command: exit %d: %v\n%s", code, err, stderr)
	}
}

// TestVerifyRefusesOtherLaunchSettings: verify measures the claim on the
// study's fabric, and exits 1 when the claim does not hold.
func TestVerifyChecks(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "30"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sim", "spark2"}, "--sim: the study's spark4, given spark2"},
		{[]string{"--sim", "spark4", "--noise", "0"}, "--noise"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"verify", "s1-512K-4M", "--launches", "6"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 naming %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	if sums := storedStudies(t, db); len(sums) != 1 {
		t.Errorf("refused verifies stored %d studies", len(sums)-1)
	}
	// Interrupted, a verify is stored as interrupted, not failed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch 3/") {
			cancel()
		}
	}, "verify", "s1-512K-4M", "--sim", "spark4", "--launches", "6")
	sums := storedStudies(t, db)
	if code != exitInterrupted || len(sums) != 2 || sums[1].Status != "interrupted" {
		t.Errorf("interrupted verify: exit %d, studies %+v\n%s", code, sums, stderr)
	}
	if s := storedStudy(t, db, sums[1].Name).study; strings.Contains(s.Reason, "context canceled") || strings.Contains(s.Reason, "--resume") {
		t.Errorf("interrupted verify stored with reason %q", s.Reason)
	}
}

// storedStudies lists the studies in db.
func storedStudies(t *testing.T, db string) []store.StudySummary {
	t.Helper()
	sums, err := openStore(t, db).Studies()
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestVerifyInconsistentClaimExits1: a claim the fresh measurement does
// not reproduce is exit 1 (with the verdict printed), so a script notices.
func TestVerifyInconsistentClaimExits1(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &store.Study{Kind: vocab.KindSearch, Band: "1M", BandMin: 1 << 20, BandMax: 1 << 20, Sizes: []int64{1 << 20},
		Collective: "all_reduce", Launch: store.LaunchSettings{Launcher: "sim", SimProfile: "spark4", SimNoise: 1, SimSeed: 1},
		Simulated: true, Seed: 1, Status: vocab.StatusDone,
		Recommendation: &store.Recommendation{Env: map[string]string{"NCCL_PROTO": "Simple"}, Speedup: 10, SpeedupCI: [2]float64{9, 11}, CILevel: 0.95, Significant: true}}
	if err := st.CreateStudy(s); err != nil {
		t.Fatal(err)
	}
	st.Close()
	stdout, stderr, code := runCLI(t, db, "verify", s.Name, "--sim", "spark4", "--launches", "6")
	if code != exitCheckFailed || !strings.Contains(stdout, "NOT consistent") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestExplainSurvivesInterruption: a study interrupted just before its
// explain launch makes it when resumed, so the tuner export works.
func TestExplainSurvivesInterruption(t *testing.T) {
	t.Parallel()
	// Seed 5 makes an explain launch (in others the candidate's debug
	// launch came earlier, as a plan launch, and serves instead).
	args := []string{"search", "--sim", "spark4", "--band", "512K-4M", "--budget", "30", "--seed", "5"}
	// Where the explain launch comes in an uninterrupted run.
	_, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "whole.db"), args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	before := ""
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if strings.Contains(l, " explain ") && i > 0 {
			before = strings.Fields(lines[i-1])[1] // "29/30"
		}
	}
	if before == "" {
		t.Fatalf("no explain launch:\n%s", stderr)
	}
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, code = runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch "+before+" ") {
			cancel()
		}
	}, args...)
	if code != exitInterrupted {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4", "--noise", "1"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "export", "s1-512K-4M", "--format", "nccl-tuner"); code != 0 {
		t.Errorf("the resumed study has no record of NCCL's choices: exit %d\n%s", code, stderr)
	}
}

// TestResumeRefusesOtherRunSettings: --iters, --warmup, --mpi-flavor,
// --mpirun and --torch-script are stored with a study on real hardware,
// so a resume or a verify that changes one is refused naming it, and the
// printed resume command gives them back. A study stored before they
// were recorded still resumes, with a note that they cannot be checked.
func TestResumeRefusesOtherRunSettings(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	bench := fakeBench(t, filepath.Join("..", "..", "internal", "benchfmt", "testdata", "text", "x2_g2_direct_pointer.txt"))
	launch := []string{"--launcher", "local", "--bench", bench, "--iters", "5", "--warmup", "2",
		"--mpi-flavor", "openmpi", "--mpirun", "/opt/mpi/bin/mpirun"}
	// The saved output has 2M but not 1M or 4M: a one-size band.
	stderr := interruptedSearch(t, db, append([]string{"--band", "2M"}, launch...)...)
	const name = "s1-2M"
	for _, want := range []string{"--iters 5", "--warmup 2", "--mpi-flavor openmpi", "--mpirun /opt/mpi/bin/mpirun"} {
		if !strings.Contains(stderr, "nccltune search --resume "+name) || !strings.Contains(stderr, want) {
			t.Errorf("printed resume command lacks %q:\n%s", want, stderr)
		}
	}
	before := len(storedStudy(t, db, name).launches)
	// without drops the flag at index i and its value; with replaces the value.
	without := func(flag string) []string {
		var out []string
		for i := 0; i < len(launch); i++ {
			if launch[i] == flag {
				i++
				continue
			}
			out = append(out, launch[i])
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{without("--iters"), "--iters: the study's 5, given none"},
		{append(without("--iters"), "--iters", "20"), "--iters: the study's 5, given 20"},
		{without("--warmup"), "--warmup: the study's 2, given none"},
		{append(without("--mpi-flavor"), "--mpi-flavor", "mpich"), "--mpi-flavor: the study's openmpi, given mpich"},
		{without("--mpirun"), "--mpirun: the study's /opt/mpi/bin/mpirun, given none"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"search", "--resume", name}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "--iters 5 --warmup 2") {
			t.Errorf("%v: exit %d, want 2 naming %q and the study's flags:\n%s", tc.args, code, tc.want, stderr)
		}
		_, stderr, code = runCLI(t, db, append([]string{"verify", name, "--launches", "4"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("verify %v: exit %d, want 2 naming %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	if n := len(storedStudy(t, db, name).launches); n != before {
		t.Errorf("refused resumes launched: %d launches, was %d", n, before)
	}

	// A study stored before these flags were recorded: not refused, noted.
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	study, err := st.Study(name)
	if err != nil {
		t.Fatal(err)
	}
	study.Launch.Run = nil
	if err := st.UpdateStudy(study); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, stderr, code := runCLI(t, db, "search", "--resume", name, "--launcher", "local", "--bench", bench, "--iters", "7")
	if code != 0 || !strings.Contains(stderr, "cannot be checked") {
		t.Errorf("an old study's resume: exit %d, want 0 with a note that --iters cannot be checked:\n%s", code, stderr)
	}
}
