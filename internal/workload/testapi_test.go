package workload

import (
	"github.com/nccltune/nccltune/internal/nccl"
)

// What only tests ask of a proposal.

// Workload is the proposal as the search reads it: its calls, read by
// nccl.ParseCall and merged by nccl.MergeCalls, as --calls reads them.
// propose has read them so already: they read.
func (p Proposal) Workload() nccl.Workload {
	w, _ := readCalls(p.Calls)
	return w
}
