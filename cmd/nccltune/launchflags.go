package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/sim"
)

const launchCategory = "Launch (how the benchmark runs)"

// launchFlags are shared by every command that runs the benchmark.
func launchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "launcher", Value: "local", Category: launchCategory,
			Usage: "how to start the benchmark: local, mpirun (Open MPI or MPICH) or srun"},
		&cli.IntFlag{Name: "np", Category: launchCategory,
			Usage: "number of ranks (mpirun -np, srun -n); default: the launcher's own (one per host or slot)"},
		&cli.StringFlag{Name: "hosts", Category: launchCategory,
			Usage: "comma-separated hosts (mpirun -H, srun -w), e.g. spark5:1,spark6:1"},
		&cli.StringSliceFlag{Name: "mpi-arg", Category: launchCategory,
			Usage: "argument for mpirun/srun, repeatable; write --mpi-arg=--allow-run-as-root for values that start with -"},
		&cli.StringFlag{Name: "mpi-flavor", Category: launchCategory,
			Usage: "openmpi (-x K=V) or mpich (-genv K V, also Intel MPI); default: detect from mpirun --version"},
		&cli.StringFlag{Name: "mpirun", Category: launchCategory,
			Usage: "mpirun executable `PATH` (default mpirun on PATH)"},
		&cli.StringFlag{Name: "bench", Category: launchCategory,
			Usage: "nccl-tests benchmark `PATH` (default all_reduce_perf on PATH)"},
		&cli.StringSliceFlag{Name: "bench-arg", Category: launchCategory,
			Usage: "extra benchmark argument, repeatable (e.g. --bench-arg=-a --bench-arg=3)"},
		&cli.StringFlag{Name: "wrapper", Category: launchCategory,
			Usage: "program run in front of the benchmark on each rank, e.g. scripts/fakehost.sh"},
		&cli.StringFlag{Name: "instrument", Value: runner.InstrumentNCCLTests, Category: launchCategory,
			Usage: "what measures: nccl-tests (all_reduce_perf) or torch (nccltune's torch.distributed all-reduce script, for containers without nccl-tests; see docs/TORCH.md)"},
		&cli.StringFlag{Name: "torch-script", Category: launchCategory,
			Usage: "the torch instrument's script `PATH` as the ranks see it (inside the container for docker exec); default: nccltune's own copy, written next to each launch"},
		&cli.StringFlag{Name: "prefix", Category: launchCategory,
			Usage: "command, as one string, run in front of the benchmark on each rank (before --wrapper), e.g. 'torchrun --nproc-per-node 2' or 'docker exec sglang'; a docker/podman exec gets the launch's env as -e K=V"},
		&flagvalue.List{GenericFlag: cli.GenericFlag{Name: "base-env", Category: launchCategory,
			Usage: "fixed `K=V` for every launch (NCCL_IB_HCA, NCCL_SOCKET_IFNAME…), repeatable; recorded with the results",
			Value: &flagvalue.KV{Flag: "base-env", KeepSpace: true, Check: flagvalue.EnvItem("base-env")}}}, // values are passed verbatim
		&cli.StringFlag{Name: "base-env-file", Category: launchCategory,
			Usage: "file of K=V lines (# comments, optional 'export ') added to the base env"},
		&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Category: launchCategory,
			Usage: "per-launch limit; a launch past it is killed with its whole process group and recorded as timed out"},
		&cli.IntFlag{Name: "iters", Category: launchCategory,
			Usage: "timed iterations per size (nccl-tests -n; default: nccl-tests' own)"},
		&cli.IntFlag{Name: "warmup", Category: launchCategory,
			Usage: "warm-up iterations per size (nccl-tests -w; default: nccl-tests' own)"},
		&cli.StringFlag{Name: "sim", Category: launchCategory,
			Usage: "run the SIMULATED fabric `PROFILE` instead of hardware: spark2, spark4, h200-loopback, flat, a profile FILE.json, or a replay of recorded launches: replay:FILE.db (a store; a bbolt file is also recognised without replay:) or replay:FILE.json (made by 'nccltune replay build')"},
		&cli.Float64Flag{Name: "noise", Value: 1, Category: launchCategory,
			Usage: "simulated noise scale: 1 calibrated, 0 the true curve"},
		&cli.Int64Flag{Name: "seed", Value: 1, Category: launchCategory,
			Usage: "seed for the simulated fabric and the search (reproducible runs)"},
	}
}

