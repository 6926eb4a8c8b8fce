package report

import (
	"math"
	"slices"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Study is one study as stored.Load read it, with the methods its
// pictures and pages are drawn by.
type Study stored.Study

// Of is s to draw with the statistics of its launches (ls, handed in so
// that report imports no statistics routine): the same study, not a copy.
func Of(s *stored.Study, ls stored.LaunchStats) *Study {
	s.LaunchStats = ls
	return (*Study)(s)
}

// Name is the study's name.
func (s *Study) Name() string { return s.Study.Name }

// trialWhere is the first trial f holds for, or nil.
func (s *Study) trialWhere(f func(*store.Trial) bool) *store.Trial {
	if i := slices.IndexFunc(s.Trials, f); i >= 0 {
		return s.Trials[i]
	}
	return nil
}

// TrialByNumber returns the trial with that number, or nil.
func (s *Study) TrialByNumber(n int) *store.Trial {
	return s.trialWhere(func(t *store.Trial) bool { return t.Number == n })
}

// trialByEnv is the trial of env (nil for none, and for an empty env).
func (s *Study) trialByEnv(env map[string]string) *store.Trial {
	key := nccl.Config(env).Key()
	return s.trialWhere(func(t *store.Trial) bool { return key != "" && t.Config.Key() == key })
}

func (s *Study) trialByID(id uint64) *store.Trial {
	return s.trialWhere(func(t *store.Trial) bool { return t.ID == id })
}

// Baseline is the trial that measured NCCL's defaults: the one with the
// baseline role, else the first with an empty config; nil if none.
func (s *Study) Baseline() *store.Trial {
	if t := s.trialWhere(func(t *store.Trial) bool { return t.Role == vocab.RoleBaseline }); t != nil {
		return t
	}
	return s.trialWhere(func(t *store.Trial) bool { return len(t.Config.Clone()) == 0 })
}

// Candidate is the trial the study confirmed against the baseline: the
// recommended trial, or, when the study kept the defaults after confirming
// a challenger, that challenger. Nil when nothing was confirmed or
// recommended.
func (s *Study) Candidate() *store.Trial {
	base := s.Baseline()
	if r := s.Study.Recommendation; r != nil {
		if t := s.trialByID(r.TrialID); r.TrialID != 0 && t != nil {
			return t
		}
		// As recorded: after a refusal the study confirms another, so the
		// first trial with confirmation launches is not the one decided.
		if t := s.trialByID(r.CandidateTrialID); r.CandidateTrialID != 0 && t != nil {
			return t
		}
		if t := s.trialByEnv(r.Env); t != nil {
			return t
		}
	}
	// Not decided yet: the candidate its stored design names.
	if c := s.Study.Confirming; c != nil {
		if t := s.trialByEnv(c.Env); t != nil {
			return t
		}
	}
	// The defaults were kept: the challenger is the other trial with
	// confirmation launches, but for those already refused.
	refused := func(id uint64) bool {
		return slices.ContainsFunc(s.Study.Refusals, func(r store.Refusal) bool { return r.TrialID == id })
	}
	for _, l := range s.Launches {
		if l.Phase != vocab.PhaseConfirm || (base != nil && l.TrialID == base.ID) || refused(l.TrialID) {
			continue
		}
		if t := s.trialByID(l.TrialID); t != nil {
			return t
		}
	}
	return nil
}

// Recommended reports whether the study recommends a change from what it
// compared with (stored.Conclusion.Keeps).
func (s *Study) Recommended() bool {
	c := stored.ConclusionOf(s.Study)
	return c.Rec != nil && !c.Keeps()
}

// usable reports whether a launch's numbers describe its config: it ended
// OK and was scored, or imported or swept (measurements all the same).
func usable(l *store.Launch) bool {
	if l.Outcome != benchfmt.OK || l.Phase == vocab.PhaseWarmup {
		return false
	}
	return l.Scored || l.Phase == vocab.PhaseImport || l.Phase == vocab.PhaseSweep
}

// TrialLaunches returns the usable launches of a trial of the study's
// op; with phase set, only those of that phase.
func (s *Study) TrialLaunches(t *store.Trial, phase string) []*store.Launch {
	var out []*store.Launch
	op := s.Study.Op()
	for _, l := range s.TrialLaunchesOfEveryOp(t) {
		// The study's own op only: a guarded op's launches (and a
		// workload's other parts) measure another collective. A launch
		// stored without an op is the study's own.
		if (phase == "" || l.Phase == phase) && (l.Op == "" || l.Op == op) {
			out = append(out, l)
		}
	}
	return out
}

// TrialLaunchesOfEveryOp returns the usable launches of a trial whatever
// op they measured, in order.
func (s *Study) TrialLaunchesOfEveryOp(t *store.Trial) []*store.Launch {
	var out []*store.Launch
	for _, l := range s.Launches {
		if l.TrialID == t.ID && usable(l) {
			out = append(out, l)
		}
	}
	return out
}

// BusBWFactor is busbw ÷ algbw for this study's collective.
func (s *Study) BusBWFactor() float64 { return s.LaunchStats.BusBWFactor((*stored.Study)(s)) }

// busBW is bus bandwidth in GB/s (10⁹ B/s) for bytes moved in timeUS.
func busBW(factor float64, bytes int64, timeUS float64) float64 {
	if !(timeUS > 0) || math.IsInf(timeUS, 0) {
		return math.NaN()
	}
	return factor * float64(bytes) / (timeUS * 1e3)
}

// labelOf names a trial's config as the exports write it; for the
// recommended trial, measuredAs names the config as launched when that
// differs, so that no figure hides what was measured.
func (s *Study) labelOf(t *store.Trial) (label, measuredAs string) {
	label = ConfigLabel(t.Config)
	if cand := s.Candidate(); cand == nil || cand.ID != t.ID || !s.Recommended() {
		return label, ""
	}
	written := nccl.Config(s.Study.Recommendation.Env).Canonical()
	if w := ConfigLabel(written); len(written) > 0 && w != label {
		return w, label
	}
	return label, ""
}

// ConfigLabel names a config as the exports spell it
// ("NCCL_MAX_NCHANNELS=8 NCCL_PROTO=Simple", or "NCCL defaults").
func ConfigLabel(c nccl.Config) string { return c.String() }

// simulatedLabel is "SIMULATED (spark4)" for a simulated study, else "".
func simulatedLabel(st *store.Study) string {
	if !st.Simulated {
		return ""
	}
	if st.Launch.SimProfile != "" {
		return "SIMULATED (" + st.Launch.SimProfile + ")"
	}
	return "SIMULATED"
}
