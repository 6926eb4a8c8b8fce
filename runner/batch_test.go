package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

func testPlan() *BatchPlan {
	return &BatchPlan{
		Version: 1,
		Configs: []BatchConfig{
			{Name: "defaults", CommSettings: nccl.CommSettings{Env: map[string]string{}}},
			{Name: "ll", CommSettings: nccl.CommSettings{Env: map[string]string{"NCCL_PROTO": "LL"}}},
			{Name: "one_channel", CommSettings: nccl.CommSettings{Env: map[string]string{}, MaxCTAs: 1}},
		},
		CreationOrder: []int{2, 0, 1},
		Ops:           []BatchOp{{Op: nccl.AllReduce, Sizes: []int64{256, 512}}, {Op: nccl.AllGather, Sizes: []int64{128}}},
		Rounds:        3, WarmupIters: 1, Iters: 3, RoundSeed: 17, MaxSeconds: 30,
	}
}

// TestBatchArgv: a batch goes to the instrument as --batch PLAN, behind the
// same prefix, wrapper and launcher as any launch, with the user's own
// arguments after it; the plan replaces the sweep's flags and --op.
func TestBatchArgv(t *testing.T) {
	base := Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: "/opt/nccltune_allreduce.py", Batch: testPlan(),
		Op: nccl.AllGather, MinBytes: 1024, MaxBytes: 4096, Iters: 5, BaseEnv: map[string]string{"NCCL_SOCKET_IFNAME": "lo"}}
	tests := []struct {
		name   string
		edit   func(*Spec)
		flavor string
		want   []string
	}{
		{"local", func(*Spec) {}, "", []string{"python3", "/opt/nccltune_allreduce.py", "--batch", "PLAN.json"}},
		{"mpirun with the loopback wrapper and --device", func(s *Spec) {
			s.Launcher, s.NP, s.Prefix, s.BenchArgs = "mpirun", 4, []string{"./scripts/fakehost.sh"}, []string{"--device", "cuda:0"}
		}, OpenMPI, []string{"mpirun", "-np", "4", "-x", "NCCL_SOCKET_IFNAME=lo", "./scripts/fakehost.sh", "python3",
			"/opt/nccltune_allreduce.py", "--batch", "PLAN.json", "--device", "cuda:0"}},
		{"docker exec into torchrun, the plan in a mounted --work-dir", func(s *Spec) {
			s.Prefix, s.WorkDir = []string{"docker", "exec", "vllm", "torchrun", "--nproc-per-node", "2"}, "/shared/run"
		}, "", []string{"docker", "exec", "-e", "NCCL_SOCKET_IFNAME=lo", "vllm", "torchrun", "--nproc-per-node", "2",
			"/opt/nccltune_allreduce.py", "--batch", "PLAN.json"}},
		{"the simulated fabric takes the same flag", func(s *Spec) {
			s.Instrument, s.TorchScript, s.Op = "", "", ""
			s.Sim = &SimSpec{Executable: "/bin/nccltune", Profile: "spark4", Noise: 1, Seed: 3}
		}, "", []string{"/bin/nccltune", simChildArg, "--profile", "spark4", "--noise", "1", "--seed", "3", "--launch", "0",
			"--batch", "PLAN.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			tt.edit(&s)
			cmd, err := s.BuildCommand(tt.flavor, "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cmd.Argv, tt.want) {
				t.Errorf("argv\n got %q\nwant %q", cmd.Argv, tt.want)
			}
		})
	}
}

