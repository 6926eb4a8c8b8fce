package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Preference is a config that scored better than the confirmed one, and
// why the study confirmed the other.
type Preference struct {
	Config  ScoredConfig
	Reasons []string
}

// WhyChosen explains the confirmed config against every config with a
// lower score. It returns the confirmed config's entry (nil when none)
// and the better-scoring ones.
func (s *Study) WhyChosen() (*ScoredConfig, []Preference) {
	cs, err := s.ScoredConfigs()
	if err != nil {
		return nil, nil
	}
	var chosen *ScoredConfig
	for i := range cs {
		if cs[i].Role == "recommended" || cs[i].Role == "confirmed" {
			chosen = &cs[i]
		}
	}
	if chosen == nil || !chosen.Scored() {
		return chosen, nil
	}
	minEffect := stored.StatsOf(s.Study).MinEffect
	var out []Preference
	for _, o := range cs {
		if !o.Scored() || o.ScoreUS >= chosen.ScoreUS || o.Role == vocab.RoleBaseline {
			continue
		}
		p := Preference{Config: o}
		gap := chosen.ScoreUS/o.ScoreUS - 1
		if o.Launches < chosen.Launches {
			p.Reasons = append(p.Reasons, fmt.Sprintf("fewer launches: %s against %s — the best of many configs measured in few launches leads partly by luck (the winner's curse); the verdict rests on the interleaved confirmation",
				texttable.Plural(o.Launches, "launch"), texttable.Plural(chosen.Launches, "launch")))
		}
		if gap < minEffect {
			p.Reasons = append(p.Reasons, fmt.Sprintf("a difference of %.1f %%, below the %.0f %% minimum effect the study acts on", 100*gap, 100*minEffect))
			if o.Knobs > chosen.Knobs {
				p.Reasons = append(p.Reasons, fmt.Sprintf("more knobs: %d against %d — within the minimum effect the search prefers the config that sets fewer, each being one more line to carry into every serving recipe", o.Knobs, chosen.Knobs))
			}
		}
		if s.samePlan(o, *chosen) {
			p.Reasons = append(p.Reasons, "the same plan: NCCL's debug logs show it runs the same algorithm, protocol and channels as the confirmed config at every size of the band, so to NCCL they are one config (the confirmed one sets fewer knobs or was measured more)")
		}
		if finite(o.HiUS) && finite(chosen.LoUS) && o.HiUS >= chosen.LoUS {
			p.Reasons = append(p.Reasons, "their intervals overlap: the lower score is not evidence of a faster config")
		}
		if len(p.Reasons) == 0 {
			p.Reasons = append(p.Reasons, fmt.Sprintf("scored %.1f %% lower over %s; the search confirms one config, chosen by its candidate rule among those measured most", 100*gap, texttable.Plural(o.Launches, "launch")))
		}
		out = append(out, p)
	}
	return chosen, out
}

// samePlan reports whether NCCL's debug logs show both configs running
// the same choice at every size of the band.
func (s *Study) samePlan(a, b ScoredConfig) bool {
	pa, pb := s.planOf(a), s.planOf(b)
	if pa == nil || pb == nil {
		return false
	}
	return !slices.ContainsFunc(s.Study.Sizes, func(size int64) bool { return pa[size] != pb[size] })
}

// planOf is what NCCL chose for a config at each size of the band, from
// the first of its launches whose log recorded every one; nil if none.
func (s *Study) planOf(c ScoredConfig) map[int64]string {
	if len(c.Trials) == 0 || len(s.Study.Sizes) == 0 {
		return nil
	}
	t := s.TrialByNumber(c.Trials[0])
	if t == nil {
		return nil
	}
	for _, l := range s.Launches {
		if l.TrialID != t.ID || l.Facts == nil || len(l.Facts.Choices) == 0 {
			continue
		}
		plan := map[int64]string{}
		for _, ch := range l.Facts.Choices {
			if s.Study.Collective == "" || strings.EqualFold(strings.ReplaceAll(ch.Collective, "_", ""), strings.ReplaceAll(s.Study.Collective, "_", "")) {
				plan[ch.Bytes] = fmt.Sprintf("%s/%s/%d", strings.ToUpper(ch.Algo), strings.ToUpper(ch.Proto), ch.Channels)
			}
		}
		if !slices.ContainsFunc(s.Study.Sizes, func(size int64) bool { return plan[size] == "" }) {
			return plan
		}
	}
	return nil
}
