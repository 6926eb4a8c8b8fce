package search

// Wrong results: a config whose launch gave wrong results names, in its
// NCCL_PROTO or NCCL_ALGO list, what NCCL ran to give them, and no later
// config that allows a suspect by name is launched, whatever
// --allow-disabled-protocols says.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// noteWrong records the values t's lists force after t gave wrong
// results: one forced alone, else those NCCL's defaults never run (or all).
func (p *planner) noteWrong(t *Trial) {
	for _, knob := range listKnobs {
		named := nccl.Named(t.Config[knob])
		var suspects []string
		for _, v := range named {
			if len(named) == 1 || !p.defaultsRun(knob, v) {
				suspects = append(suspects, v)
			}
		}
		if len(suspects) == 0 {
			suspects = named
		}
		for _, v := range suspects {
			key := knob + "=" + v
			if _, ok := p.wrong[key]; !ok {
				p.wrong[key] = fmt.Sprintf("%s %s gave wrong results in trial %d (%s)", knob, v, t.Number, t.Config)
			}
		}
	}
}

// defaultsRun reports whether NCCL's defaults run value.
func (p *planner) defaultsRun(knob, value string) bool {
	for _, o := range p.ops {
		if o.native == nil {
			continue
		}
		for _, c := range o.native.Plan {
			got := c.Proto
			if knob == "NCCL_ALGO" {
				got = c.Algo
			}
			if strings.EqualFold(got, value) {
				return true
			}
		}
	}
	return false
}

// wrongIn is why cfg must not be launched after wrong results ("" when
// nothing it allows by name gave them).
func (p *planner) wrongIn(cfg nccl.Config) string {
	for _, knob := range listKnobs {
		for _, v := range nccl.Named(cfg[knob]) {
			if why, ok := p.wrong[knob+"="+v]; ok {
				return why
			}
		}
	}
	return ""
}

// wrongSummary is one line per value that gave wrong results.
func (p *planner) wrongSummary() []string {
	counts := map[string]int{}
	for _, why := range p.refusedWrong {
		counts[why]++
	}
	var out []string
	for _, why := range p.wrong {
		out = append(out, fmt.Sprintf("%s: %d later configs allowing it were not launched", why, counts[why]))
	}
	sort.Strings(out)
	return out
}
