package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// DefaultDebugSubsys are the NCCL_DEBUG_SUBSYS values a debug launch asks
// for: transport, GDR, rings, channel connection lines (INIT), topology
// (GRAPH) and the per-size tuning choices.
const DefaultDebugSubsys = "INIT,ENV,NET,GRAPH,TUNING"

// Command is a launch ready to start: argv and the environment variables
// nccltune adds to its own environment for the launcher.
type Command struct {
	Argv []string
	// Env are sorted "K=V" pairs for the launcher's environment (and its
	// command line where it forwards them to remote ranks).
	Env []string
	// JSONPath is where the benchmark writes -J output, "" if not asked.
	JSONPath string
}

// CheckHost refuses what cannot be one entry of --hosts: a name or
// address (letters, digits, '.', '-', '_', Slurm's brackets) not starting
// with '-' (the launcher would read an option), optionally followed by
// :SLOTS, a positive number. Anything else would fail after the study
// was stored.
func CheckHost(h string) error {
	const hint = "give --hosts h1,h2 (append :slots for Open MPI, e.g. h1:1)"
	name, slots, hasSlots := strings.Cut(h, ":")
	if name == "" || name[0] == '-' || strings.TrimFunc(name, isHostRune) != "" {
		return fmt.Errorf("host %q is not a host name; %s", h, hint)
	}
	if hasSlots {
		n, err := strconv.Atoi(slots)
		if err != nil || n < 1 || strings.HasPrefix(slots, "+") {
			return fmt.Errorf("host %q: the slots after ':' must be a positive whole number, e.g. %s:1; %s", h, name, hint)
		}
	}
	return nil
}

func isHostRune(r rune) bool {
	return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_[]", r))
}

// Validate checks a spec before anything is launched.
func (s Spec) Validate() error {
	if !slices.Contains([]string{"", "local", "mpirun", "srun"}, s.Launcher) {
		return fmt.Errorf("unknown launcher %q; use local, mpirun or srun", s.Launcher)
	}
	if s.NP < 0 {
		return fmt.Errorf("--np %d: the number of ranks cannot be negative", s.NP)
	}
	if s.MPIFlavor != "" && s.MPIFlavor != OpenMPI && s.MPIFlavor != MPICH {
		return fmt.Errorf("unknown MPI flavour %q; use %s (mpirun -x K=V) or %s (-genv K V, also Intel MPI)", s.MPIFlavor, OpenMPI, MPICH)
	}
	for _, h := range s.Hosts {
		if err := CheckHost(h); err != nil {
			return err
		}
	}
	if len(s.Hosts) > 0 && (s.Launcher == "" || s.Launcher == "local") && s.Sim == nil {
		return fmt.Errorf("--hosts needs --launcher mpirun or srun (local runs on this machine only)")
	}
	if s.MinBytes < 0 || s.MaxBytes < 0 || (s.MaxBytes > 0 && s.MinBytes > s.MaxBytes) {
		return fmt.Errorf("sweep %s-%s is out of order", nccl.FormatSize(s.MinBytes), nccl.FormatSize(s.MaxBytes))
	}
	if err := s.Config.Validate(); err != nil {
		return err
	}
	for k := range s.BaseEnv {
		if _, searched := s.Config[k]; searched {
			return fmt.Errorf("%s is both in the base env and in the config; a knob is either fixed or searched, not both", k)
		}
	}
	if !s.Op.OrAllReduce().Valid() {
		return fmt.Errorf("unknown collective %q: use one of %s", s.Op, strings.Join(nccl.OpNames(), ", "))
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout %s cannot be negative", s.Timeout)
	}
	if err := s.validateInstrument(); err != nil {
		return err
	}
	return s.validateBatch()
}