// launchOptions are the launch flags as read from the command line.
type launchOptions struct {
	spec runner.Spec
	// simulated is true when --sim was given.
	simulated bool
	seed      int64
}

// readLaunchFlags turns the launch flags into a runner.Spec (config,
// sizes and per-launch simulator seed are the caller's to fill in).
func readLaunchFlags(c *cli.Context) (launchOptions, error) {
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
	if h := c.String("hosts"); h != "" {
		for _, host := range strings.Split(h, ",") {
			s.Hosts = append(s.Hosts, strings.TrimSpace(host))
		}
	}
	if p := c.String("prefix"); p != "" {
		words, err := runner.SplitCommandLine(p)
		if err != nil {
			return launchOptions{}, usageErrorf("--prefix: %v", err)
		}
		s.Prefix = words
	}
	if w := c.String("wrapper"); w != "" {
		s.Prefix = append(s.Prefix, w)
	}
	if s.Iters < 0 || s.Warmup < 0 {
		return launchOptions{}, usageErrorf("--iters and --warmup cannot be negative")
	}
	base, err := readBaseEnv(flagvalue.Items(c, "base-env"), c.String("base-env-file"))
	if err != nil {
		return launchOptions{}, usageError(err)
	}
	s.BaseEnv = base
	opts := launchOptions{seed: c.Int64("seed")}
	if profile := c.String("sim"); profile != "" {
		if c.IsSet("launcher") && s.Launcher != "local" {
			return launchOptions{}, usageErrorf("--sim runs the simulated fabric as one local process; drop --launcher %s", s.Launcher)
		}
		if c.IsSet("bench") {
			return launchOptions{}, usageErrorf("--sim replaces the benchmark; drop --bench")
		}
		noise := c.Float64("noise")
		if math.IsNaN(noise) || math.IsInf(noise, 0) {
			return launchOptions{}, usageErrorf("--noise %v: give a finite noise scale (1 calibrated, 0 the true curve)", noise)
		}
		if noise < 0 {
			return launchOptions{}, usageErrorf("--noise %g: the noise scale cannot be negative (0 is the true curve)", noise)
		}
		exe, err := os.Executable()
		if err != nil {
			return launchOptions{}, fmt.Errorf("finding nccltune's own executable to run the simulated fabric: %w", err)
		}
		if profile, err = resolveSimArg(profile); err != nil {
			return launchOptions{}, err
		}
		if err := checkSimProfile(profile); err != nil {
			return launchOptions{}, err
		}
		s.Sim = &runner.SimSpec{Executable: exe, Profile: profile, Noise: noise, Seed: opts.seed}
		opts.simulated = true
	} else if c.IsSet("noise") {
		return launchOptions{}, usageErrorf("--noise only applies to the simulated fabric (--sim PROFILE)")
	}
	if err := s.Validate(); err != nil {
		return launchOptions{}, usageError(err)
	}
	opts.spec = s
	return opts, nil
}

// readBaseEnv merges --base-env-file (first) and --base-env items (each
// checked as it was set).
func readBaseEnv(items []string, file string) (map[string]string, error) {
	env := map[string]string{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--base-env-file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			line = strings.TrimPrefix(line, "export ")
			k, v, err := nccl.ParseKeyValue(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			env[k] = unquote(v)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("--base-env-file %s: %w", file, err)
		}
	}
	for _, it := range items {
		k, v, err := nccl.ParseKeyValue(it)
		if err != nil {
			return nil, fmt.Errorf("--base-env: %w", err)
		}
		env[k] = v
	}
	for _, k := range sortedKeys(env) {
		if err := nccl.CheckEnvName(k); err != nil {
			return nil, fmt.Errorf("--base-env: %w", err)
		}
	}
	knobs := nccl.Config{}
	for k, v := range env {
		if nccl.IsKnob(k) {
			knobs[k] = v
		}
	}
	// Each value, then the rules between knobs (MIN ≤ MAX…).
	if err := knobs.Validate(); err != nil {
		return nil, fmt.Errorf("--base-env: %w", err)
	}
	return env, nil
}

