package nccl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Config maps knob names to values. A knob that is absent is left to
// NCCL's own choice; the empty Config is "NCCL's defaults".
type Config map[string]string

// Key is the canonical text of the config: "K=V" pairs sorted by name and
// joined by spaces. Equal configs have equal keys; the defaults' key is "".
func (c Config) Key() string { return strings.Join(c.Env(), " ") }

// Env returns the config as sorted "K=V" strings.
func (c Config) Env() []string {
	out := make([]string, 0, len(c))
	for k, v := range c {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// String is Key, or "NCCL defaults" for the empty config.
func (c Config) String() string {
	if k := c.Key(); k != "" {
		return k
	}
	return "NCCL defaults"
}

// Clone returns a copy without unset (empty) values.
func (c Config) Clone() Config {
	out := make(Config, len(c))
	for k, v := range c {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// KnobsOf is the tunable NCCL knobs among env (IsKnob), values as given.
func KnobsOf(env map[string]string) Config {
	out := Config{}
	for k, v := range env {
		if IsKnob(k) {
			out[k] = v
		}
	}
	return out
}

// Names returns the set knob names, sorted.
func (c Config) Names() []string { return slices.Sorted(maps.Keys(c.Clone())) }

// ParseKeyValue splits "K=V". The value may itself hold '=' or ';'.
func ParseKeyValue(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("%q is not KEY=VALUE (e.g. NCCL_PROTO=^LL128)", s)
	}
	if !IsEnvName(k) {
		return "", "", fmt.Errorf("%q: %q is not an environment variable name", s, k)
	}
	return k, v, nil
}

// IsEnvName reports whether s can name an environment variable: letters,
// digits and _, not starting with a digit.
func IsEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// ParseConfig reads "K=V" items into a Config of known knobs, validating
// each value and the combination.
func ParseConfig(items []string) (Config, error) {
	c := Config{}
	for _, it := range items {
		k, v, err := ParseKeyValue(it)
		if err != nil {
			return nil, err
		}
		knob, err := LookupKnob(k)
		if err != nil {
			return nil, err
		}
		if err := knob.Validate(v); err != nil {
			return nil, err
		}
		if v != "" {
			c[knob.Name] = v
		}
	}
	return c, c.Validate()
}

// The tuner plugin's variables are not knobs, but a config that verify or
// compare measures may carry them.
const (
	TunerPluginVar = "NCCL_TUNER_PLUGIN"
	TunerConfigVar = "NCCL_TUNER_CONFIG_FILE"
)

// TunerConfig is the config that runs the tuner plugin at plugin with the
// CSV at csv, and nothing else.
func TunerConfig(plugin, csv string) Config {
	return Config{TunerPluginVar: plugin, TunerConfigVar: csv}
}

// Validate checks each value and the rules that tie knobs together.
func (c Config) Validate() error {
	for _, name := range c.Names() {
		if name == TunerPluginVar || name == TunerConfigVar {
			continue // a path; NCCL reports one it cannot open
		}
		knob, err := LookupKnob(name)
		if err != nil {
			return err
		}
		if err := knob.Validate(c[name]); err != nil {
			return err
		}
	}
	if err := cmp.Or(orderedPair(c, "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"),
		orderedPair(c, "NCCL_MIN_CTAS", "NCCL_MAX_CTAS")); err != nil {
		return err
	}
	if t, s := c.Int("NCCL_SOCKET_NTHREADS", 0), c.Int("NCCL_NSOCKS_PERTHREAD", 0); t > 0 && s > 0 && t*s > 64 {
		return fmt.Errorf("NCCL_SOCKET_NTHREADS=%d × NCCL_NSOCKS_PERTHREAD=%d = %d sockets; NCCL allows at most 64", t, s, t*s)
	}
	return nil
}

func orderedPair(c Config, minName, maxName string) error {
	lo, hi := c.Int(minName, 0), c.Int(maxName, 0)
	if lo > 0 && hi > 0 && lo > hi {
		return fmt.Errorf("%s=%d is larger than %s=%d", minName, lo, maxName, hi)
	}
	return nil
}

// Int returns the knob's value as an integer, or def when unset or not a number.
func (c Config) Int(name string, def int) int {
	n, err := strconv.Atoi(c[name])
	if err != nil {
		return def
	}
	return n
}

// Canonical returns the simplest config that NCCL treats the same way:
// without values equal to NCCL's defaults, and of a CapPair both set only
// the one that binds. Configs with the same canonical key are one trial.
func (c Config) Canonical() Config {
	out := c.Clone()
	for k, v := range out {
		if IsDefault(k, v) {
			delete(out, k)
		}
	}
	for _, p := range CapPairs {
		if _, loose, ok := p.Binding(out); ok {
			delete(out, loose)
		}
	}
	return out
}
