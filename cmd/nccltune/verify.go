package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-measure a study's recommendation against its baseline (NCCL's defaults, or --baseline-env), fresh and interleaved",
		ArgsUsage: "STUDY",
		Description: `verify checks a recommendation independently of the search that made it:
new launches of NCCL's defaults and of the recommended env, alternating
(B C B C …, --launches each, after one uncounted warm-up), compared with
the same statistics as the search. It says whether the fresh speedup and
its interval agree with what the search claimed. Use it after a search,
after a driver or NCCL upgrade, or before changing a serving recipe.

Examples:
  nccltune verify s3-512K-4M --sim spark4
  nccltune verify s3-512K-4M --launches 10 --launcher mpirun --np 2 --hosts a,b
  nccltune verify s3-512K-4M --baseline-env NCCL_PROTO=^LL128 --baseline-env NCCL_MAX_NCHANNELS=8 --sim spark4`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "launches", Value: 10, Usage: "interleaved launches per arm"},
			&cli.StringSliceFlag{Name: "env", Usage: "verify this `K=V` config instead of the study's recommendation (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		}, append(baselineFlags(), launchFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("verify takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			lo, err := readLaunchFlags(c)
			if err != nil {
				return err
			}
			cfg, err := readEnvFlag(c, lo.spec.BaseEnv)
			if err != nil {
				return err
			}
			min := model.MinLaunchesForDecision(model.DefaultOptions())
			if c.Int("launches") < min {
				return usageErrorf("--launches %d: at least %d per arm are needed for any verdict", c.Int("launches"), min)
			}
			path, err := dbPath(c)
			if err != nil {
				return err
			}
			baseline, err := readBaselineEnv(c, lo.spec.BaseEnv)
			if err != nil {
				return err
			}
			return runVerify(c.Context, verifyOptions{launch: lo, study: c.Args().First(), config: cfg,
				launches: c.Int("launches"), json: c.Bool("json"), db: path, stdout: c.App.Writer, stderr: c.App.ErrWriter,
				baseline: baseline, baselineSet: c.IsSet("baseline-env") || c.IsSet("baseline-env-file")})
		},
	}
}

type verifyOptions struct {
	launch   launchOptions
	study    string
	config   nccl.Config
	launches int
	json     bool
	db       string
	stdout   io.Writer
	stderr   io.Writer
	// baseline is --baseline-env (baselineSet when given).
	baseline    nccl.Config
	baselineSet bool
	naming      studyNaming
}

func runVerify(ctx context.Context, o verifyOptions) error {
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	orig, err := st.Study(o.study)
	if err != nil {
		return usageError(err)
	}
	if orig.Simulated != o.launch.simulated {
		return usageErrorf("study %s ran on %s; verify it the same way", orig.Name,
			map[bool]string{true: "the simulated fabric (--sim " + orig.Launch.SimProfile + ")", false: "real hardware (without --sim)"}[orig.Simulated])
	}
	if diffs := launchDifferences(orig, launchSettings(o.launch), o.launch.spec.BaseEnv); len(diffs) > 0 {
		return launchDifferenceError(orig, "verify", diffs)
	}
	if note := unrecordedNote(orig); note != "" {
		fmt.Fprintln(o.stderr, note)
	}
	cfg := o.config
	var claim *ui.Claim
	if len(cfg) == 0 {
		rec := orig.Recommendation
		switch {
		case rec == nil:
			return usageErrorf("study %s has no decision yet (status %s); verify a finished study, or name a config with --env K=V", orig.Name, orig.Status)
		case len(rec.Env) > 0:
			cfg = nccl.Config(rec.Env).Clone()
		case rec.CandidateTrialID != 0:
			// The study kept the defaults: verify that its confirmed
			// candidate is indeed no better.
			t, err := st.Trial(rec.CandidateTrialID)
			if err != nil {
				return err
			}
			cfg = t.Config.Clone()
		default:
			return usageErrorf("study %s confirmed no candidate: there is nothing to verify; name a config with --env K=V", orig.Name)
		}
		claim = &ui.Claim{Speedup: rec.Speedup, SpeedupCI: rec.SpeedupCI}
	}
	for _, k := range sortedKeys(cfg) {
		if _, fixed := o.launch.spec.BaseEnv[k]; fixed {
			return usageErrorf("%s is what verify measures (%s=%s) and is also fixed by --base-env; drop it from --base-env", k, k, cfg[k])
		}
	}
	// The baseline: --baseline-env, else the study's own. The search's
	// claim speaks only for the baseline it was measured against.
	baseCfg := nccl.Config(orig.BaselineEnv).Clone()
	if o.baselineSet {
		if o.baseline.Key() != baseCfg.Key() {
			claim = nil
		}
		baseCfg = o.baseline.Clone()
	}
	return runInterleaved(ctx, st, o, abSpec{kind: vocab.KindVerify, verifies: orig.Name, band: nccl.Band{Min: orig.BandMin, Max: orig.BandMax},
		bandText: orig.Band, guards: orig.GuardSizes, collective: orig.Collective, base: baseCfg, cand: cfg, claim: claim})
}

