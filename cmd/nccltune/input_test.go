package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badInput is one command line that must be refused before anything runs:
// exit 2, and a message that names the problem and the way out.
type badInput struct {
	args []string
	want []string
}

// TestBadInputBeforeAnyLaunch: every command line here is refused with
// exit 2 and a message naming the problem and the fix, before the
// database is even created (so before any launch), and never with a panic
// (run would not return from one).
func TestBadInputBeforeAnyLaunch(t *testing.T) {
	t.Parallel()
	sim := []string{"search", "--sim", "spark4"}
	s := func(args ...string) []string { return append(append([]string{}, sim...), args...) }
	sweep := func(args ...string) []string {
		return append([]string{"sweep", "--sim", "spark4"}, args...)
	}
	gate := func(args ...string) []string { return append([]string{"gate", "--sim", "spark4"}, args...) }
	for _, tc := range []badInput{
		// Bands.
		{s("--band", "4M-512K"), []string{"first size is larger than the second", "did you mean 512K-4M?"}},
		{s("--band", "abc"), []string{`size "abc" is not a number of bytes`, "e.g. 512K, 4M, 1G"}},
		{s("--band", "0-0"), []string{"sizes must be at least 1 byte"}},
		{s("--band", "99999999999999999999-1M"), []string{`size "99999999999999999999" is too large`}},
		{s("--band", "1M-99999999999999999999K"), []string{"is too large"}},
		{s("--band", "1M-"), []string{"size is empty", "e.g. 512K"}},
		{s("--band", "-1M"), []string{"size is empty", "e.g. 512K"}},
		{s("--band=-1M"), []string{"size is empty"}},
		{s("--band", "1M-4M-16M"), []string{`size "4M-16M" is not a number of bytes`}},
		{s("--band", "65G"), []string{"sizes above 64G are not supported"}},
		{s("--band", "3-3"), []string{"holds no power-of-two size", "widen it"}},
		{s("--band", "512KB-4MB"), []string{"write 512K, not 512KiB or 512KB"}},
		{s("--band", "1.5M"), []string{"not a number of bytes"}},
		{s("--band"), []string{"--band needs a value", "nccltune search --help"}},
		{s(), []string{"search needs --band", "e.g. --band 512K-4M"}},
		{[]string{"search", "512K-4M"}, []string{"search takes no arguments", "did you mean --band 512K-4M?"}},
		{s("--band", "512K-4M", "--guard", "abc"), []string{"--guard", `size "abc" is not a number`}},
		// Knobs and values.
		{s("--band", "1M", "--space", "NCCL_PORTO"), []string{`unknown knob "NCCL_PORTO"`, "did you mean NCCL_PROTO?"}},
		{s("--band", "1M", "--space", "NCCL_MAX_NCHANEL=4"), []string{"did you mean NCCL_MAX_NCHANNELS?"}},
		{s("--band", "1M", "--space", "NCCL_PROTO=Bogus"), []string{`"Bogus" is not one of LL, LL128, Simple`}},
		{s("--band", "1M", "--space", "NCCL_PROTO=Simpel"), []string{"did you mean Simple?"}},
		{s("--band", "1M", "--space", "NCCL_MAX_NCHANNELS=4,65"), []string{"NCCL_MAX_NCHANNELS=65", "want an integer from 1 to 64"}},
		{s("--band", "1M", "--space", "NCCL_MAX_NCHANNELS=0"), []string{"want an integer from 1 to 64"}},
		{s("--band", "1M", "--space", "NCCL_MAX_CTAS=-8"), []string{"want an integer from 1 to 64"}},
		{s("--band", "1M", "--space", ""), []string{`unknown knob ""`, "known: NCCL_PROTO"}},
		{s("--band", "1M", "--base-env", "NCCL_PORTO=LL"), []string{`"NCCL_PORTO" is not a variable NCCL reads`, "did you mean NCCL_PROTO?"}},
		{s("--band", "1M", "--base-env", "NCCL_BUFSIZE=1048576"), []string{"did you mean NCCL_BUFFSIZE?"}},
		{s("--band", "1M", "--base-env", "nccl_ib_qps_per_connection=4"), []string{"write NCCL_IB_QPS_PER_CONNECTION"}},
		{s("--band", "1M", "--base-env", "NCCL_PROTO=Bogus"), []string{"--base-env", `"Bogus" is not one of LL, LL128, Simple`}},
		{s("--band", "1M", "--base-env", "NCCL_MAX_NCHANNELS=65"), []string{"--base-env", "want an integer from 1 to 64"}},
		{s("--band", "1M", "--space-only", "--space", "NCCL_PROTO", "--base-env", "NCCL_MIN_NCHANNELS=8", "--base-env", "NCCL_MAX_NCHANNELS=4"),
			[]string{"--base-env", "NCCL_MIN_NCHANNELS=8 is larger than NCCL_MAX_NCHANNELS=4"}},
		{s("--band", "1M", "--base-env", "NCCL_PROTO=LL"), []string{"NCCL_PROTO is fixed by --base-env and also searched", "drop one"}},
		{s("--band", "1M", "--space-only", "--space", "NCCL_ALGO", "--base-env", "NCCL_ALGO=Ring"), []string{"either fixed or searched"}},
		{s("--band", "1M", "--base-env", "=x"), []string{`"=x" is not KEY=VALUE`, "e.g. NCCL_PROTO=^LL128"}},
		{s("--band", "1M", "--base-env", "1X=2"), []string{"is not an environment variable name"}},
		{s("--band", "1M", "--base-env-file", "/nonexistent/lane.env"), []string{"--base-env-file", "no such file"}},
		// Hosts.
		{[]string{"search", "--band", "1M", "--launcher", "mpirun", "--hosts", "a b"}, []string{`host "a b" is not a host name`, "give --hosts h1,h2"}},
		{[]string{"search", "--band", "1M", "--launcher", "mpirun", "--hosts", "a,,b"}, []string{`host "" is not a host name`}},
		{[]string{"search", "--band", "1M", "--launcher", "srun", "--hosts", ","}, []string{`host "" is not a host name`}},
		{[]string{"search", "--band", "1M", "--hosts", "a,b"}, []string{"--hosts needs --launcher mpirun or srun"}},
		{[]string{"search", "--band", "1M", "--launcher", "local", "--hosts", "a"}, []string{"--hosts needs --launcher mpirun or srun"}},
		{[]string{"search", "--band", "1M", "--launcher", "ssh"}, []string{`unknown launcher "ssh"`, "use local, mpirun or srun"}},
		{[]string{"search", "--band", "1M", "--launcher", "mpirun", "--mpi-flavor", "lam"}, []string{`unknown MPI flavour "lam"`}},
		{s("--band", "1M", "--launcher", "mpirun"), []string{"--sim runs the simulated fabric as one local process", "drop --launcher mpirun"}},
		{s("--band", "1M", "--np", "-3"), []string{"--np -3", "cannot be negative"}},
		// Durations and numbers.
		{s("--band", "1M", "--timeout", "-1s"), []string{"timeout -1s cannot be negative"}},
		{s("--band", "1M", "--timeout", "5"), []string{`invalid value "5" for flag -timeout`, "nccltune search --help"}},
		{s("--band", "1M", "--time", "abc"), []string{`invalid value "abc" for flag -time`, "nccltune search --help"}},
		{s("--band", "1M", "--time", "-5m"), []string{"--time -5m0s cannot be negative"}},
		{s("--band", "1M", "--budget", "5"), []string{"--budget 5 is too small", "at least 19 launches (1 warm-up, 12 confirmation, 2 explain, 4 to explore)"}},
		{s("--band", "1M", "--budget", "-1"), []string{"--budget -1 is too small"}},
		{s("--band", "1M", "--confirm", "2"), []string{"2 confirmation launches per arm cannot reach significance", "use at least 4"}},
		{s("--band", "1M", "--alpha", "0.7"), []string{"--alpha 0.7", "between 0 and 0.5"}},
		{s("--band", "1M", "--min-effect", "2"), []string{"--min-effect 2", "such as 0.03"}},
		{s("--band", "1M", "--sampler", "annealing"), []string{`unknown sampler "annealing"`, "use tpe, random or grid"}},
		{s("--band", "1M", "--noise", "-1"), []string{"--noise -1", "cannot be negative"}},
		{s("--band", "1M", "--seed", "x"), []string{`invalid value "x" for flag -seed`}},
		{s("--band", "1M", "--iters", "-1"), []string{"--iters and --warmup cannot be negative"}},
		{[]string{"search", "--band", "1M", "--noise", "0"}, []string{"--noise only applies to the simulated fabric"}},
		{s("--band", "1M", "--resume", "s1", "--space", "NCCL_PROTO"), []string{"--resume continues the study as it was defined", "drop --band"}},
		{s("--resume", "s1", "--confirm", "8"), []string{"--resume continues the study as it was defined", "drop --confirm"}},
		{s("--band", "1M", "--prefix", `docker exec "sglang`), []string{"--prefix"}},
		// sweep's --env.
		{sweep("--env", "NCCL_PORTO=LL"), []string{"--env", "did you mean NCCL_PROTO?"}},
		{sweep("--env", "NCCL_PROTO=Bogus"), []string{"--env", `"Bogus" is not one of LL, LL128, Simple`}},
		{sweep("--env", "NCCL_MIN_NCHANNELS=8", "--env", "NCCL_MAX_NCHANNELS=4"), []string{"NCCL_MIN_NCHANNELS=8 is larger than NCCL_MAX_NCHANNELS=4"}},
		{sweep("--env", "NCCL_MIN_CTAS=16", "--env", "NCCL_MAX_CTAS=2"), []string{"NCCL_MIN_CTAS=16 is larger than NCCL_MAX_CTAS=2"}},
		{sweep("--env", "NCCL_MAX_NCHANNELS=65"), []string{"want an integer from 1 to 64"}},
		{sweep("--env", "NCCL_MAX_NCHANNELS=eight"), []string{"want an integer from 1 to 64"}},
		{sweep("--env", "NCCL_PROTO=LL", "--base-env", "NCCL_PROTO=Simple"), []string{"NCCL_PROTO is set by both --env and --base-env", "keep one"}},
		{sweep("--env", "NCCL_IB_HCA=mlx5_0"), []string{`unknown knob "NCCL_IB_HCA"`}},
		{sweep("--min", "4M", "--max", "1M"), []string{"did you mean 1M-4M?"}},
		{sweep("--min", "1M-"), []string{"--min", "not a number of bytes"}},
		{sweep("--repeats", "0"), []string{"--repeats 0", "measure at least once"}},
		{[]string{"sweep", "NCCL_PROTO=LL"}, []string{"sweep takes no arguments", "set knobs with --env K=V"}},
		// gate's --at.
		{gate(), []string{"no threshold given", "--at 1M:9"}},
		{gate("--at", "1M"), []string{"write SIZE:GBPS", "e.g. 1M:9"}},
		{gate("--at", "1M:abc"), []string{`"abc" is not a bus bandwidth in GB/s`}},
		{gate("--at", "abc:9"), []string{`size "abc" is not a number of bytes`}},
		{gate("--at", "1M:-1"), []string{"must be more than 0 GB/s"}},
		{gate("--at", "1M:NaN"), []string{`"NaN" is not a bus bandwidth`}},
		{gate("--at", "1M:Inf"), []string{`"Inf" is not a bus bandwidth`}},
		{gate("--at", "1M:9:3"), []string{`"9:3" is not a bus bandwidth`}},
		{gate("--at"), []string{"--at needs a value", "nccltune gate --help"}},
		// Flags with no value, written last.
		{[]string{"--db"}, []string{"--db needs a value", "nccltune --help"}},
		{[]string{"export", "s1", "--format"}, []string{"--format needs a value", "nccltune export --help"}},
		{[]string{"export", "s1", "--format", "env", "--out"}, []string{"--out needs a value"}},
		{[]string{"plot", "s1", "--out"}, []string{"--out needs a value", "nccltune plot --help"}},
	} {
		db := filepath.Join(t.TempDir(), "db")
		_, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2; stderr:\n%s", tc.args, code, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q does not say %q", tc.args, strings.TrimSpace(stderr), w)
			}
		}
		if strings.Contains(stderr, "launch 1/") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: something ran:\n%s", tc.args, stderr)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%q: the database was created before the input was checked", tc.args)
		}
	}
}

