package search

import "github.com/nccltune/nccltune/internal/nccl"

// What only tests ask of a result.

// Env is the recommended config, empty when the answer is NCCL's defaults.
func (r *Result) Env() nccl.Config {
	if r.Recommend && r.Winner != nil {
		return r.Winner.Config.Clone()
	}
	return nccl.Config{}
}