// abSpec is one interleaved comparison of two configs: verify's (a
// study's recommendation against its baseline) or compare's.
type abSpec struct {
	kind, verifies string
	band           nccl.Band
	bandText       string
	guards         []int64
	collective     string
	base, cand     nccl.Config
	claim          *ui.Claim
}

// runInterleaved measures spec.base and spec.cand alternately (B C B C …,
// after one uncounted warm-up of B), stores the launches as a study of
// spec.kind, and prints the comparison.
func runInterleaved(ctx context.Context, st *store.Store, o verifyOptions, spec abSpec) error {
	cfg, claim := spec.cand, spec.claim
	band := spec.band
	sizes := band.Sizes()
	lo, hi := band.Min, band.Max
	for _, g := range spec.guards {
		lo, hi = min(lo, g), max(hi, g)
	}
	study := &store.Study{Kind: spec.kind, Band: spec.bandText, BandMin: band.Min, BandMax: band.Max,
		Sizes: sizes, GuardSizes: spec.guards, Collective: spec.collective, BaseEnv: o.launch.spec.BaseEnv,
		BaselineEnv: spec.base.Clone(),
		Launch:      launchSettings(o.launch), Simulated: o.launch.simulated, Seed: o.launch.seed,
		Budget: store.Budget{Launches: 2*o.launches + 1}, Status: vocab.StatusRunning,
		Reason: spec.reason()}
	// Nothing is stored for a launch that cannot start.
	if err := preflight(o.launch); err != nil {
		return err
	}
	o.naming.apply(study)
	if err := createStudy(st, study); err != nil {
		return err
	}
	rec := studyrun.NewRecorder(st, study, sizes)
	base := &search.Trial{Number: 0, Config: spec.base.Clone(), Role: vocab.RoleBaseline, State: vocab.TrialRunning}
	cand := &search.Trial{Number: 1, Config: cfg, Role: vocab.RoleCandidate, State: vocab.TrialRunning}
	for _, t := range []*search.Trial{base, cand} {
		if err := rec.SaveTrial(t); err != nil {
			return err
		}
	}
	launcher := &studyrun.Launcher{Base: o.launch.spec, Seed: o.launch.seed + 7919} // fresh noise, not the search's
	fmt.Fprintf(o.stderr, "%s %s: %s against %s, %d launches each, interleaved%s\n",
		spec.kind, study.Name, cfg, ui.BaselineName(spec.base), o.launches, labelSuffix(study))

	seq := 0
	run := func(t *search.Trial, phase string, scored bool) error {
		req := search.Request{Config: t.Config, MinBytes: lo, MaxBytes: hi, Seq: seq, Phase: phase, Trial: t.Number}
		l, err := launcher.Launch(ctx, req)
		seq++
		if err != nil {
			if l != nil {
				_ = rec.SaveLaunch(t, req, l, false)
			}
			return err
		}
		ok := l.Outcome == runner.OK
		if ok && scored {
			t.Confirm = append(t.Confirm, search.ModelLaunch(l.Result))
		}
		if !ok {
			t.State, t.Reason = vocab.TrialFailed, l.Reason
		}
		if err := rec.SaveLaunch(t, req, l, ok && scored); err != nil {
			return err
		}
		fmt.Fprintf(o.stderr, "launch %d/%d %-7s %-40s %s (%s)\n", seq, 2*o.launches+1, phase, t.Config, outcomeText(l), l.Duration.Round(time.Millisecond))
		if !ok {
			return fabricError(fmt.Errorf("%s launch of %s %s: %s", phase, t.Config, l.Outcome, l.Reason))
		}
		return nil
	}
	finish := func(status, reason string) {
		study.Status, study.Reason = status, reason
		_ = st.UpdateStudy(study)
	}
	// stopped stores why the run ended early: the user, or a failure.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			finish(vocab.StatusInterrupted, "interrupted by the user")
		} else {
			finish(vocab.StatusFailed, err.Error())
		}
		return verifyError(ctx, err)
	}
	if err := run(base, vocab.PhaseWarmup, false); err != nil {
		return stopped(err)
	}
	for i := 0; i < o.launches; i++ {
		for _, t := range []*search.Trial{base, cand} {
			if err := run(t, vocab.PhaseConfirm, true); err != nil {
				return stopped(err)
			}
		}
	}
	opt := model.DefaultOptions()
	cmp := model.Compare(base.Confirm, cand.Confirm, sizes, opt)
	res := ui.VerifyResult{Study: study.Name, Verifies: spec.verifies, BaselineEnv: spec.base.Clone(), Simulated: study.Simulated, Env: cfg.Clone(),
		Launches: o.launches, Speedup: cmp.Speedup, SpeedupCI: [2]float64{ui.FiniteOr(cmp.Lo, cmp.Speedup), ui.FiniteOr(cmp.Hi, cmp.Speedup)},
		PValue: ui.FiniteOr(cmp.P, 1), Recommend: cmp.Recommend, Reason: cmp.Reason, Claimed: claim}
	if claim != nil {
		// The two measurements agree when each one's estimate lies inside
		// the other's interval, or their intervals overlap.
		res.Consistent = claim.SpeedupCI[0] <= res.SpeedupCI[1] && res.SpeedupCI[0] <= claim.SpeedupCI[1]
	}
	study.Recommendation = &store.Recommendation{Env: cfg.Clone(), Speedup: res.Speedup, SpeedupCI: res.SpeedupCI,
		Significant: cmp.Recommend, PValue: res.PValue, Reason: cmp.Reason, MinEffect: opt.MinEffect,
		BaselineScoreUS: cmp.Baseline.ScoreUS, ScoreUS: cmp.Candidate.ScoreUS,
		BaselineLaunches: len(base.Confirm), CandidateLaunches: len(cand.Confirm),
		PerSize: sizeComparisons(base.Confirm, cand.Confirm, sizes, opt),
		Guards:  sizeComparisons(base.Confirm, cand.Confirm, spec.guards, opt)}
	study.Recommendation.CandidateTrialID = cand.ID
	if cmp.Recommend {
		study.Recommendation.TrialID = cand.ID
	}
	base.State, cand.State = vocab.TrialComplete, vocab.TrialComplete
	_ = rec.SaveTrials([]*search.Trial{base, cand})
	finish(vocab.StatusDone, spec.reason())
	if err := ui.PrintVerify(o.stdout, o.json, study, res); err != nil {
		return err
	}
	if claim != nil && !res.Consistent {
		return errCheckFailed // the claim did not hold: exit 1, as gate does
	}
	return nil
}

// reason is the stored note of what the comparison was for.
func (spec abSpec) reason() string {
	if spec.verifies != "" {
		return "verifies " + spec.verifies
	}
	return "compares " + spec.cand.String() + " with " + spec.base.String()
}

func verifyError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return vocab.ErrInterrupted
	}
	return err
}
