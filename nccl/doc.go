// Package nccl holds the vocabulary every other package shares: message
// sizes and bands as nccl-tests writes them, the NCCL environment knobs
// nccltune knows how to search, their valid values, and Config, a set of
// knob values. It does no I/O and decides nothing.
package nccl
