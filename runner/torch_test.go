package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// TestTorchScriptCopyMatches: scripts/nccltune_allreduce.py (a link) is
// the embedded script.
func TestTorchScriptCopyMatches(t *testing.T) {
	repo, err := os.ReadFile(filepath.Join("..", "scripts", TorchScriptName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(repo, torchScript) {
		t.Fatalf("scripts/%s differs from the embedded runner/%s: it should be a link to it (ln -sf ../runner/%s scripts/%s)", TorchScriptName, TorchScriptName, TorchScriptName, TorchScriptName)
	}
}

func TestTorchArgv(t *testing.T) {
	base := Spec{
		Instrument: benchfmt.InstrumentTorch, TorchScript: "/opt/nccltune_allreduce.py",
		MinBytes: 512 * 1024, MaxBytes: 4 << 20, Iters: 100, Warmup: 20,
		BaseEnv: map[string]string{"NCCL_SOCKET_IFNAME": "lo"},
		Config:  nccl.Config{"NCCL_PROTO": "LL,Simple"},
	}
	script := []string{"/opt/nccltune_allreduce.py", "-b", "524288", "-e", "4194304", "-f", "2", "-n", "100", "-w", "20"}
	py := append([]string{"python3"}, script...)
	env := []string{"NCCL_PROTO=LL,Simple", "NCCL_SOCKET_IFNAME=lo"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name   string
		edit   func(*Spec)
		flavor string
		want   []string
	}{
		{"local", func(s *Spec) {}, "", py},
		{"local with a torchrun prefix runs the script itself", func(s *Spec) {
			s.Prefix = []string{"torchrun", "--nproc-per-node", "2"}
		}, "", cat([]string{"torchrun", "--nproc-per-node", "2"}, script)},
		{"torchrun --no-python with a wrapper", func(s *Spec) {
			s.Prefix = []string{"torchrun", "--nproc-per-node", "2", "--no-python", "./scripts/fakehost.sh"}
		}, "", cat([]string{"torchrun", "--nproc-per-node", "2", "--no-python", "./scripts/fakehost.sh"}, py)},
		{"python -m torch.distributed.run", func(s *Spec) {
			s.Prefix = []string{"python3", "-m", "torch.distributed.run", "--nproc-per-node", "8"}
		}, "", cat([]string{"python3", "-m", "torch.distributed.run", "--nproc-per-node", "8"}, script)},
		{"a prefix ending in an interpreter", func(s *Spec) {
			s.Prefix = []string{"/venv/bin/python3.11"}
		}, "", cat([]string{"/venv/bin/python3.11"}, script)},
		{"docker exec gets the env as -e, before the user's options", func(s *Spec) {
			s.Prefix = []string{"docker", "exec", "-w", "/work", "sglang"}
			s.NoCheck = true
			s.BenchArgs = []string{"--device", "cuda:0"}
		}, "", cat([]string{"docker", "exec", "-e", env[0], "-e", env[1], "-w", "/work", "sglang"}, py,
			[]string{"-c", "0", "--device", "cuda:0"})},
		{"docker exec into torchrun", func(s *Spec) {
			s.Prefix = []string{"sudo", "docker", "container", "exec", "vllm", "torchrun", "--nproc-per-node", "8"}
		}, "", cat([]string{"sudo", "docker", "container", "exec", "-e", env[0], "-e", env[1], "vllm", "torchrun", "--nproc-per-node", "8"}, script)},
		{"podman exec, debug env", func(s *Spec) {
			s.Prefix = []string{"podman", "exec", "c1"}
			s.Debug = true
		}, "", cat([]string{"podman", "exec", "-e", "NCCL_DEBUG=INFO", "-e", "NCCL_DEBUG_SUBSYS=" + DefaultDebugSubsys,
			"-e", env[0], "-e", env[1], "c1"}, py)},
		{"docker run is not docker exec", func(s *Spec) {
			s.Prefix = []string{"docker", "run", "--rm", "img"}
		}, "", cat([]string{"docker", "run", "--rm", "img"}, py)},
		{"kubectl exec gets env after --", func(s *Spec) {
			s.Prefix = []string{"kubectl", "exec", "pod-0", "-c", "vllm", "--"}
		}, "", cat([]string{"kubectl", "exec", "pod-0", "-c", "vllm", "--", "env", env[0], env[1]}, py)},
		{"mpirun -x with the loopback wrapper", func(s *Spec) {
			s.Launcher, s.NP = "mpirun", 2
			s.MPIArgs = []string{"--allow-run-as-root", "--bind-to", "none"}
			s.Prefix = []string{"./scripts/fakehost.sh"}
			s.BenchArgs = []string{"--device", "cuda:0"}
		}, OpenMPI, cat([]string{"mpirun", "-np", "2", "--allow-run-as-root", "--bind-to", "none",
			"-x", env[0], "-x", env[1], "./scripts/fakehost.sh"}, py, []string{"--device", "cuda:0"})},
		{"mpirun into one container per host passes the rank by name", func(s *Spec) {
			s.Launcher, s.NP, s.Hosts = "mpirun", 2, []string{"spark5:1", "spark6:1"}
			s.Prefix = []string{"docker", "exec", "sglang"}
		}, OpenMPI, cat([]string{"mpirun", "-np", "2", "-H", "spark5:1,spark6:1", "-x", env[0], "-x", env[1],
			"docker", "exec", "-e", env[0], "-e", env[1],
			"-e", "OMPI_COMM_WORLD_RANK", "-e", "OMPI_COMM_WORLD_SIZE", "-e", "OMPI_COMM_WORLD_LOCAL_RANK",
			"-e", "PMI_RANK", "-e", "PMI_SIZE", "-e", "MPI_LOCALRANKID", "sglang"}, py)},
		{"srun", func(s *Spec) {
			s.Launcher, s.NP = "srun", 4
		}, "", cat([]string{"srun", "-n", "4", "--export=ALL,NCCL_PROTO,NCCL_SOCKET_IFNAME=lo"}, py)},
		{"another op goes to the script as --op", func(s *Spec) {
			s.Op = nccl.AllGather
		}, "", cat([]string{"python3", "/opt/nccltune_allreduce.py", "--op", "all_gather"}, script[1:])},
		{"all-reduce, the script's default, is left out for copies from before --op", func(s *Spec) {
			s.Op = nccl.AllReduce
		}, "", py},
		{"default script name before Run writes it", func(s *Spec) {
			s.TorchScript = ""
			s.MinBytes, s.MaxBytes, s.Iters, s.Warmup = 0, 0, 0, 0
		}, "", []string{"python3", TorchScriptName}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			tt.edit(&s)
			cmd, err := s.BuildCommand(tt.flavor, "/tmp/ignored.json")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cmd.Argv, tt.want) {
				t.Errorf("argv\n got %q\nwant %q", cmd.Argv, tt.want)
			}
			if !reflect.DeepEqual(cmd.Env, s.EnvVars()) || cmd.JSONPath != "/tmp/ignored.json" && cmd.JSONPath != "" {
				t.Errorf("env %q json %q", cmd.Env, cmd.JSONPath)
			}
			for _, a := range cmd.Argv {
				if a == "-J" || a == "-I" {
					t.Errorf("the torch instrument got nccl-tests' per-iteration flags: %q", cmd.Argv)
				}
			}
		})
	}
}

