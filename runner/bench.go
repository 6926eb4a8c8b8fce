package runner

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// BenchPath is the nccl-tests binary that measures the spec's op. One
// nccl-tests build holds every op's binary side by side, so --bench may
// name any of them, or the build directory, and the op's binary is the
// sibling dir/<op>_perf (with the _mpi suffix when the given binary has
// it: an MPI build names them all_reduce_perf_mpi, …). With no --bench it
// is <op>_perf on PATH. A --bench that is neither a *_perf binary nor a
// directory is the user's own program and is run as given.
func (s Spec) BenchPath() string {
	return ResolveBench(s.Bench, s.Op)
}

// ResolveBench is BenchPath for a --bench value and an op.
func ResolveBench(bench string, op nccl.Op) string {
	want := op.Benchmark()
	if bench == "" {
		return want
	}
	dir, base := filepath.Split(bench)
	if base == "" || isDir(bench) {
		return filepath.Join(bench, want)
	}
	name, mpi := strings.CutSuffix(base, "_mpi")
	if !strings.HasSuffix(name, "_perf") {
		return bench
	}
	if mpi {
		want += "_mpi"
	}
	return dir + want
}

// isDir says whether path is a directory on this machine (a --bench given
// for remote ranks is read by its name alone).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
