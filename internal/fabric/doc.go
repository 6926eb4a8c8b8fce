// Package fabric owns the diagnosis of a fabric from a launch's NCCL facts
// and results, and the gate's verdict.
//
// Diagnose reads what one launch (or a saved log) shows and returns a
// Report whose Warnings say when a measurement cannot be trusted, each
// with its evidence, cause and the fix the field found
// (../../shared/seeds). Judge decides a gate: whether each size's bus
// bandwidth holds its threshold, on the median over launches or on its
// lower confidence bound.
//
// The package does no I/O: warnings are data, and the caller shows them.
package fabric
