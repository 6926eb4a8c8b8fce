// Package runner owns one launch of a benchmark for one config: building
// the local, mpirun (Open MPI, MPICH) or srun command line, passing the
// environment, enforcing the per-launch timeout by killing the whole
// process group, keeping the output, parsing what nccl-tests prints (text
// tables, JSON version 3, NCCL_DEBUG log lines) and classifying the
// outcome. It knows nothing of studies or statistics.
package runner
