package nccl

import "sort"

// A batch launch measures several configs in one process, each on its own
// communicator: NCCL reads NCCL_PROTO and NCCL_ALGO at every
// communicator's init and takes channel limits from ncclConfig_t; every
// other knob is read once per process.

// CommSettings is a config as one communicator of a batch launch takes it
// (the batch plan's config entry): protocol and algorithm in the env
// around its init, channel limits as ncclConfig_t's (0: none).
type CommSettings struct {
	Env     map[string]string `json:"env"`
	MaxCTAs int               `json:"max_ctas,omitempty"`
	MinCTAs int               `json:"min_ctas,omitempty"`
}

// CommSettingsOf returns c as per-communicator settings; ok is false when
// c sets knobs NCCL reads once per process (perProcess, sorted).
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
