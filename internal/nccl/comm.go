package nccl

import "sort"

// A batch launch measures several configs in one process, each on its own
// communicator (docs/PERFORMANCE.md, "several configs in one launch").
// NCCL reads NCCL_PROTO and NCCL_ALGO at every communicator's init
// (ncclGetEnv in ncclTopoTuneModel), and caps a communicator's channels by
// ncclConfig_t maxCTAs/minCTAs exactly as NCCL_MAX_NCHANNELS/
// NCCL_MIN_NCHANNELS do (connect.cc); every other knob is an NCCL_PARAM,
// read once per process, so a config that sets one cannot share a process
// with another config.

// CommSettings is a config as one communicator of a batch launch takes it:
// its protocol and algorithm in the environment around that communicator's
// init, its channel limits in ncclConfig_t. Its JSON is the batch plan's
// config entry (runner writes it, the torch instrument reads it).
type CommSettings struct {
	Env map[string]string `json:"env"`
	// MaxCTAs and MinCTAs are ncclConfig_t's maxCTAs and minCTAs, 0 when
	// the config sets no such limit.
	MaxCTAs int `json:"max_ctas,omitempty"`
	MinCTAs int `json:"min_ctas,omitempty"`
}

// CommSettingsOf returns c as per-communicator settings. ok is false when
// c sets a knob NCCL reads once per process; perProcess names them
// (sorted), for the reason the config is launched on its own.
func CommSettingsOf(c Config) (s CommSettings, perProcess []string, ok bool) {
	s.Env = map[string]string{}
	for name, v := range c {
		switch {
		case !IsPlanKnob(name):
			perProcess = append(perProcess, name)
		case name == "NCCL_PROTO" || name == "NCCL_ALGO":
			s.Env[name] = v
		}
	}
	if len(perProcess) > 0 {
		sort.Strings(perProcess)
		return CommSettings{}, perProcess, false
	}
	for _, p := range CapPairs {
		// Both names of a limit may be set: the binding one applies.
		name := p.Channels
		if kept, _, both := p.Binding(c); both {
			name = kept
		} else if c.Int(name, 0) <= 0 {
			name = p.CTAs
		}
		limit := max(c.Int(name, 0), 0)
		if p.Max {
			s.MaxCTAs = limit
		} else {
			s.MinCTAs = limit
		}
	}
	return s, nil, true
}
