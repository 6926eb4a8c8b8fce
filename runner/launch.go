package runner

import (
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
)

// MPI flavours decide how mpirun passes environment variables.
const (
	OpenMPI = "openmpi" // mpirun -x K=V
	MPICH   = "mpich"   // mpiexec/mpirun -genv K V (MPICH, Intel MPI, MVAPICH)
)

// Spec describes one launch of the benchmark for one config.
type Spec struct {
	// Launcher is "local", "mpirun" or "srun".
	Launcher string
	// MPIFlavor is OpenMPI or MPICH; "" means detect from `mpirun --version`.
	MPIFlavor string
	// MPIRun is the mpirun executable; "" means "mpirun" on PATH.
	MPIRun string
	// NP is the number of ranks (mpirun -np, srun -n); 0 leaves it to the launcher.
	NP int
	// Hosts are the hosts to run on (mpirun -H, srun -w).
	Hosts []string
	// MPIArgs are passed to mpirun/srun verbatim, before the benchmark.
	MPIArgs []string
	// Op is the collective measured ("" is all-reduce).
	Op nccl.Op
	// Bench is the benchmark executable or nccl-tests' build directory
	// (BenchPath).
	Bench string
	// BenchArgs are extra benchmark arguments, appended after nccltune's own.
	BenchArgs []string
	// Prefix is put in front of the benchmark inside the launcher, e.g. a
	// wrapper script such as scripts/fakehost.sh.
	Prefix []string
	// BaseEnv is the lane's fixed environment, passed to every rank.
	BaseEnv map[string]string
	// Config is the searched NCCL knobs for this launch.
	Config nccl.Config
	// MinBytes, MaxBytes give the sweep (-b, -e, -f 2).
	MinBytes, MaxBytes int64
	// Iters and Warmup are nccl-tests' -n and -w; 0 keeps nccl-tests' defaults.
	Iters, Warmup int
	// PerIter asks for per-iteration samples (-I 1 -J file) when the
	// benchmark supports them (nccl-tests 2.19.2+).
	PerIter bool
	// NoCheck adds -c 0 (no correctness check).
	NoCheck bool
	// Debug sets NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS to DefaultDebugSubsys.
	Debug bool
	// Timeout bounds the whole launch; 0 means no limit.
	Timeout time.Duration
	// WorkDir holds the launch's JSON output file; "" uses a temp dir.
	WorkDir string
	// Sim, when set, runs the simulated fabric instead of a real benchmark.
	Sim *SimSpec
	// Instrument is InstrumentNCCLTests ("" too) or InstrumentTorch.
	Instrument string
	// TorchScript is the torch instrument's script as the ranks see it; ""
	// writes nccltune's embedded copy next to the launch (this machine only).
	TorchScript string
	// Batch, when set, measures every config of the plan in one launch of
	// the torch instrument (or the simulated fabric); Config is then empty.
	Batch *BatchPlan
	// batchPlanPath is where Run wrote the plan for this launch.
	batchPlanPath string
}

// SimSpec selects the simulated fabric. The simulator runs as a child
// process (sim.Main), so a simulated launch takes the same path as a real one.
type SimSpec struct {
	// Executable runs the simulator (the CLI uses its own executable).
	Executable string
	// Profile is a built-in profile name or a JSON file.
	Profile string
	// Noise scales the noise: 1 is the profile's calibrated noise, 0 the true curve.
	Noise float64
	// Seed makes the launch reproducible; callers vary it per launch.
	Seed int64
	// Launch is the index of this launch since the fabric started (launch
	// 0 is slow, as on real fabrics).
	Launch int
}
