package launchflags

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// ReadBaseEnv merges --base-env-file (first) and --base-env items: an
// item on the command line replaces the file's value.
func ReadBaseEnv(items []string, file string) (map[string]string, []fabric.Warning, error) {
	env := map[string]string{}
	var warnings []fabric.Warning
	if file != "" {
		var err error
		if env, warnings, err = readEnvFile("--base-env-file", file); err != nil {
			return nil, nil, err
		}
	}
	for _, it := range items {
		k, v, err := nccl.ParseKeyValue(it)
		if err == nil {
			err = checkEnvValue(k, v)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--base-env: %w", err)
		}
		env[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(env)) { // errors in a stable order
		if err := nccl.CheckEnvName(k); err != nil {
			return nil, nil, fmt.Errorf("--base-env: %w", err)
		}
	}
	if err := nccl.KnobsOf(env).Validate(); err != nil {
		return nil, nil, fmt.Errorf("--base-env: %w", err)
	}
	return env, warnings, nil
}

// maxEnvLine is the longest line of an env file: a value is a setting
// (an interface, a HCA list), not a document.
const maxEnvLine = 64 << 10

// CodeEnvFile marks a warning about a line of an env file that docker's
// --env-file and a shell read differently.
const CodeEnvFile = "env-file"

// readEnvFile reads flag's env file exactly as docker's --env-file does,
// so that one file means one thing to nccltune and to the container:
// VAR=VAL is taken literally, a bare VAR takes its value from this
// environment. Where a shell would read a line otherwise (quotes, an
// inline "# comment", "export "), the docker meaning is kept and a warning
// says so.
func readEnvFile(flag, file string) (map[string]string, []fabric.Warning, error) {
	data, err := input.Load(context.Background(), file, input.MaxBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	env := map[string]string{}
	lineOf := map[string]int{}
	var warnings []fabric.Warning
	for n, line := range strings.Split(string(data), "\n") {
		n++
		if len(line) > maxEnvLine {
			return nil, nil, fmt.Errorf("%s:%d: the line is %d KiB long; a line of an env file is at most %d KiB", file, n, len(line)>>10, maxEnvLine>>10)
		}
		if !utf8.ValidString(line) {
			return nil, nil, fmt.Errorf("%s:%d: the line is not valid UTF-8, which docker's --env-file refuses too; save the file as UTF-8", file, n)
		}
		line = strings.TrimSuffix(line, "\r") // a CRLF file: docker's line scanner drops it too
		line = strings.TrimLeftFunc(line, unicode.IsSpace)
		if line == "" || line[0] == '#' {
			continue
		}
		at := fmt.Sprintf("%s:%d", file, n)
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			warnings = append(warnings, fabric.Warning{Code: CodeEnvFile,
				Message: at + ": \"export \" is a shell's word: docker's --env-file refuses this line (its name would hold a space); nccltune reads it as " + strings.TrimLeft(rest, " \t"),
				Fix:     "drop \"export \" so that docker reads the file too"})
			line = strings.TrimLeft(rest, " \t")
		}
		k, v, hasValue := strings.Cut(line, "=")
		if !hasValue {
			if _, _, err := nccl.ParseKeyValue(k + "="); err != nil || strings.ContainsAny(k, " \t") {
				return nil, nil, fmt.Errorf("%s: %q is neither VAR=VALUE nor a variable name", at, line)
			}
			var ok bool
			if v, ok = os.LookupEnv(k); !ok {
				continue
			}
		} else {
			if _, _, err := nccl.ParseKeyValue(k + "="); err != nil || strings.ContainsAny(k, " \t") {
				return nil, nil, fmt.Errorf("%s: %q is not VAR=VALUE with a variable name before the = (docker's --env-file refuses a name with spaces too)", at, line)
			}
			warnings = append(warnings, envValueWarnings(at, k, v)...)
		}
		if err := checkEnvValue(k, v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", at, err)
		}
		if first, ok := lineOf[k]; ok {
			return nil, nil, fmt.Errorf("%s: %s is set twice (first on line %d); set it once", at, k, first)
		}
		env[k], lineOf[k] = v, n
	}
	return env, warnings, nil
}

// envValueWarnings says where a shell would read an env file's value
// otherwise than docker's --env-file.
func envValueWarnings(at, k, v string) []fabric.Warning {
	var out []fabric.Warning
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		out = append(out, fabric.Warning{Code: CodeEnvFile,
			Message: fmt.Sprintf("%s: %s=%s keeps its quotes: docker's --env-file passes them as part of the value (a shell would drop them), and so does nccltune", at, k, v),
			Fix:     "write the value without quotes, unless NCCL should see them"})
	}
	if i := strings.Index(v, "#"); i > 0 && strings.ContainsAny(v[i-1:i], " \t") {
		out = append(out, fabric.Warning{Code: CodeEnvFile,
			Message: fmt.Sprintf("%s: %s's value %q includes %q: docker's --env-file has no inline comments, so it is part of the value, and so it is for nccltune", at, k, v, v[i:]),
			Fix:     "move the comment to a line of its own"})
	}
	return out
}

// PrintWarnings writes warnings to w, one "warning:" line each with its fix.
func PrintWarnings(w io.Writer, warnings []fabric.Warning) {
	for _, wa := range warnings {
		fmt.Fprintf(w, "warning: %s — %s\n", wa.Message, wa.Fix)
	}
}

// checkEnvValue refuses a NUL byte: it ends the string execve passes, so
// the launch would fail after the study was stored.
func checkEnvValue(k, v string) error {
	if strings.ContainsRune(v, 0) {
		return fmt.Errorf("%s: the value holds a NUL byte, which no environment variable can carry", k)
	}
	return nil
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
			Usage: "`FILE` of K=V lines read before --baseline-env, as docker's --env-file reads it, e.g. the env file a serving lane deploys"},
	}
}

// ReadBaseline reads --baseline-env-file and --baseline-env into a
// config of tunable knobs none of which the base env fixes.
func ReadBaseline(c *cli.Context, base map[string]string) (nccl.Config, error) {
	var all []string
	if file := c.String("baseline-env-file"); file != "" {
		env, warnings, err := readEnvFile("--baseline-env-file", file)
		if err != nil {
			return nil, vocab.UsageError(err)
		}
		PrintWarnings(errWriter(c), warnings)
		for _, k := range slices.Sorted(maps.Keys(env)) {
			all = append(all, k+"="+env[k])
		}
	}
	all = append(all, flagvalue.Items(c, "baseline-env")...)
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

// errWriter is where a command's warnings go: its stderr.
func errWriter(c *cli.Context) io.Writer {
	if c.App != nil && c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}
