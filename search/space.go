package search

import (
	"fmt"
	"iter"
	"maps"
	"math/rand"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Dimension is one searched knob and the values tried for it, in a stable
// order ("" = unset, NCCL's own choice). The order is part of a study: the
// sampler sees values as indices, so a resumed study must list them alike.
type Dimension struct {
	Knob    string   `json:"knob"`
	Choices []string `json:"choices"`
}

// Space is the set of configs a study may propose.
type Space []Dimension

// DefaultSpace is NCCL_PROTO, NCCL_ALGO, NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS
// and NCCL_CROSS_NIC with their default choice lists.
func DefaultSpace() Space {
	var s Space
	for _, k := range nccl.DefaultSpaceKnobs() {
		s = append(s, Dimension{Knob: k.Name, Choices: append([]string(nil), k.Choices...)})
	}
	return s
}

// ParseSpace builds a space from --space items: a knob name or a knob with
// a list ('|' separates values that hold commas), added to the default
// space unless replace is true.
func ParseSpace(items []string, replace bool) (Space, error) {
	var s Space
	if !replace {
		s = DefaultSpace()
	}
	for _, it := range items {
		name, list, hasList := strings.Cut(it, "=")
		knob, err := nccl.LookupKnob(name)
		if err != nil {
			return nil, fmt.Errorf("--space %q: %w", it, err)
		}
		choices := append([]string(nil), knob.Choices...)
		if hasList {
			sep := ","
			if strings.Contains(list, "|") {
				sep = "|"
			}
			choices = nil
			for _, v := range strings.Split(list, sep) {
				v = strings.TrimSpace(v)
				if v == "unset" || v == "default" {
					v = ""
				}
				if err := knob.Validate(v); err != nil {
					return nil, fmt.Errorf("--space %q: %w", it, err)
				}
				if !slices.Contains(choices, v) {
					choices = append(choices, v)
				}
			}
			if len(choices) == 0 {
				return nil, fmt.Errorf("--space %q lists no values", it)
			}
		}
		s = s.with(Dimension{Knob: knob.Name, Choices: choices})
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("the search space is empty; name knobs with --space (e.g. --space NCCL_PROTO)")
	}
	return s, nil
}

// with returns s with d added, or replacing the dimension of the same knob.
func (s Space) with(d Dimension) Space {
	out := append(Space(nil), s...)
	if i := out.dim(d.Knob); i >= 0 {
		out[i] = d
		return out
	}
	return append(out, d)
}

// dim is the index of knob's dimension, -1 when s does not search it.
func (s Space) dim(knob string) int {
	return slices.IndexFunc(s, func(d Dimension) bool { return d.Knob == knob })
}

// Size is the number of configs in the space (before combination rules).
func (s Space) Size() int {
	n := 1
	for _, d := range s {
		n *= len(d.Choices)
	}
	return n
}

// Config turns one choice index per dimension into a config.
func (s Space) Config(idx []int) nccl.Config {
	c := nccl.Config{}
	for i, d := range s {
		if v := d.Choices[idx[i]]; v != "" {
			c[d.Knob] = v
		}
	}
	return c
}

// Index finds the choice indices of cfg, false if cfg lies outside s.
func (s Space) Index(cfg nccl.Config) ([]int, bool) {
	idx := make([]int, len(s))
	for i, d := range s {
		if idx[i] = slices.Index(d.Choices, cfg[d.Knob]); idx[i] < 0 {
			return nil, false
		}
	}
	for k := range cfg {
		if s.dim(k) < 0 {
			return nil, false
		}
	}
	return idx, true
}

// WithBaseline is the space with every value of baseline among its
// choices, so local steps can start from it.
func (s Space) WithBaseline(baseline nccl.Config) Space {
	out := make(Space, 0, len(s))
	for _, d := range s {
		out = append(out, Dimension{Knob: d.Knob, Choices: append([]string(nil), d.Choices...)})
	}
	for _, k := range baseline.Names() {
		v := baseline[k]
		switch i := out.dim(k); {
		case i < 0:
			out = append(out, Dimension{Knob: k, Choices: []string{"", v}})
		case !slices.Contains(out[i].Choices, v):
			out[i].Choices = append(out[i].Choices, v)
		}
	}
	return out
}

// CheckBase rejects a base env that fixes a searched knob, or turns NVLink
// SHARP off while NVLS is searched.
func (s Space) CheckBase(base map[string]string) error {
	for _, d := range s {
		if _, fixed := base[d.Knob]; fixed {
			return fmt.Errorf("%s is fixed by --base-env and also searched; a knob is either fixed or searched — drop one", d.Knob)
		}
	}
	if v, ok := base["NCCL_NVLS_ENABLE"]; !ok || strings.TrimSpace(v) != "0" {
		return nil
	}
	for _, d := range s {
		if d.Knob != "NCCL_ALGO" {
			continue
		}
		for _, v := range d.Choices {
			if namesNVLS(v) {
				return fmt.Errorf("NCCL_ALGO=%s is in the search space but --base-env NCCL_NVLS_ENABLE=0 turns NVLink SHARP off; "+
					"drop NVLS and NVLSTree from --space NCCL_ALGO (the default space never searches them)", v)
			}
		}
	}
	return nil
}

// namesNVLS reports whether an NCCL_ALGO value asks for NVLS by name.
func namesNVLS(v string) bool {
	return slices.ContainsFunc(nccl.Named(v), func(n string) bool { return n == "nvls" || n == "nvlstree" })
}

// Random draws a config uniformly from the space with rng.
func (s Space) Random(rng *rand.Rand) nccl.Config { return s.Config(s.draw(rng)) }

// draw is Random's point of the space, as indices, from the same draws.
func (s Space) draw(rng *rand.Rand) []int {
	idx := make([]int, len(s))
	for i, d := range s {
		idx[i] = rng.Intn(len(d.Choices))
	}
	return idx
}

// All enumerates every config of the space in index order, for grid search.
func (s Space) All() []nccl.Config { return slices.Collect(s.Each()) }

// Each yields every config of the space in index order (the last knob
// varies fastest).
func (s Space) Each() iter.Seq[nccl.Config] {
	return func(yield func(nccl.Config) bool) {
		idx := make([]int, len(s))
		for {
			if !yield(s.Config(idx)) {
				return
			}
			i := len(idx) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(s[i].Choices) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				return
			}
		}
	}
}

// spaceCheckLimit bounds how many configs CheckHasCandidates enumerates.
const spaceCheckLimit = 200_000

// CheckHasCandidates refuses a space in which no config other than
// NCCL's defaults is valid under the base env.
func (s Space) CheckHasCandidates(base map[string]string) error {
	if len(s) == 0 {
		return nil
	}
	var firstErr error
	valid := func(cfg nccl.Config) bool {
		if len(cfg) == 0 {
			return false
		}
		all := nccl.KnobsOf(base)
		maps.Copy(all, cfg)
		err := all.Validate()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return err == nil
	}
	if s.Size() <= spaceCheckLimit {
		for cfg := range s.Each() {
			if valid(cfg) {
				return nil
			}
		}
	} else {
		rng := rand.New(rand.NewSource(1))
		for range spaceCheckLimit {
			if valid(s.Random(rng)) {
				return nil
			}
		}
	}
	why := "every config in it is NCCL's defaults"
	if firstErr != nil {
		why = fmt.Sprintf("no config in it besides NCCL's defaults is valid (%v)", firstErr)
	}
	return fmt.Errorf("the search space has nothing to try: %s; widen --space or drop --space-only", why)
}
