package launchflags

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// ReadBaseEnv merges --base-env-file (first) and --base-env items (each
// checked as it was set): an item on the command line replaces the file's
// value, as flags replace a --config file's.
func ReadBaseEnv(items []string, file string) (map[string]string, error) {
	env := map[string]string{}
	if file != "" {
		var err error
		if env, err = readEnvFile("--base-env-file", file); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		k, v, err := nccl.ParseKeyValue(it)
		if err == nil {
			err = checkEnvValue(k, v)
		}
		if err != nil {
			return nil, fmt.Errorf("--base-env: %w", err)
		}
		env[k] = v
	}
	for _, k := range sortedKeys(env) {
		if err := nccl.CheckEnvName(k); err != nil {
			return nil, fmt.Errorf("--base-env: %w", err)
		}
	}
	knobs := nccl.Config{}
	for k, v := range env {
		if nccl.IsKnob(k) {
			knobs[k] = v
		}
	}
	// Each value, then the rules between knobs (MIN ≤ MAX…).
	if err := knobs.Validate(); err != nil {
		return nil, fmt.Errorf("--base-env: %w", err)
	}
	return env, nil
}

// maxEnvLine is the longest line of an env file: a value is a setting
// (an interface, a HCA list), not a document.
const maxEnvLine = 64 << 10

// readEnvFile reads flag's env file (K=V lines; blank lines, # comments and
// "export " allowed; one level of quotes stripped): each key once, no
// line over 64 KiB, no NUL byte, all refused with the line's number
// before anything runs.
func readEnvFile(flag, file string) (map[string]string, error) {
	data, err := input.Load(context.Background(), file, input.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	env := map[string]string{}
	lineOf := map[string]int{}
	for n, line := range strings.Split(string(data), "\n") {
		n++
		if len(line) > maxEnvLine {
			return nil, fmt.Errorf("%s:%d: the line is %d KiB long; a line of an env file is at most %d KiB", file, n, len(line)>>10, maxEnvLine>>10)
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, err := nccl.ParseKeyValue(line)
		if err == nil {
			v = unquote(v)
			err = checkEnvValue(k, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if first, ok := lineOf[k]; ok {
			return nil, fmt.Errorf("%s:%d: %s is set twice (first on line %d); set it once", file, n, k, first)
		}
		env[k], lineOf[k] = v, n
	}
	return env, nil
}

// checkEnvValue refuses what no environment can carry: a NUL byte ends
// the string execve passes, so the launch would fail after the study was
// stored.
func checkEnvValue(k, v string) error {
	if strings.ContainsRune(v, 0) {
		return fmt.Errorf("%s: the value holds a NUL byte, which no environment variable can carry", k)
	}
	return nil
}

// unquote strips one level of matching quotes, as an env file would have.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// sortedKeys lists a map's keys in order, so errors come out the same way
// every run.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// EnvFlag is --env, the NCCL knobs (K=V) of the config a command
// launches, read by ReadConfig(c, "env", base).
func EnvFlag(usage string) *flagvalue.List {
	return flagvalue.KVFlag("env", usage, flagvalue.KnobItem("env"))
}

// ReadConfig reads a repeatable K=V flag (--env, compare's --env-a and
// --env-b) into a config of known knobs, none of which the base env fixes.
func ReadConfig(c *cli.Context, flag string, base map[string]string) (nccl.Config, error) {
	cfg, err := nccl.ParseConfig(flagvalue.Items(c, flag))
	if err != nil {
		return nil, vocab.UsageError(fmt.Errorf("--%s: %w", flag, err))
	}
	for k := range cfg {
		if _, fixed := base[k]; fixed {
			return nil, vocab.UsageErrorf("%s is set by both --%s and --base-env; keep one", k, flag)
		}
	}
	return cfg, nil
}

// BaselineFlags let a study compare with the settings a lane runs today
// instead of NCCL's defaults.
func BaselineFlags() []cli.Flag {
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

// ReadBaseline reads --baseline-env-file and --baseline-env into a
// config of tunable knobs; a knob the base env fixes cannot also be a
// baseline (the base env is held constant, the baseline is searched from).
func ReadBaseline(c *cli.Context, base map[string]string) (nccl.Config, error) {
	items := flagvalue.Items(c, "baseline-env")
	var all []string
	if file := c.String("baseline-env-file"); file != "" {
		env, err := readEnvFile("--baseline-env-file", file)
		if err != nil {
			return nil, vocab.UsageError(err)
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
		return nil, vocab.UsageError(fmt.Errorf("--baseline-env: %w", err))
	}
	for k := range cfg {
		if _, fixed := base[k]; fixed {
			return nil, vocab.UsageErrorf("%s is in both --baseline-env and --base-env: the base env is held constant, the baseline is where the search starts; keep it in one", k)
		}
	}
	return cfg, nil
}

// baselineKnob refuses a baseline item that sets an NCCL variable
// nccltune does not tune: it belongs in --base-env.
func baselineKnob(it string) error {
	k, _, _ := strings.Cut(it, "=")
	k = strings.TrimSpace(k)
	if _, err := nccl.LookupKnob(k); err != nil && strings.HasPrefix(k, "NCCL_") && nccl.CheckEnvName(k) == nil {
		return vocab.UsageErrorf("--baseline-env %s: not a knob nccltune tunes; a lane's fixed setting such as %s goes in --base-env", it, k)
	}
	return nil
}
