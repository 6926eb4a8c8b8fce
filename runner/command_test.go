package runner

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/nccl"
)

func TestBuildCommand(t *testing.T) {
	base := Spec{
		Bench:    "/opt/nccl-tests/build/all_reduce_perf",
		MinBytes: 512 * 1024, MaxBytes: 4 << 20,
		Iters: 100, Warmup: 20,
		BaseEnv: map[string]string{"NCCL_IB_HCA": "=rocep1s0f1,roceP2p1s0f1", "NCCL_SOCKET_IFNAME": "enP7s7"},
		Config:  nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"},
	}
	bench := []string{"/opt/nccl-tests/build/all_reduce_perf", "-b", "524288", "-e", "4194304", "-f", "2", "-n", "100", "-w", "20"}
	env := []string{"NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1", "NCCL_MAX_NCHANNELS=8", "NCCL_PROTO=^LL128", "NCCL_SOCKET_IFNAME=enP7s7"}

	tests := []struct {
		name   string
		edit   func(*Spec)
		flavor string
		json   string
		want   []string
	}{
		{"local", func(s *Spec) {}, "", "", bench},
		{"local with per-iteration JSON", func(s *Spec) {}, "", "/tmp/x.json",
			append(append([]string{}, bench...), "-I", "1", "-J", "/tmp/x.json")},
		{"openmpi", func(s *Spec) {
			s.Launcher, s.NP, s.Hosts = "mpirun", 4, []string{"spark5:1", "spark6:1", "spark7:1", "spark8:1"}
			s.MPIArgs = []string{"--mca", "oob_tcp_if_include", "enP7s7"}
		}, OpenMPI, "", append([]string{"mpirun", "-np", "4", "-H", "spark5:1,spark6:1,spark7:1,spark8:1",
			"--mca", "oob_tcp_if_include", "enP7s7",
			"-x", env[0], "-x", env[1], "-x", env[2], "-x", env[3]}, bench...)},
		{"mpich", func(s *Spec) {
			s.Launcher, s.NP, s.Hosts, s.MPIRun = "mpirun", 2, []string{"a", "b"}, "mpiexec"
		}, MPICH, "", append([]string{"mpiexec", "-np", "2", "-hosts", "a,b",
			"-genv", "NCCL_IB_HCA", "=rocep1s0f1,roceP2p1s0f1", "-genv", "NCCL_MAX_NCHANNELS", "8",
			"-genv", "NCCL_PROTO", "^LL128", "-genv", "NCCL_SOCKET_IFNAME", "enP7s7"}, bench...)},
		{"srun exports comma values by name", func(s *Spec) {
			s.Launcher, s.NP, s.Hosts = "srun", 2, []string{"n1", "n2"}
			s.MPIArgs = []string{"--mpi=pmix"}
		}, "", "", append([]string{"srun", "-n", "2", "-w", "n1,n2",
			"--export=ALL,NCCL_IB_HCA,NCCL_MAX_NCHANNELS=8,NCCL_PROTO=^LL128,NCCL_SOCKET_IFNAME=enP7s7",
			"--mpi=pmix"}, bench...)},
		{"prefix wrapper and extra bench args", func(s *Spec) {
			s.Launcher, s.NP = "mpirun", 2
			s.Prefix = []string{"./scripts/fakehost.sh"}
			s.BenchArgs = []string{"-a", "3"}
		}, OpenMPI, "", append(append([]string{"mpirun", "-np", "2",
			"-x", env[0], "-x", env[1], "-x", env[2], "-x", env[3], "./scripts/fakehost.sh"}, bench...), "-a", "3")},
		{"simulated fabric runs locally", func(s *Spec) {
			s.Launcher, s.NP = "mpirun", 4
			s.Sim = &SimSpec{Executable: "/bin/nccltune", Profile: "spark4", Noise: 1, Seed: 7, Launch: 3}
		}, OpenMPI, "", append([]string{"/bin/nccltune", "__nccltune_sim", "--profile", "spark4", "--noise", "1",
			"--seed", "7", "--launch", "3", "--ranks", "4"}, bench[1:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			tt.edit(&s)
			cmd, err := s.BuildCommand(tt.flavor, tt.json)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cmd.Argv, tt.want) {
				t.Errorf("argv\n got %q\nwant %q", cmd.Argv, tt.want)
			}
			if !reflect.DeepEqual(cmd.Env, env) {
				t.Errorf("env\n got %q\nwant %q", cmd.Env, env)
			}
		})
	}
}

func TestDebugEnv(t *testing.T) {
	s := Spec{Debug: true}
	got := s.EnvVars()
	want := []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=" + DefaultDebugSubsys}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want string // substring of the error; "" = valid
	}{
		{"empty is local defaults", Spec{}, ""},
		{"bad launcher", Spec{Launcher: "ssh"}, "unknown launcher"},
		{"bad flavour", Spec{Launcher: "mpirun", MPIFlavor: "lam"}, "unknown MPI flavour"},
		{"hosts need a launcher", Spec{Hosts: []string{"a"}}, "--hosts needs"},
		{"host with space", Spec{Launcher: "mpirun", Hosts: []string{"a b"}}, "not a host name"},
		{"host that reads as an option", Spec{Launcher: "mpirun", Hosts: []string{"-x", "b"}}, "not a host name"},
		{"host with a NUL", Spec{Launcher: "srun", Hosts: []string{"a\x00b"}}, "not a host name"},
		{"searched and fixed", Spec{BaseEnv: map[string]string{"NCCL_PROTO": "LL"}, Config: nccl.Config{"NCCL_PROTO": "Simple"}}, "both in the base env"},
		{"bad knob value", Spec{Config: nccl.Config{"NCCL_MAX_NCHANNELS": "65"}}, "1 to 64"},
		{"min above max", Spec{Config: nccl.Config{"NCCL_MIN_NCHANNELS": "16", "NCCL_MAX_NCHANNELS": "8"}}, "larger than"},
		{"sweep out of order", Spec{MinBytes: 4 << 20, MaxBytes: 1 << 20}, "out of order"},
		{"negative timeout", Spec{Timeout: -time.Second}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFlavorFromVersion(t *testing.T) {
	tests := []struct{ out, want string }{
		{"mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/", OpenMPI},
		{"mpirun (OpenRTE) 3.1.3", OpenMPI},
		{"HYDRA build details:\n    Version:                                 4.1.2", MPICH},
		{"Intel(R) MPI Library for Linux* OS, Version 2021.10", MPICH},
		{"MVAPICH2 Version: 2.3.7", MPICH},
		{"something else", ""},
	}
	for _, tt := range tests {
		if got := FlavorFromVersion(tt.out); got != tt.want {
			t.Errorf("FlavorFromVersion(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}