// unquote strips one level of matching quotes, as an env file would have.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// sortedKeys lists a map's keys in order, so errors come out the same way
// every run.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// measureOptions are what the commands that measure one config
// repeatedly (sweep, gate) share.
type measureOptions struct {
	launch  launchOptions
	config  nccl.Config // --env
	repeats int
	warmup  bool // not --no-warmup
	json    bool
	db      string
	stdout  io.Writer
	stderr  io.Writer
	naming  studyNaming
}

// readMeasureFlags reads the launch flags, --env, --repeats (checked by
// the caller, checkRepeats), --no-warmup, --json and the database.
func readMeasureFlags(c *cli.Context) (measureOptions, error) {
	lo, err := readLaunchFlags(c)
	if err != nil {
		return measureOptions{}, err
	}
	cfg, err := readEnvFlag(c, lo.spec.BaseEnv)
	if err != nil {
		return measureOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return measureOptions{}, err
	}
	return measureOptions{launch: lo, config: cfg, repeats: c.Int("repeats"), warmup: !c.Bool("no-warmup"),
		json: c.Bool("json"), db: path, stdout: c.App.Writer, stderr: c.App.ErrWriter}, nil
}

// checkRepeats refuses --repeats below one launch.
func checkRepeats(n int) error {
	if n < 1 {
		return usageErrorf("--repeats %d: measure at least once", n)
	}
	return nil
}

// envFlag is --env, the NCCL knobs (K=V) of the config a command
// launches, read by readEnvFlag.
func envFlag(usage string) *flagvalue.List {
	return flagvalue.KVFlag("env", usage, flagvalue.KnobItem("env"))
}

// noWarmupFlag is --no-warmup of the commands that measure one config
// repeatedly (sweep, gate).
func noWarmupFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-warmup", Usage: "skip the uncounted warm-up launch"}
}

// readEnvFlag reads --env K=V items into a config of known knobs, refusing
// a knob the base env already fixes.
func readEnvFlag(c *cli.Context, base map[string]string) (nccl.Config, error) {
	cfg, err := nccl.ParseConfig(flagvalue.Items(c, "env"))
	if err != nil {
		return nil, usageError(fmt.Errorf("--env: %w", err))
	}
	for k := range base {
		if _, ok := cfg[k]; ok {
			return nil, usageErrorf("%s is set by both --env and --base-env; keep one", k)
		}
	}
	return cfg, nil
}

// readSizeRange reads --min and --max, a sweep's first and last size.
func readSizeRange(c *cli.Context) (min, max int64, err error) {
	min, max = flagvalue.SizeOf(c, "min"), flagvalue.SizeOf(c, "max")
	if err := flagvalue.CheckElementSize("min", min); err != nil {
		return 0, 0, err
	}
	if err := (nccl.Band{Min: min, Max: max}).Validate(); err != nil {
		return 0, 0, usageError(fmt.Errorf("--min/--max: %w", err))
	}
	return min, max, nil
}

// checkSimProfile loads a --sim profile before anything is stored, so a
// typo is a usage error naming the nearest built-in profile, not a failed
// study (the simulated fabric loads it again in each launch).
func checkSimProfile(profile string) error {
	if sim.IsReplay(profile) {
		return nil // resolveSimArg has loaded it
	}
	if _, err := sim.LoadProfile(profile); err != nil {
		best, bestD := "", 3
		for _, name := range sim.BuiltinProfiles() {
			if d := nccl.EditDistance(strings.ToLower(profile), name); d < bestD {
				best, bestD = name, d
			}
		}
		if best != "" {
			return usageErrorf("--sim %s: did you mean %s? (%v)", profile, best, err)
		}
		return usageErrorf("--sim %s: %v", profile, err)
	}
	return nil
}
