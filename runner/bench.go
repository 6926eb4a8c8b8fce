package runner

import (
	"os"
	"path/filepath"
	"strings"
)

// BenchPath is the nccl-tests binary that measures the spec's op: the
// sibling <op>_perf (_mpi kept) of a --bench binary or in its directory,
// <op>_perf on PATH without one; another program is run as given.
func (s Spec) BenchPath() string {
	bench, want := s.Bench, s.Op.Benchmark()
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
