// Package runner owns one launch of a benchmark for one config: building
// the local, mpirun (Open MPI, MPICH) or srun command line, passing the
// environment, enforcing the per-launch timeout by killing the whole
// process group, keeping the output and classifying the outcome. It
// checks what a launch needs before anything runs (Preflight) and ships
// the torch instrument's script. What the benchmark prints is read by
// package benchfmt, which also holds the launch record (benchfmt.Launch)
// that Run returns. It knows nothing of studies or statistics.
package runner