func TestValidateInstrument(t *testing.T) {
	tests := []struct {
		spec Spec
		err  string
	}{
		{Spec{}, ""},
		{Spec{Instrument: benchfmt.InstrumentNCCLTests}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: "x.py"}, ""},
		{Spec{Instrument: "jax"}, `unknown instrument "jax"`},
		{Spec{TorchScript: "x.py"}, "only applies to --instrument torch"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Bench: "all_reduce_perf"}, "drop --bench"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Sim: &SimSpec{Executable: "x", Profile: "spark4"}}, "drop one of them"},
		{Spec{Instrument: benchfmt.InstrumentTorch}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Launcher: "mpirun", NP: 2}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{"torchrun", "--nproc-per-node", "2"}}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{"docker", "exec", "sglang"}}, "docker cp scripts/nccltune_allreduce.py"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{"sudo", "docker", "container", "exec", "sglang"}}, "--torch-script /tmp/"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{"kubectl", "exec", "p", "--"}}, "docker cp"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{"docker", "exec", "sglang"}, TorchScript: "/tmp/x.py"}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Launcher: "mpirun", Hosts: []string{"a", "b"}}, "at one path on every host"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Launcher: "srun"}, "at one path on every host"},
		{Spec{Instrument: benchfmt.InstrumentTorch, Launcher: "srun", WorkDir: "/shared/run"}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Op: nccl.AllToAll}, ""},
		{Spec{Instrument: benchfmt.InstrumentTorch, Op: "allgatherv"}, "unknown collective"},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%+v: error %v, want %q", tt.spec, err, tt.err)
		}
	}
}

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"docker exec sglang", []string{"docker", "exec", "sglang"}, false},
		{"  torchrun   --nproc-per-node 2\t", []string{"torchrun", "--nproc-per-node", "2"}, false},
		{`docker exec -e 'A=x y' "my c" b\ c`, []string{"docker", "exec", "-e", "A=x y", "my c", "b c"}, false},
		{`sh -c "echo \"hi\" \$HOME"`, []string{"sh", "-c", `echo "hi" $HOME`}, false},
		{`a ''`, []string{"a", ""}, false},
		{`a 'b`, nil, true},
		{`a "b`, nil, true},
		{`a \`, nil, true},
		{"", nil, false},
	}
	for _, tt := range tests {
		got, err := SplitCommandLine(tt.in)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommandLine(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

var pythonOnce struct {
	sync.Once
	python string
	torch  bool
}

// findPython returns a python3, and whether it can import torch
// (importing torch takes seconds, so it is tried once per test binary).
func findPython(t *testing.T) (python string, torch bool) {
	t.Helper()
	pythonOnce.Do(func() { pythonOnce.python, pythonOnce.torch = lookPython() })
	if pythonOnce.python == "" {
		t.Skip("no python3 on PATH")
	}
	return pythonOnce.python, pythonOnce.torch
}

func lookPython() (python string, torch bool) {
	candidates := []string{os.Getenv("NCCLTUNE_TORCH_PYTHON"), "python3", "/usr/bin/python3"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		// A version manager's shim (pyenv's is a bash script that runs
		// several more) costs about half a second a start; the tests start
		// python dozens of times, so they run the interpreter it picks.
		if out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output(); err == nil {
			if exe := strings.TrimSpace(string(out)); filepath.IsAbs(exe) {
				p = exe
			}
		}
		if python == "" {
			python = p
		}
		if exec.Command(p, "-c", "import torch.distributed as d; assert d.is_available()").Run() == nil {
			return p, true
		}
	}
	return python, false
}

func scriptPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "scripts", TorchScriptName))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTorchScriptWithoutTorch runs what needs no torch: it compiles, --help
// answers, and --dry-run reads sizes and the launchers' rank variables.
func TestTorchScriptWithoutTorch(t *testing.T) {
	t.Parallel() // python processes of its own; no env, no working directory
	python, _ := findPython(t)
	script := scriptPath(t)
	compile := exec.Command(python, "-m", "py_compile", script)
	compile.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir()) // not into scripts/__pycache__
	if out, err := compile.CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	// -S -I: no site packages, so torch cannot be imported even where it is installed.
	out, err := exec.Command(python, "-S", "-I", script, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--backend") {
		t.Fatalf("--help without torch: %v\n%s", err, out)
	}
	tests := []struct {
		env   []string
		args  []string
		rank  int
		world int
		local int
		from  string
		sizes []int64
	}{
		{nil, []string{"-b", "512K", "-e", "4M"}, 0, 1, 0, "single process", []int64{524288, 1048576, 2097152, 4194304}},
		{[]string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=1"},
			[]string{"-b", "1000", "-e", "4000", "-f", "2"}, 1, 2, 1, "Open MPI", []int64{1000, 2000, 4000}},
		{[]string{"RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=", "SLURM_PROCID=0", "SLURM_NTASKS=2"},
			[]string{"-b", "1G", "-e", "1G"}, 3, 8, 3, "torchrun", []int64{1 << 30}},
		{[]string{"RANK=", "WORLD_SIZE=", "SLURM_PROCID=5", "SLURM_NTASKS=6", "SLURM_LOCALID=1"},
			[]string{"-b", "6", "-e", "30", "-f", "3"}, 5, 6, 1, "Slurm", []int64{4, 16}},
	}
	for _, tt := range tests {
		cmd := exec.Command(python, "-S", "-I", script, "--dry-run")
		cmd.Args = append(cmd.Args, tt.args...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tt.env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		var plan struct {
			Instrument string  `json:"instrument"`
			DryRun     bool    `json:"dry_run"`
			Rank       int     `json:"rank"`
			W          int     `json:"world"`
			L          int     `json:"local_rank"`
			Launcher   string  `json:"launcher"`
			Sizes      []int64 `json:"sizes"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &plan); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if plan.Instrument != benchfmt.TorchInstrumentName || !plan.DryRun || plan.Rank != tt.rank || plan.W != tt.world ||
			plan.L != tt.local || plan.Launcher != tt.from || !reflect.DeepEqual(plan.Sizes, tt.sizes) {
			t.Errorf("env %q args %q: plan %s", tt.env, tt.args, out)
		}
	}
	for _, bad := range [][]string{{"-b", "4M", "-e", "1M"}, {"-b", "12Q"}, {"-n", "0"}, {"-f", "1"}, {"-c", "2"}} {
		cmd := exec.Command(python, "-S", "-I", script, "--dry-run")
		cmd.Args = append(cmd.Args, bad...)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%q accepted: %s", bad, out)
		}
	}
}