// EnvVars returns every variable the launch sets, sorted "K=V": the base
// env, the config's knobs, and NCCL_DEBUG settings for a debug launch.
func (s Spec) EnvVars() []string {
	m := map[string]string{}
	maps.Copy(m, s.BaseEnv)
	maps.Copy(m, s.Config.Clone()) // the knobs set, which win
	if s.Debug {
		m["NCCL_DEBUG"] = "INFO"
		m["NCCL_DEBUG_SUBSYS"] = DefaultDebugSubsys
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// BenchArgv returns the benchmark and its arguments (with the prefix, such
// as a wrapper script, in front), as the launcher will run it on each rank.
func (s Spec) BenchArgv(jsonPath string) []string {
	if s.torch() {
		return s.torchArgv() // no -J: the script always prints its samples
	}
	var argv []string
	argv = append(argv, s.Prefix...)
	if s.Sim != nil {
		argv = append(argv, s.Sim.Executable, simChildArg,
			"--profile", s.Sim.Profile,
			"--noise", strconv.FormatFloat(s.Sim.Noise, 'g', -1, 64),
			"--seed", strconv.FormatInt(s.Sim.Seed, 10),
			"--launch", strconv.Itoa(s.Sim.Launch))
		if op := s.Op.OrAllReduce(); op != nccl.AllReduce {
			argv = append(argv, "--collective", string(op))
		}
		if s.NP > 0 {
			argv = append(argv, "--ranks", strconv.Itoa(s.NP))
		}
		if s.Batch != nil {
			return append(append(argv, s.batchArgs()...), s.BenchArgs...)
		}
	} else {
		argv = append(argv, s.BenchPath())
	}
	argv = append(argv, s.sweepArgs()...)
	if jsonPath != "" {
		argv = append(argv, "-I", "1", "-J", jsonPath)
	}
	return append(argv, s.BenchArgs...)
}

// sweepArgs are the sizes, iterations and check flags, which nccl-tests
// and the torch instrument spell alike.
func (s Spec) sweepArgs() []string {
	var argv []string
	if s.MinBytes > 0 {
		argv = append(argv, "-b", strconv.FormatInt(s.MinBytes, 10))
	}
	if s.MaxBytes > 0 {
		argv = append(argv, "-e", strconv.FormatInt(s.MaxBytes, 10))
	}
	if s.MinBytes > 0 || s.MaxBytes > 0 {
		argv = append(argv, "-f", "2")
	}
	if s.Iters > 0 {
		argv = append(argv, "-n", strconv.Itoa(s.Iters))
	}
	if s.Warmup > 0 {
		argv = append(argv, "-w", strconv.Itoa(s.Warmup))
	}
	if s.NoCheck {
		argv = append(argv, "-c", "0")
	}
	return argv
}

// simChildArg mirrors sim.ChildArg; runner must not import sim (the
// simulator is a separate process, like any benchmark).
const simChildArg = "__nccltune_sim"

// BuildCommand turns a spec into the exact argv and environment for the
// launch. flavor is the MPI flavour to use for mpirun (ignored otherwise).
func (s Spec) BuildCommand(flavor, jsonPath string) (Command, error) {
	if err := s.Validate(); err != nil {
		return Command{}, err
	}
	env := s.EnvVars()
	bench := s.BenchArgv(jsonPath)
	var argv []string
	launcher := s.Launcher
	if s.Sim != nil {
		launcher = "local" // the simulated fabric is one local process
	}
	switch launcher {
	case "", "local":
		argv = bench
	case "mpirun":
		hostsFlag, known := map[string]string{OpenMPI: "-H", MPICH: "-hosts"}[flavor]
		if !known {
			return Command{}, fmt.Errorf("unknown MPI flavour %q", flavor)
		}
		argv = []string{cmp.Or(s.MPIRun, "mpirun")}
		if s.NP > 0 {
			argv = append(argv, "-np", strconv.Itoa(s.NP))
		}
		if len(s.Hosts) > 0 {
			argv = append(argv, hostsFlag, strings.Join(s.Hosts, ","))
		}
		argv = append(argv, s.MPIArgs...)
		for _, kv := range env {
			if flavor == OpenMPI {
				argv = append(argv, "-x", kv)
			} else {
				k, v, _ := strings.Cut(kv, "=")
				argv = append(argv, "-genv", k, v)
			}
		}
		argv = append(argv, bench...)
	case "srun":
		argv = []string{"srun"}
		if s.NP > 0 {
			argv = append(argv, "-n", strconv.Itoa(s.NP))
		}
		if len(s.Hosts) > 0 {
			argv = append(argv, "-w", strings.Join(s.Hosts, ","))
		}
		argv = append(argv, srunExport(env))
		argv = append(argv, s.MPIArgs...)
		argv = append(argv, bench...)
	}
	return Command{Argv: argv, Env: env, JSONPath: jsonPath}, nil
}

// srunExport builds --export=ALL,K=V,…. srun splits it on commas, so a
// value holding one is exported by name only, from srun's environment.
func srunExport(env []string) string {
	parts := []string{"ALL"}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.Contains(v, ",") {
			parts = append(parts, k)
		} else {
			parts = append(parts, kv)
		}
	}
	return "--export=" + strings.Join(parts, ",")
}

// ErrLauncherNotFound reports a missing mpirun or srun. It is a fabric
// failure (vocab.ErrFabric, exit code 3) wherever it surfaces.
var ErrLauncherNotFound = vocab.Mark(vocab.ErrFabric, errors.New("launcher not found"))

var flavorCache sync.Map // mpirun path → flavour

// DetectMPIFlavor runs `mpirun --version` and reads whose MPI it is.
func DetectMPIFlavor(ctx context.Context, mpirun string) (string, error) {
	mpirun = cmp.Or(mpirun, "mpirun")
	if f, ok := flavorCache.Load(mpirun); ok {
		return f.(string), nil
	}
	if _, err := lookPath(mpirun); err != nil {
		return "", fmt.Errorf("%w: %s — install Open MPI or MPICH, pass --mpirun PATH, or use --launcher local or srun", ErrLauncherNotFound, whyNotRunnable(mpirun))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, mpirun, "--version").CombinedOutput()
	flavor := FlavorFromVersion(string(out))
	if flavor == "" {
		if err != nil {
			return "", fmt.Errorf("could not tell which MPI %s is (`%s --version` failed: %v); pass --mpi-flavor openmpi or mpich", mpirun, mpirun, err)
		}
		return "", fmt.Errorf("could not tell which MPI %s is from its --version output; pass --mpi-flavor openmpi or mpich", mpirun)
	}
	flavorCache.Store(mpirun, flavor)
	return flavor, nil
}

// FlavorFromVersion reads `mpirun --version` output: Open MPI says "Open
// MPI" or "OpenRTE"; MPICH's Hydra, Intel MPI and MVAPICH take -genv.
func FlavorFromVersion(out string) string {
	l := strings.ToLower(out)
	switch {
	case strings.Contains(l, "open mpi"), strings.Contains(l, "openrte"), strings.Contains(l, "open-mpi"):
		return OpenMPI
	case strings.Contains(l, "hydra"), strings.Contains(l, "mpich"), strings.Contains(l, "intel(r) mpi"), strings.Contains(l, "mvapich"):
		return MPICH
	}
	return ""
}
