package nccl

// What only tests ask of a plan and a band.

// Resolve predicts the plan NCCL runs under cfg (see Explain).
func (n Native) Resolve(cfg Config) (Plan, bool) {
	r := n.Explain(cfg)
	return r.Plan, r.Certain
}

// Contains reports whether size lies inside the band.
func (b Band) Contains(size int64) bool { return size >= b.Min && size <= b.Max }
