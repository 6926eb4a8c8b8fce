package launchflags

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/cliargs"
	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
)

// SimExecutable finds the program --sim starts as the simulated fabric:
// nccltune's own executable (tests point it at a smaller program).
var SimExecutable = os.Executable

// Category groups the launch flags in each command's --help.
const Category = "Launch (how the benchmark runs)"

// Flags are the launch flags, shared by every command that runs the benchmark.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "launcher", Value: "local", Category: Category,
			Usage: "how to start the benchmark: local, mpirun (Open MPI or MPICH) or srun"},
		&cli.IntFlag{Name: "np", Category: Category,
			Usage: "number of ranks (mpirun -np, srun -n); default: the launcher's own (one per host or slot)"},
		&cli.StringFlag{Name: "hosts", Category: Category,
			Usage: "comma-separated hosts (mpirun -H, srun -w), e.g. spark5:1,spark6:1"},
		&cli.StringSliceFlag{Name: "mpi-arg", Category: Category,
			Usage: "argument for mpirun/srun, repeatable; write --mpi-arg=--allow-run-as-root for values that start with -"},
		&cli.StringFlag{Name: "mpi-flavor", Category: Category,
			Usage: "openmpi (-x K=V) or mpich (-genv K V, also Intel MPI); default: detect from mpirun --version"},
		&cli.StringFlag{Name: "mpirun", Category: Category,
			Usage: "mpirun executable `PATH` (default mpirun on PATH)"},
		&cli.StringFlag{Name: "op", Value: string(nccl.AllReduce), Category: Category,
			Usage: "the collective to measure: " + strings.Join(nccl.OpNames(), ", ") + " (nccl-tests' <op>_perf, or the torch instrument's --op)"},
		&cli.StringFlag{Name: "bench", Category: Category,
			Usage: "nccl-tests benchmark `PATH`: any of its *_perf binaries or its build directory; the op's binary beside it runs (default <op>_perf on PATH)"},
		&cli.StringSliceFlag{Name: "bench-arg", Category: Category,
			Usage: "extra benchmark argument, repeatable (e.g. --bench-arg=-a --bench-arg=3)"},
		&cli.StringFlag{Name: "wrapper", Category: Category,
			Usage: "program run in front of the benchmark on each rank, e.g. scripts/fakehost.sh"},
		&cli.StringFlag{Name: "instrument", Value: benchfmt.InstrumentNCCLTests, Category: Category,
			Usage: "what measures: nccl-tests (the op's <op>_perf) or torch (nccltune's torch.distributed script, every --op with nccl-tests' sizes and busbw, for containers without nccl-tests; see docs/TORCH.md)"},
		&cli.StringFlag{Name: "torch-script", Category: Category,
			Usage: "the torch instrument's script `PATH` as the ranks see it (inside the container for docker exec); default: nccltune's own copy, written next to each launch"},
		&cli.StringFlag{Name: "prefix", Category: Category,
			Usage: "command, as one string, run in front of the benchmark on each rank (before --wrapper), e.g. 'torchrun --nproc-per-node 2' or 'docker exec sglang'; a docker/podman exec gets the launch's env as -e K=V"},
		&flagvalue.List{GenericFlag: cli.GenericFlag{Name: "base-env", Category: Category,
			Usage: "fixed `K=V` for every launch (NCCL_IB_HCA, NCCL_SOCKET_IFNAME…), repeatable; recorded with the results",
			Value: &flagvalue.KV{Flag: "base-env", KeepSpace: true, Check: flagvalue.EnvItem("base-env")}}}, // values are passed verbatim
		&cli.StringFlag{Name: "base-env-file", Category: Category,
			Usage: "file of K=V lines added to the base env, read as docker's --env-file reads it (# comment lines; values taken literally, quotes included)"},
		&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Category: Category,
			Usage: "per-launch limit; a launch past it is killed with its whole process group and recorded as timed out"},
		&cli.IntFlag{Name: "iters", Category: Category,
			Usage: "timed iterations per size (nccl-tests -n; default: nccl-tests' own)"},
		&cli.IntFlag{Name: "warmup", Category: Category,
			Usage: "warm-up iterations per size (nccl-tests -w; default: nccl-tests' own)"},
		&cli.StringFlag{Name: "sim", Category: Category,
			Usage: "run the SIMULATED fabric `PROFILE` instead of hardware: spark2, spark4, h200-loopback, flat, a profile FILE.json, or a replay of recorded launches: replay:FILE.db (a store; a bbolt file is also recognised without replay:) or replay:FILE.json (made by 'nccltune replay build')"},
		&cli.Float64Flag{Name: "noise", Value: 1, Category: Category,
			Usage: "simulated noise scale: 1 calibrated, 0 the true curve, at most 10"},
		&cli.Int64Flag{Name: "seed", Value: 1, Category: Category,
			Usage: "seed for the simulated fabric and the search (reproducible runs)"},
	}
}