// TestTorchScriptGloo runs the script for real on the CPU with two ranks
// and the gloo backend (no GPU), where PyTorch is installed; the output
// must parse into a complete, correct result.
func TestTorchScriptGloo(t *testing.T) {
	python, torch := findPython(t)
	if !torch {
		t.Skip("PyTorch with torch.distributed is not installed for python3 (set NCCLTUNE_TORCH_PYTHON to one that has it)")
	}
	port := freePort(t)
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for rank := 0; rank < 2; rank++ {
		cmd := exec.Command(python, scriptPath(t), "-b", "4K", "-e", "32K", "-w", "2", "-n", "5", "--device", "cpu", "--arm", "gloo-test")
		cmd.Env = append(os.Environ(), "OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank), "OMPI_COMM_WORLD_SIZE=2",
			"OMPI_COMM_WORLD_LOCAL_RANK="+strconv.Itoa(rank), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port),
			"RANK=", "WORLD_SIZE=")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outs[rank], &stderr
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			if err := cmd.Run(); err != nil {
				errs[rank] = errors.New(err.Error() + ": " + stderr.String())
			}
		}(rank)
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	if outs[1].Len() != 0 {
		t.Errorf("rank 1 printed on stdout: %s", outs[1].String())
	}
	r, err := benchfmt.Parse(outs[0].Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, outs[0].String())
	}
	if r.Instrument != benchfmt.InstrumentTorch || r.NRanks != 2 || len(r.Rows) != 4 || len(r.Devices) != 2 || r.Invalid() != "" {
		t.Fatalf("result %+v", r)
	}
	for i, row := range r.Rows {
		want := int64(4096) << i
		if row.Bytes != want || row.Out.Wrong == nil || *row.Out.Wrong != 0 || row.Out.Iter == nil || len(row.Out.Iter.TimesUS) != 5 {
			t.Errorf("row %d: %+v", i, row)
		}
		if row.Out.TimeUS <= 0 || row.Out.BusBW <= 0 || row.Out.BusBW != row.Out.AlgBW {
			t.Errorf("row %d: two ranks must have busbw = algbw > 0: %+v", i, row.Out)
		}
	}
}

