package sim

import (
	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// SimulatedHeaderPrefix starts the line every simulated output carries
// right after nccl-tests' version line: the header benchfmt's parser reads
// to label a result simulated. Only the tests name it here; the simulator
// writes benchfmt's own.
const SimulatedHeaderPrefix = benchfmt.SimulatedHeaderPrefix

// resolve is what NCCL would set up for an all-reduce under cfg, as the
// tests inspect it.
func (p *Profile) resolve(cfg nccl.Config) *ncclState { return p.resolveOp(cfg, nccl.AllReduce, false) }
