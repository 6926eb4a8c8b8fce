// Package sim is the simulated fabric: a cost model of NCCL all-reduce per
// profile (spark2, spark4, h200-loopback, flat, or a JSON file), with noise
// and faults, run as a child process that takes all_reduce_perf's flags,
// reads NCCL_* from its environment and prints exactly what all_reduce_perf
// prints. Every simulated run says it is simulated, in its output header.
package sim