// TestRunTorchLocal goes through Run: the embedded script is written next
// to the launch, started by the prefix (an interpreter with torch), and
// classified from its output.
func TestRunTorchLocal(t *testing.T) {
	python, torch := findPython(t)
	if !torch {
		t.Skip("PyTorch with torch.distributed is not installed for python3")
	}
	spec := Spec{Instrument: benchfmt.InstrumentTorch, Prefix: []string{python}, MinBytes: 1024, MaxBytes: 2048,
		Iters: 3, Warmup: 1, PerIter: true, BenchArgs: []string{"--device", "cpu"},
		BaseEnv: map[string]string{"MASTER_PORT": strconv.Itoa(freePort(t))}, Timeout: time.Minute}
	l, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if l.Outcome != benchfmt.OK || l.Result == nil || len(l.Result.Rows) != 2 || l.Result.Instrument != benchfmt.InstrumentTorch {
		t.Fatalf("outcome %s (%s), result %+v\nstderr %s", l.Outcome, l.Reason, l.Result, l.Stderr)
	}
	if l.Argv[0] != python || filepath.Base(l.Argv[1]) != TorchScriptName || len(l.JSON) != 0 {
		t.Errorf("argv %q, json %d bytes", l.Argv, len(l.JSON))
	}
	if _, err := os.Stat(l.Argv[1]); !os.IsNotExist(err) {
		t.Errorf("the script written for the launch was left behind: %v", err)
	}

	spec.TorchScript = filepath.Join(t.TempDir(), "missing.py")
	spec.Prefix = nil
	if _, err := Run(context.Background(), spec); !errors.Is(err, ErrBenchNotFound) {
		t.Errorf("a missing --torch-script: %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestClassifyTorch: a launch is failed, not stored as measured, when
// the torch script measured another op than the launch asked for, or is a
// copy from before --op (which refuses the flag); a real launch whose
// ranks died in the script's start-up all-gather (NCCL_ALGO=Tree) is
// failed with NCCL's cause as its reason, which a study's trial shows.
func TestClassifyTorch(t *testing.T) {
	testdata := filepath.Join("..", "internal", "benchfmt", "testdata", "torch")
	gathered, err := os.ReadFile(filepath.Join(testdata, "ops_all_gather_4r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	treeFailed, err := os.ReadFile(filepath.Join(testdata, "real_torch_ar4_algo_tree_failed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		l       benchfmt.Launch
		outcome benchfmt.Outcome
		reason  string
	}{
		{"the op asked for", benchfmt.Launch{Op: nccl.AllGather, Stdout: gathered}, benchfmt.OK, ""},
		{"another op", benchfmt.Launch{Op: nccl.AllReduce, Stdout: gathered}, benchfmt.Failed, "measured all_gather, not all_reduce"},
		{"no op recorded is all-reduce", benchfmt.Launch{Stdout: gathered}, benchfmt.Failed, "measured all_gather, not all_reduce"},
		{"a copy from before --op", benchfmt.Launch{Op: nccl.Broadcast, ExitCode: 2,
			Stderr: []byte("usage: nccltune_allreduce.py [-h] [-b MINBYTES]\nnccltune_allreduce.py: error: unrecognized arguments: --op broadcast\n")},
			benchfmt.Failed, "a copy from before it took --op"},
		{"a rank died in the start-up all-gather", benchfmt.Launch{Op: nccl.AllReduce, ExitCode: 1, Stdout: treeFailed},
			benchfmt.Failed, `exit status 1: NCCL reported "invalid usage" under torch.distributed`},
		{"…and NCCL's last error is quoted", benchfmt.Launch{Op: nccl.AllReduce, ExitCode: 1, Stdout: treeFailed},
			benchfmt.Failed, "function AllGather with datatype ncclInt8. NCCL_ALGO was set to Tree."},
	}
	for _, tt := range tests {
		l := tt.l
		classify(&l)
		if l.Outcome != tt.outcome || !strings.Contains(l.Reason, tt.reason) {
			t.Errorf("%s: %s (%s); want %s saying %q", tt.name, l.Outcome, l.Reason, tt.outcome, tt.reason)
		}
	}
}

// TestTorchScriptPythonTests runs scripts/nccltune_allreduce_test.py (the
// script's arithmetic, and its whole sweep for every op on a fake torch in
// threads, including worlds broken on purpose, which its check must catch)
// scripts/nccltune_batch_test.py (--batch on a fake torch whose NCCL
// logs as the real one, and the verdicts on real NCCL logs) and
// scripts/serving_mix_test.py (the capture script's arguments).
func TestTorchScriptPythonTests(t *testing.T) {
	t.Parallel() // python processes of its own; no env, no working directory
	python, _ := findPython(t)
	for _, name := range []string{"nccltune_allreduce_test.py", "nccltune_batch_test.py", "serving_mix_test.py"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // an interpreter each, with its own temporary files
			test := filepath.Join(filepath.Dir(scriptPath(t)), name)
			out, err := exec.Command(python, "-S", "-I", "-B", test).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "\nOK") {
				t.Errorf("%s: %v\n%s", test, err, out)
			}
		})
	}
}

// TestTorchPlanMatchesNCCLTests compares the script's plan (--dry-run on 4
// ranks, 32K–8M) with the real nccl-tests 2.19.6 capture of every op
// (benchfmt/testdata/ops/OP_4r.txt, the same sweep): the same size and
// count columns row by row, the same redop and root, and nccl.Op's bus
// factor; on 3 ranks the rows are nccl.Op.RowShape's.
func TestTorchPlanMatchesNCCLTests(t *testing.T) {
	t.Parallel() // python processes of its own; no env, no working directory
	python, _ := findPython(t)
	type plan struct {
		Collective string  `json:"collective"`
		BusFactor  float64 `json:"bus_factor"`
		Redop      string  `json:"redop"`
		Root       int     `json:"root"`
		Rows       []struct {
			Size, Bytes, Count int64
		} `json:"rows"`
	}
	dryRun := func(op nccl.Op, world int) plan {
		cmd := exec.Command(python, "-S", "-I", scriptPath(t), "--dry-run", "--op", string(op), "-b", "32K", "-e", "8M")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=" + strconv.Itoa(world)}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		var p plan
		if err := json.Unmarshal(out, &p); err != nil || p.Collective != string(op) {
			t.Fatalf("%s: %v\n%s", op, err, out)
		}
		return p
	}
	for _, op := range nccl.Ops {
		p := dryRun(op, 4)
		capture, err := os.ReadFile(filepath.Join("..", "internal", "benchfmt", "testdata", "ops", string(op)+"_4r.txt"))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := benchfmt.Parse(capture)
		if err != nil || len(ref.Rows) != len(p.Rows) {
			t.Fatalf("%s: nccl-tests has %d rows (%v), the script plans %d", op, len(ref.Rows), err, len(p.Rows))
		}
		for i, row := range ref.Rows {
			if got := p.Rows[i]; got.Bytes != row.Bytes || got.Count != row.Count || p.Redop != row.Redop || p.Root != row.Root {
				t.Errorf("%s row %d: script %d bytes, count %d, %s, root %d; nccl-tests %d, %d, %s, root %d",
					op, i, got.Bytes, got.Count, p.Redop, p.Root, row.Bytes, row.Count, row.Redop, row.Root)
			}
		}
		if p.BusFactor != op.BusFactor(4) {
			t.Errorf("%s: bus factor %g, nccl.Op says %g", op, p.BusFactor, op.BusFactor(4))
		}
		for _, row := range dryRun(op, 3).Rows {
			if b, c := op.RowShape(row.Size, 4, 3); row.Bytes != b || row.Count != c {
				t.Errorf("%s on 3 ranks, size %d: script %d bytes count %d, RowShape %d, %d", op, row.Size, row.Bytes, row.Count, b, c)
			}
		}
	}
}

// TestWriteTorchScriptNeverWritesADatabase: the script written next to a
// launch goes through the --out guard (internal/outfile): a name in the
// work directory that leads to a database is refused and the database
// kept byte for byte (was: os.WriteFile wrote the script through the
// link); an old copy of the script is replaced.
func TestWriteTorchScriptNeverWritesADatabase(t *testing.T) {
	// What the guard reads of a bbolt file: its meta page's magic.
	db := make([]byte, 4096)
	copy(db[16:], []byte{0xED, 0xDA, 0x0C, 0xED})
	for _, tc := range []struct {
		name    string
		setup   func(dir string) string // the file that must survive, or ""
		refused bool
	}{
		{"no script yet", func(string) string { return "" }, false},
		{"an old copy", func(dir string) string {
			os.WriteFile(filepath.Join(dir, TorchScriptName), []byte("# old\n"), 0o644)
			return ""
		}, false},
		{"a link to a database", func(dir string) string {
			target := filepath.Join(t.TempDir(), "live.db")
			os.WriteFile(target, db, 0o600)
			os.Symlink(target, filepath.Join(dir, TorchScriptName))
			return target
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			kept := tc.setup(dir)
			path, err := WriteTorchScript(dir)
			if tc.refused {
				got, _ := os.ReadFile(kept)
				if err == nil || !strings.Contains(err.Error(), "bbolt database") || !bytes.Equal(got, db) {
					t.Errorf("err %v; the database is %d bytes, equal %v", err, len(got), bytes.Equal(got, db))
				}
				return
			}
			got, _ := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, torchScript) {
				t.Errorf("err %v, %d bytes written", err, len(got))
			}
		})
	}
}
