package studyrun

import (
	"maps"
	"slices"

	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// VerifyOptions say what verify re-measures.
type VerifyOptions struct {
	Study string
	// Config, if not empty, is verified instead of the recommendation.
	Config nccl.Config
	// Baseline, when BaselineSet, replaces the study's baseline.
	Baseline    nccl.Config
	BaselineSet bool
	Launch      LaunchSettings
	// Launches per arm: fewer than the study's alpha needs for any verdict
	// are refused.
	Launches int
	// CheckRelaunch, if set, is asked of the stored study: its error
	// refuses (e.g. launch settings other than the study's).
	CheckRelaunch func(*store.Study) error
}

// PlanVerify says what verify compares: the study's recommendation (or
// the candidate it confirmed), or o.Config, against the study's baseline
// or o.Baseline, with the claim the study made of that pair. What cannot
// be verified is vocab.ErrUsage.
func PlanVerify(st *store.Store, o VerifyOptions) (AB, error) {
	orig, err := st.Study(o.Study)
	if err != nil {
		return AB{}, vocab.Mark(vocab.ErrUsage, err)
	}
	if orig.Simulated != o.Launch.Simulated {
		ran := "real hardware (without --sim)"
		if orig.Simulated {
			ran = "the simulated fabric (--sim " + orig.Launch.SimProfile + ")"
		}
		return AB{}, vocab.UsageErrorf("study %s ran on %s; verify it the same way", orig.Name, ran)
	}
	// The study's alpha sets the fewest launches that can reach a verdict:
	// refused before anything is launched.
	opt := launchstats.OptionsOf(orig)
	if need := model.MinLaunchesForDecision(opt); o.Launches < need {
		return AB{}, vocab.UsageErrorf("--launches %d: study %s decides at alpha %g, where at least %d launches per arm are needed for any verdict; use --launches %d or more",
			o.Launches, orig.Name, opt.Alpha, need, need)
	}
	if o.CheckRelaunch != nil {
		if err := o.CheckRelaunch(orig); err != nil {
			return AB{}, err
		}
	}
	cfg := o.Config
	var claim *runresult.Claim
	if len(cfg) == 0 {
		rec := orig.Recommendation
		switch {
		case rec == nil:
			return AB{}, vocab.UsageErrorf("study %s has no decision yet (status %s); verify a finished study, or name a config with --env K=V", orig.Name, orig.Status)
		case len(rec.Env) > 0:
			cfg = nccl.Config(rec.Env).Clone()
		case rec.CandidateTrialID != 0: // verify it is indeed no better
			t, err := st.Trial(rec.CandidateTrialID)
			if err != nil {
				return AB{}, err
			}
			cfg = t.Config.Clone()
		default:
			return AB{}, vocab.UsageErrorf("study %s confirmed no candidate: there is nothing to verify; name a config with --env K=V", orig.Name)
		}
		claim = &runresult.Claim{Speedup: rec.Speedup, SpeedupCI: rec.SpeedupCI, Recommended: !stored.ConclusionOf(orig).Keeps()}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if _, fixed := o.Launch.Spec.BaseEnv[k]; fixed {
			return AB{}, vocab.UsageErrorf("%s is what verify measures (%s=%s) and is also fixed by --base-env; drop it from --base-env", k, k, cfg[k])
		}
	}
	// The study's claim speaks only for its own baseline.
	baseCfg := nccl.Config(orig.BaselineEnv).Clone()
	if o.BaselineSet {
		if o.Baseline.Key() != baseCfg.Key() {
			claim = nil
		}
		baseCfg = o.Baseline.Clone()
	}
	ab := AB{Kind: vocab.KindVerify, Verifies: orig.Name, Band: nccl.Band{Min: orig.BandMin, Max: orig.BandMax},
		BandText: orig.Band, Guards: orig.GuardSizes, Collective: orig.Collective, Base: baseCfg, Cand: cfg, Claim: claim,
		GuardOps: orig.GuardOps, Stats: opt}
	ab.PluginRetunes, _ = nccl.ExamplePluginRetunes(orig.Platform.GPU, orig.Platform.Nodes)
	if orig.Parts().ScoredByRounds() {
		ab.Parts = orig.Parts()
	}
	if w := orig.Parts(); w.Timed() {
		ab.Timed = w
	}
	if len(ab.GuardOps) > 0 {
		ab.GuardLaunches = search.DefaultGuardLaunches
		if orig.Search != nil && orig.Search.GuardLaunches > 0 {
			ab.GuardLaunches = orig.Search.GuardLaunches
		}
	}
	return ab, nil
}
