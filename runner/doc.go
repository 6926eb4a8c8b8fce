// Package runner owns one launch of a benchmark for one config: the local,
// mpirun or srun command line, the environment, the per-launch timeout
// (killing the whole process group), the output and the outcome. Preflight
// checks what a launch needs first. Output is read by package benchfmt.
package runner
