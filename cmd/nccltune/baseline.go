package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/nccl"
)

// baselineFlags let a study compare with the settings a lane runs today
// instead of NCCL's defaults.
func baselineFlags() []cli.Flag {
	return []cli.Flag{
		&flagvalue.List{GenericFlag: cli.GenericFlag{Name: "baseline-env",
			Usage: "your current setting `K=V` of a tunable NCCL knob (NCCL_PROTO=^LL128), repeatable: the study compares with these settings instead of NCCL's defaults, starts its search from them, and recommends a change to them",
			Value: &flagvalue.KV{Flag: "baseline-env", KeepSpace: true, Check: func(it string) error {
				if err := baselineKnob(it); err != nil {
					return err
				}
				return flagvalue.KnobItem("baseline-env")(it)
			}}}},
		&cli.StringFlag{Name: "baseline-env-file",
			Usage: "`FILE` of K=V lines (# comments, optional 'export ') read before --baseline-env, e.g. the env file a serving lane deploys"},
	}
}

// readBaselineEnv reads --baseline-env-file and --baseline-env into a
// config of tunable knobs; a knob the base env fixes cannot also be a
// baseline (the base env is held constant, the baseline is searched from).
func readBaselineEnv(c *cli.Context, base map[string]string) (nccl.Config, error) {
	items := flagvalue.Items(c, "baseline-env")
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
		if err := baselineKnob(it); err != nil {
			return nil, err
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

// baselineKnob refuses a baseline item that sets an NCCL variable
// nccltune does not tune: it belongs in --base-env.
func baselineKnob(it string) error {
	k, _, _ := strings.Cut(it, "=")
	k = strings.TrimSpace(k)
	if _, err := nccl.LookupKnob(k); err != nil && strings.HasPrefix(k, "NCCL_") && nccl.CheckEnvName(k) == nil {
		return usageErrorf("--baseline-env %s: not a knob nccltune tunes; a lane's fixed setting such as %s goes in --base-env", it, k)
	}
	return nil
}
