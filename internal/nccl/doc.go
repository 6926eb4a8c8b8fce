// Package nccl holds the vocabulary every other package shares: message
// sizes and bands, the collectives (Op) and a workload's parts, the NCCL
// knobs nccltune searches with their values and defaults, Config, NCCL's
// equivalences (equiv.go), and NCCL's per-size plan with the rules that
// predict it (plan.go). It does no I/O.
package nccl