// TestBatchRefused: what cannot be a batch is refused before anything runs,
// the error naming the cause.
func TestBatchRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"nccl-tests has no batch mode", func(s *Spec) { s.Instrument, s.TorchScript = "", "" }, "measure a batch with --instrument torch"},
		{"a config beside the plan", func(s *Spec) { s.Config = nccl.Config{"NCCL_PROTO": "LL"} }, "Config must be empty"},
		{"a knob read once per process", func(s *Spec) { s.Batch.Configs[1].Env["NCCL_CROSS_NIC"] = "0" }, `"ll" sets NCCL_CROSS_NIC, which NCCL reads once per process`},
		{"a channel cap in the env", func(s *Spec) { s.Batch.Configs[0].Env["NCCL_MAX_NCHANNELS"] = "1" }, "it goes in max_ctas/min_ctas"},
		{"two configs of one name", func(s *Spec) { s.Batch.Configs[2].Name = "ll" }, `"ll": every config needs a name of its own`},
		{"a creation order missing one", func(s *Spec) { s.Batch.CreationOrder = []int{0, 1, 1} }, "creation order [0 1 1]"},
		{"an unknown op", func(s *Spec) { s.Batch.Ops[0].Op = "allgather" }, `batch op "allgather"`},
		{"no rounds", func(s *Spec) { s.Batch.Rounds = 0 }, "rounds and iters must be at least 1"},
		{"another plan version", func(s *Spec) { s.Batch.Version = 2 }, "reads version 1"},
		// The plan goes where the torch script would, a temporary directory
		// of this machine without --work-dir, also beside --torch-script.
		{"srun without --work-dir", func(s *Spec) { s.Launcher = "srun" }, "ranks on other hosts cannot see the batch plan nccltune writes to a temporary directory on this machine: pass --work-dir DIR"},
		{"mpirun to other hosts without --work-dir", func(s *Spec) { s.Launcher, s.Hosts = "mpirun", []string{"a", "b"} }, "or --batch 0 to launch every config on its own"},
		{"a container without --work-dir", func(s *Spec) { s.Prefix = []string{"docker", "exec", "vllm"} }, "the container that --prefix enters cannot see the batch plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: "/opt/x.py", Batch: testPlan()}
			tt.edit(&s)
			_, err := s.BuildCommand("", "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestRunBatch runs the torch instrument's --batch end to end through Run on
// one rank of the fake torch of scripts/nccltune_batch_test.py (its NCCL
// logs as the real one does): the plan is written into the work dir, read
// by the script, the output parsed into the Launch's Batch and classified,
// and the plan removed afterwards.
func TestRunBatch(t *testing.T) {
	t.Parallel() // Python processes in directories of their own; no env
	findPython(t)
	fake := filepath.Join(filepath.Dir(scriptPath(t)), "nccltune_batch_test.py")
	oldCopy := filepath.Join(t.TempDir(), "old_copy.py")
	os.WriteFile(oldCopy, []byte("import sys\nsys.stderr.write('nccltune_allreduce.py: error: unrecognized arguments: --batch x\\n')\nsys.exit(2)\n"), 0o644)
	tests := []struct {
		name    string
		edit    func(*Spec)
		outcome benchfmt.Outcome
		reason  string
		usable  []string // configs whose rows count
	}{
		{"every config took effect", func(*Spec) {}, benchfmt.OK, "", []string{"defaults", "ll", "one_channel"}},
		{"NCCL refuses one config: the others go on", func(s *Spec) {
			s.Batch.Configs[0].Env["NCCL_ALGO"] = "Tree" // no tree all-gather
		}, benchfmt.OK, "", []string{"ll", "one_channel"}},
		{"no config survives", func(s *Spec) {
			s.Batch.Ops = s.Batch.Ops[1:]
			for i := range s.Batch.Configs {
				s.Batch.Configs[i].Env["NCCL_ALGO"] = "Tree"
			}
		}, benchfmt.Failed, "no config of the batch was measured (one_channel: its communicator failed: rank 0: RuntimeError: ncclInvalidUsage", nil},
		{"a copy of the script from before --batch", func(s *Spec) { s.TorchScript = oldCopy },
			benchfmt.Failed, "is a copy from before its batch mode", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			s := Spec{Instrument: benchfmt.InstrumentTorch, TorchScript: fake, WorkDir: work, Batch: testPlan(),
				BenchArgs: []string{"--as-fake-torch", "--device", "cpu", "--backend", "nccl", "--log-dir", t.TempDir()}}
			tt.edit(&s)
			l, err := Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if l.Outcome != tt.outcome || !strings.Contains(l.Reason, tt.reason) {
				t.Fatalf("%s (%s), want %s saying %q\nstdout %s\nstderr %s", l.Outcome, l.Reason, tt.outcome, tt.reason, l.Stdout, l.Stderr)
			}
			if i := indexOf(l.Argv, "--batch"); i < 0 || filepath.Dir(l.Argv[i+1]) != work {
				t.Errorf("argv %q: want --batch and a plan in the work dir", l.Argv)
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Errorf("the work dir keeps %v", left)
			}
			var usable []string
			if l.BatchOutput != nil {
				if !reflect.DeepEqual(l.BatchOutput.CreationOrder, s.Batch.CreationOrder) || l.BatchOutput.Rounds != 3 && tt.outcome == benchfmt.OK {
					t.Errorf("creation order %v, %d rounds", l.BatchOutput.CreationOrder, l.BatchOutput.Rounds)
				}
				for _, c := range l.BatchOutput.Configs {
					if c.Excluded() == "" {
						usable = append(usable, c.Name)
						if rows := len(c.Ops[0].Rows); rows != 3*len(s.Batch.Ops[0].Sizes) {
							t.Errorf("%s: %d rows of %s", c.Name, rows, c.Ops[0].Collective)
						}
					}
				}
			}
			if !reflect.DeepEqual(usable, tt.usable) {
				t.Errorf("usable configs %q, want %q", usable, tt.usable)
			}
		})
	}
}

func indexOf(s []string, w string) int {
	for i, x := range s {
		if x == w {
			return i
		}
	}
	return -1
}