// TestUnknownStudyNames: a study name that is not in the database gets
// exit 2 and the closest names, from every command that takes one.
func TestUnknownStudyNames(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	for _, tc := range []badInput{
		{[]string{"show", "s1-512K-4N"}, []string{`no study "s1-512K-4N"`, "closest: s1-512K-4M", "nccltune history lists them all"}},
		{[]string{"show", "sl-512K-4M"}, []string{"closest: s1-512K-4M"}},
		{[]string{"export", "s1-512k-4m", "--format", "env"}, []string{"closest: s1-512K-4M"}},
		{[]string{"export", "s1-512K-4M", "--format", "enf"}, []string{`unknown format "enf"`, "want one of env, sh, docker, compose, k8s, json, nccl-tuner", "did you mean env?"}},
		{[]string{"export", "s1-512K-4M", "--format", "toml"}, []string{`unknown format "toml"`, "want one of env, sh, docker, compose, k8s, json, nccl-tuner"}},
		{[]string{"export", "s1-512K-4M"}, []string{"export needs --format", "one of env, sh, docker, compose, k8s, json, nccl-tuner"}},
		{[]string{"plot", "s1-512K-4", "--out", filepath.Join(t.TempDir(), "x.png")}, []string{`no study "s1-512K-4"`, "closest: s1-512K-4M"}},
		{[]string{"export", "lab-runs", "--format", "env"}, []string{"lab-runs is an import study, which recommends nothing", "export a search study"}},
		{[]string{"report", "s1-512K", "--out", filepath.Join(t.TempDir(), "x.html")}, []string{"closest: s1-512K-4M"}},
		{[]string{"verify", "s1-512K-4", "--sim", "spark4"}, []string{"closest: s1-512K-4M"}},
		{[]string{"search", "--resume", "s1-512K-4", "--sim", "spark4"}, []string{`no study "s1-512K-4"`, "closest: s1-512K-4M"}},
		{[]string{"search", "--resume", "lab-runs", "--sim", "spark4"}, []string{"lab-runs is an import, not a search; only searches resume"}},
	} {
		before, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2; stderr:\n%s", tc.args, code, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q does not say %q", tc.args, strings.TrimSpace(stderr), w)
			}
		}
		if strings.Contains(stderr, "launch 1/") {
			t.Errorf("%q: something ran:\n%s", tc.args, stderr)
		}
		if after, _ := os.ReadFile(db); len(after) != len(before) {
			t.Errorf("%q: the database changed (%d → %d bytes)", tc.args, len(before), len(after))
		}
	}
}
