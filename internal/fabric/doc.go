// Package fabric owns the diagnosis of a fabric from a launch's NCCL facts
// and results, and the gate's verdict.
//
// Diagnose reads what one launch (or a saved log) shows — NCCL's version,
// ranks and nodes, the network transport, the NICs, GPUDirect RDMA, the
// channels and rings, NCCL's per-size choices, the measured bus bandwidth,
// and how the launch ended — and returns a Report whose Warnings say when a
// measurement cannot be trusted: each names its evidence (the log line or
// number), the cause, and the fix the field found (../../shared/seeds). The
// traps it knows: NCCL falling back to TCP sockets where RDMA was expected,
// GPUDirect RDMA off, one NIC of two carrying the traffic, MPI wiring up
// over a shared docker0 subnet, a launch that makes no progress (and which
// step hung), wrong results, a throttled link, and an NCCL too old for the
// GPU.
//
// Judge decides a gate: whether each size's bus bandwidth holds its
// threshold, on the median over launches or on its lower confidence bound.
//
// The package does no I/O and never imports the CLI: warnings are data, and
// the caller decides how to show them.
package fabric