// Read turns the launch flags into how a study launches.
func Read(c *cli.Context) (studyrun.LaunchSettings, error) {
	s := runner.Spec{
		Launcher:  c.String("launcher"),
		MPIFlavor: c.String("mpi-flavor"),
		MPIRun:    c.String("mpirun"),
		NP:        c.Int("np"),
		MPIArgs:   c.StringSlice("mpi-arg"),
		Bench:     c.String("bench"),
		BenchArgs: c.StringSlice("bench-arg"),
		Timeout:   c.Duration("timeout"),
		Iters:     c.Int("iters"),
		Warmup:    c.Int("warmup"),
		PerIter:   true,

		Instrument:  c.String("instrument"),
		TorchScript: c.String("torch-script"),
	}
	op, err := ReadOp(c)
	if err != nil {
		return studyrun.LaunchSettings{}, err
	}
	s.Op = op
	if h := c.String("hosts"); h != "" {
		for _, host := range strings.Split(h, ",") {
			s.Hosts = append(s.Hosts, strings.TrimSpace(host))
		}
	}
	if p := c.String("prefix"); p != "" {
		words, err := runner.SplitCommandLine(p)
		if err != nil {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--prefix: %v", err)
		}
		s.Prefix = words
	}
	if w := c.String("wrapper"); w != "" {
		s.Prefix = append(s.Prefix, w)
	}
	if s.Iters < 0 || s.Warmup < 0 {
		return studyrun.LaunchSettings{}, vocab.UsageErrorf("--iters and --warmup cannot be negative")
	}
	base, warnings, err := ReadBaseEnv(flagvalue.Items(c, "base-env"), c.String("base-env-file"))
	if err != nil {
		return studyrun.LaunchSettings{}, vocab.UsageError(err)
	}
	PrintWarnings(errWriter(c), warnings)
	s.BaseEnv = base
	l := studyrun.LaunchSettings{Seed: c.Int64("seed")}
	if profile := c.String("sim"); profile != "" {
		if c.IsSet("launcher") && s.Launcher != "local" {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--sim runs the simulated fabric as one local process; drop --launcher %s", s.Launcher)
		}
		if c.IsSet("bench") {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--sim replaces the benchmark; drop --bench")
		}
		noise := c.Float64("noise")
		if math.IsNaN(noise) || math.IsInf(noise, 0) {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--noise %v: give a finite noise scale (1 calibrated, 0 the true curve)", noise)
		}
		if noise < 0 {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--noise %g: the noise scale cannot be negative (0 is the true curve)", noise)
		}
		if noise > sim.MaxNoise {
			return studyrun.LaunchSettings{}, vocab.UsageErrorf("--noise %g: the noise scale is at most %d (1 is the calibrated noise, 0 the true curve)", noise, sim.MaxNoise)
		}
		exe, err := SimExecutable()
		if err != nil {
			return studyrun.LaunchSettings{}, fmt.Errorf("finding nccltune's own executable to run the simulated fabric: %w", err)
		}
		if profile, err = resolveSimArg(profile); err != nil {
			return studyrun.LaunchSettings{}, err
		}
		s.Sim = &runner.SimSpec{Executable: exe, Profile: profile, Noise: noise, Seed: l.Seed}
		l.Simulated = true
	} else if c.IsSet("noise") {
		return studyrun.LaunchSettings{}, vocab.UsageErrorf("--noise only applies to the simulated fabric (--sim PROFILE)")
	}
	if err := s.Validate(); err != nil {
		return studyrun.LaunchSettings{}, vocab.UsageError(err)
	}
	l.Spec = s
	return l, nil
}

// ReadOp reads --op: the collective to measure ("" where --op has no
// default and is not given).
func ReadOp(c *cli.Context) (nccl.Op, error) {
	if !c.IsSet("op") && c.String("op") == "" {
		return "", nil
	}
	op, err := nccl.ParseOp(c.String("op"))
	if err != nil {
		return "", vocab.UsageErrorf("--op: %v", err)
	}
	return op, nil
}

// CanLaunchOp says why l cannot launch op (nil when it can): no *_perf
// binary beside the benchmark, or a replay, which holds all-reduce only.
func CanLaunchOp(l studyrun.LaunchSettings, op nccl.Op) error {
	spec := l.Spec
	spec.Op = op
	if spec.Sim != nil && sim.IsReplay(spec.Sim.Profile) && op.OrAllReduce() != nccl.AllReduce {
		return fmt.Errorf("the replay %s recorded all_reduce launches only and cannot measure %s", sim.ReplayPath(spec.Sim.Profile), op)
	}
	return runner.Preflight(spec)
}

// resolveSimArg makes a --sim value that names a replay absolute (the
// simulator may run elsewhere) and checks that the replay or profile loads.
func resolveSimArg(profile string) (string, error) {
	if !sim.IsReplay(profile) {
		return profile, checkSimProfile(profile)
	}
	abs, err := filepath.Abs(sim.ReplayPath(profile))
	if err != nil {
		return "", vocab.UsageErrorf("--sim %s: %v", profile, err)
	}
	arg := sim.ReplayPrefix + abs
	if _, err := studyrun.LoadReplay(arg); err != nil {
		return "", vocab.UsageErrorf("--sim %s: %v", profile, err)
	}
	return arg, nil
}

// checkSimProfile loads a --sim profile before anything is stored; a
// typo names the nearest built-in profile.
func checkSimProfile(profile string) error {
	if _, err := sim.LoadProfile(profile); err != nil {
		if best := cliargs.Nearest(strings.ToLower(profile), sim.BuiltinProfiles(), 3); best != "" {
			return vocab.UsageErrorf("--sim %s: did you mean %s? (%v)", profile, best, err)
		}
		return vocab.UsageErrorf("--sim %s: %v", profile, err)
	}
	return nil
}
