// Package nccl holds the vocabulary every other package shares: message
// sizes and bands as nccl-tests writes them, the collectives (Op) and a
// workload's parts, the NCCL environment knobs nccltune knows how to
// search, their valid values and NCCL's defaults, and Config, a set of
// knob values. NCCL's equivalences live here once (equiv.go): the cap
// pairs and which of them binds, NCCL's default values, and the spellings
// NCCL reads alike, used by the search's merging, the minimal
// recommendation and every export; with them NCCL's per-size plan and the
// rules that predict it (plan.go). It does no I/O.
package nccl
