package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// baselineFlags let a study compare with the settings a lane runs today
// instead of NCCL's defaults.
func baselineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "baseline-env", KeepSpace: true,
			Usage: "your current setting `K=V` of a tunable NCCL knob (NCCL_PROTO=^LL128), repeatable: the study compares with these settings instead of NCCL's defaults, starts its search from them, and recommends a change to them"},
		&cli.StringFlag{Name: "baseline-env-file",
			Usage: "`FILE` of K=V lines (# comments, optional 'export ') read before --baseline-env, e.g. the env file a serving lane deploys"},
	}
}

// readBaselineEnv reads --baseline-env-file and --baseline-env into a
// config of tunable knobs; a knob the base env fixes cannot also be a
// baseline (the base env is held constant, the baseline is searched from).
func readBaselineEnv(c *cli.Context, base map[string]string) (nccl.Config, error) {
	items := c.StringSlice("baseline-env")
	if err := checkNoRepeats("baseline-env", items); err != nil {
		return nil, err
	}
	var all []string
	if file := c.String("baseline-env-file"); file != "" {
		env, err := readBaseEnv(nil, file)
		if err != nil {
			return nil, usageError(fmt.Errorf("--baseline-env-file: %w", err))
		}
		for _, k := range sortedKeys(env) {
			all = append(all, k+"="+env[k])
		}
	}
	all = append(all, items...)
	for _, it := range all {
		k, _, _ := strings.Cut(it, "=")
		if _, err := nccl.LookupKnob(strings.TrimSpace(k)); err != nil && strings.HasPrefix(strings.TrimSpace(k), "NCCL_") && nccl.CheckEnvName(strings.TrimSpace(k)) == nil {
			return nil, usageErrorf("--baseline-env %s: not a knob nccltune tunes; a lane's fixed setting such as %s goes in --base-env", it, strings.TrimSpace(k))
		}
	}
	cfg, err := nccl.ParseConfig(all)
	if err != nil {
		return nil, usageError(fmt.Errorf("--baseline-env: %w", err))
	}
	for k := range cfg {
		if _, fixed := base[k]; fixed {
			return nil, usageErrorf("%s is in both --baseline-env and --base-env: the base env is held constant, the baseline is where the search starts; keep it in one", k)
		}
	}
	return cfg, nil
}

// baselineName is how output names what a study compared with.
func baselineName(baseline map[string]string) string {
	if len(nccl.Config(baseline).Clone()) == 0 {
		return "NCCL defaults"
	}
	return "your baseline (" + nccl.Config(baseline).Key() + ")"
}

// changeText says what a recommendation changes relative to the baseline:
// "NCCL_MAX_NCHANNELS 8 → 16, NCCL_ALGO unset → Ring, NCCL_PROTO ^LL128 →
// unset"; knobs kept as they are are left out.
func changeText(baseline, env map[string]string) string {
	keys := map[string]bool{}
	for k := range baseline {
		keys[k] = true
	}
	for k := range env {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		from, to := baseline[k], env[k]
		if from == to {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", k, orUnset(from), orUnset(to)))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}

// unsetKnobs are the baseline's knobs a recommendation leaves to NCCL:
// where the baseline is deployed they must be removed, not just left out.
func unsetKnobs(baseline, env map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(baseline) {
		if _, kept := env[k]; !kept && baseline[k] != "" {
			out = append(out, k)
		}
	}
	return out
}

// defaultsLine says, for a study against the user's baseline, how NCCL's
// defaults did while exploring: they may be better still. "" when the
// study's baseline is NCCL's defaults or they were not measured.
func defaultsLine(study *store.Study, trials []*store.Trial) string {
	if len(nccl.Config(study.BaselineEnv).Clone()) == 0 || study.Recommendation == nil {
		return ""
	}
	var def *store.Trial
	for _, t := range trials {
		if len(t.Config.Clone()) == 0 {
			def = t
		}
	}
	base := study.Recommendation.BaselineScoreUS
	if def == nil || def.ScoreUS <= 0 || base <= 0 {
		return ""
	}
	gain := base/def.ScoreUS - 1
	verdict := "not better than your baseline"
	if gain > study.Recommendation.MinEffect {
		verdict = "may be better than your baseline"
		if t := study.Recommendation.TrialID; t != 0 && t == def.ID {
			verdict = "better than your baseline (confirmed above)"
		}
	}
	// Said as "faster" or "slower", never as a signed percentage: a
	// negative gain read as "-82 %" looks like a time that shrank.
	change := fmt.Sprintf("%.0f %% faster than", 100*gain)
	if gain < 0 {
		change = fmt.Sprintf("%.2f× slower than", def.ScoreUS/base)
	}
	return fmt.Sprintf("NCCL defaults: %s your baseline while exploring (trial %d, %d launches, not confirmed): %s", change, def.Number, def.Launches, verdict)
}

// storeTrials is the search's trials as the store keeps them, for the
// lines search prints from a study's stored form.
func storeTrials(ts []*search.Trial, sizes []int64) []*store.Trial {
	out := make([]*store.Trial, 0, len(ts))
	for _, t := range ts {
		st := &store.Trial{ID: t.ID, Number: t.Number, Config: t.Config, Role: t.Role, State: t.State, Launches: t.Launches}
		if len(t.Explore) > 0 {
			st.ScoreUS = t.Score(sizes)
		}
		out = append(out, st)
	}
	return out
}
