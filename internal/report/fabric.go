package report

import (
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
)

// FabricFacts describes the study's fabric: its fingerprint, completed by
// what NCCL's log said in its launches.
func (s *Study) FabricFacts() []stored.Field {
	f := s.Study.Platform
	facts := s.logFacts()
	if facts == nil {
		return stored.FabricFacts(f)
	}
	// Studies stored before the transport was recorded get it here.
	f.CompleteFrom(facts)
	out := stored.FabricFacts(f)
	if len(facts.NICs) > 0 {
		out = append(out, stored.Field{Key: "NICs NCCL used", Value: strings.Join(facts.NICs, ", ")})
	}
	if facts.Channels > 0 {
		out = append(out, stored.Field{Key: "channels (NCCL defaults)", Value: strconv.Itoa(facts.Channels)})
	}
	if len(facts.Warnings) > 0 {
		out = append(out, stored.Field{Key: "NCCL warnings", Value: strings.Join(facts.Warnings, "; ")})
	}
	return out
}

// logFacts are the facts of the baseline's debug launch if there is one,
// else of the first launch with any.
func (s *Study) logFacts() *benchfmt.Facts {
	base := s.Baseline()
	var first *benchfmt.Facts
	for _, l := range s.Launches {
		if l.Facts == nil {
			continue
		}
		if base != nil && l.TrialID == base.ID && (l.Phase == vocab.PhaseExplain || l.Phase == vocab.PhasePlan) {
			return l.Facts
		}
		if first == nil {
			first = l.Facts
		}
	}
	return first
}
