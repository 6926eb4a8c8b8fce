package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// TestBenchPath: every op's binary is found beside any other of one
// nccl-tests build, in its build directory, or on PATH.
func TestBenchPath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		bench string
		op    nccl.Op
		want  string
	}{
		{"", "", "all_reduce_perf"},
		{"", nccl.AllGather, "all_gather_perf"},
		{"", nccl.AllToAll, "alltoall_perf"},
		{"/opt/nt/build/all_reduce_perf", nccl.AllReduce, "/opt/nt/build/all_reduce_perf"},
		{"/opt/nt/build/all_reduce_perf", nccl.ReduceScatter, "/opt/nt/build/reduce_scatter_perf"},
		{"/opt/nt/build/sendrecv_perf", nccl.Broadcast, "/opt/nt/build/broadcast_perf"},
		{"/opt/nt/build/all_reduce_perf_mpi", nccl.SendRecv, "/opt/nt/build/sendrecv_perf_mpi"},
		{"all_reduce_perf", nccl.Reduce, "reduce_perf"},
		{"/opt/nt/build/", nccl.AllGather, "/opt/nt/build/all_gather_perf"},
		{dir, nccl.AllGather, filepath.Join(dir, "all_gather_perf")},
		{"./my-bench.sh", nccl.AllGather, "./my-bench.sh"}, // the user's own program runs as given
	} {
		if got := (Spec{Bench: tc.bench, Op: tc.op}).BenchPath(); got != tc.want {
			t.Errorf("Spec{Bench: %q, Op: %q}.BenchPath() = %q, want %q", tc.bench, tc.op, got, tc.want)
		}
	}
}

// TestMissingOpBenchRefused: a build without the op's binary is refused
// before anything runs, naming the path looked for and what to do.
func TestMissingOpBenchRefused(t *testing.T) {
	dir := t.TempDir()
	ar := filepath.Join(dir, "all_reduce_perf")
	if err := os.WriteFile(ar, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Preflight(Spec{Bench: ar}); err != nil {
		t.Fatalf("all_reduce_perf is there: %v", err)
	}
	for _, bench := range []string{ar, dir} {
		err := Preflight(Spec{Bench: bench, Op: nccl.AllGather})
		want := filepath.Join(dir, "all_gather_perf")
		if !errors.Is(err, ErrBenchNotFound) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--bench") {
			t.Errorf("--bench %s --op all_gather: %v, want ErrBenchNotFound naming %s and --bench", bench, err, want)
		}
	}
	t.Setenv("PATH", dir)
	if err := Preflight(Spec{Op: nccl.Broadcast}); !errors.Is(err, ErrBenchNotFound) || !strings.Contains(err.Error(), "broadcast_perf") {
		t.Errorf("no broadcast_perf on PATH: %v", err)
	}
}

// TestSimArgvNamesOp: the simulator is told which op to be; all-reduce
// keeps the argv it always had.
func TestSimArgvNamesOp(t *testing.T) {
	sim := &SimSpec{Executable: "/bin/nccltune", Profile: "spark4", Noise: 1}
	for _, tc := range []struct {
		op   nccl.Op
		want string
	}{
		{"", ""},
		{nccl.AllReduce, ""},
		{nccl.AllGather, "--collective all_gather"},
		{nccl.SendRecv, "--collective sendrecv"},
	} {
		argv := strings.Join(Spec{Sim: sim, Op: tc.op}.BenchArgv(""), " ")
		if tc.want == "" && strings.Contains(argv, "--collective") || !strings.Contains(argv, tc.want) {
			t.Errorf("op %q: argv %q, want %q", tc.op, argv, tc.want)
		}
	}
	if err := (Spec{Op: "allgathr"}).Validate(); err == nil || !strings.Contains(err.Error(), "unknown collective") {
		t.Errorf("bad op validated: %v", err)
	}
}

// TestTorchMeasuresEveryOp: the torch script is given the spec's op (all
// but all-reduce, its default, as --op), so no op's launch times another.
func TestTorchMeasuresEveryOp(t *testing.T) {
	for _, op := range nccl.Ops {
		s := Spec{Instrument: "torch", Op: op, TorchScript: "/opt/x.py"}
		if err := s.Validate(); err != nil {
			t.Errorf("torch %s: %v", op, err)
		}
		argv := strings.Join(s.BenchArgv(""), " ")
		if has := strings.Contains(argv, "--op "+string(op)); has != (op != nccl.AllReduce) {
			t.Errorf("torch %s: argv %q", op, argv)
		}
	}
}
