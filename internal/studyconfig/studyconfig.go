// Package studyconfig reads a study config file (--config FILE): a
// command's flags as YAML keys, set before the command reads its flags.
// Its refusals are usage errors (vocab.ErrUsage).
package studyconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/vocab"
)

// A study config file holds a command's flags, so that a lane's tuning
// (band, budget, seed, space, launch flags, base env, baseline env…) is
// one file under version control:
//
//	band: 512K-4M
//	budget: 80
//	space: [NCCL_NTHREADS, "NCCL_MAX_NCHANNELS=unset,2,4,8"]
//	base-env:
//	  NCCL_IB_HCA: "=rocep1s0f1"
//
// Each key is a flag's name without the dashes. A scalar is the flag's
// value as it would be typed; a list repeats a repeatable flag; a map
// (for the K=V flags) gives one K=V per entry. A flag given on the
// command line wins over the file's key, whole: a repeatable flag on the
// command line replaces the file's list rather than adding to it.

// configFlagName is the flag naming the file.
const configFlagName = "config"

// With adds --config FILE to cmd: the file's keys are set as the
// command's flags before its action reads them. fixed, when not nil,
// names the keys that a run takes from elsewhere (a resumed study's own
// settings): the file may name them, and they are left as they are.
func With(cmd *cli.Command, fixed func(c *cli.Context) map[string]bool) *cli.Command {
	cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: configFlagName, TakesFile: true,
		Usage: "study config `FILE` (YAML): the command's flags as keys without the dashes (band: 512K-4M, budget: 80, base-env: {K: V} …); flags on the command line win"})
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if err := apply(c, fixed); err != nil {
			return err
		}
		return action(c)
	}
	return cmd
}

// apply reads --config and sets every key the command line did not set.
// Unknown keys and values a flag refuses are usage errors.
func apply(c *cli.Context, fixed func(c *cli.Context) map[string]bool) error {
	path := c.String(configFlagName)
	if path == "" {
		return nil
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	data, err := input.Load(ctx, path, input.MaxBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return vocab.UsageErrorf("--config %s: no such file; give the path of a study config (YAML, keys are the flags of nccltune %s)", path, c.Command.Name)
		}
		return vocab.UsageErrorf("--config %s: cannot read it: %v", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, second yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return vocab.UsageErrorf("--config %s is not valid YAML: %v", path, err)
	}
	// One document: a second (after ---) would be silently ignored.
	if err := dec.Decode(&second); err != io.EOF {
		if err != nil {
			return vocab.UsageErrorf("--config %s is not valid YAML: %v", path, err)
		}
		return vocab.UsageErrorf("--config %s: line %d: a second YAML document (after ---); a study config is one document — merge them, or keep one per file", path, second.Line)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return vocab.UsageErrorf("--config %s: line %d: the file must be a map of flag names to values (band: 512K-4M)", path, top.Line)
	}
	flags := configurableFlags(c.Command)
	var skip map[string]bool
	if fixed != nil {
		skip = fixed(c)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		key := k.Value
		where := fmt.Sprintf("--config %s: line %d", path, k.Line)
		f, ok := flags[key]
		if !ok {
			return vocab.UsageErrorf("%s: unknown key %q%s (the keys are the flags of nccltune %s without the dashes; see nccltune %s --help)",
				where, key, nearestKey(key, flags), c.Command.Name, c.Command.Name)
		}
		if seen[key] {
			return vocab.UsageErrorf("%s: %s is given twice; give it once", where, key)
		}
		seen[key] = true
		if c.IsSet(key) || skip[key] {
			continue // the command line (or, say, the resumed study) decides
		}
		values, err := configValues(v, Repeatable(f))
		if err != nil {
			return vocab.UsageErrorf("%s: %s: %v", where, key, err)
		}
		for _, val := range values {
			if err := c.Set(key, val); err != nil {
				if errors.Is(err, vocab.ErrUsage) {
					return vocab.UsageErrorf("%s: %v", where, err) // a typed value's own words
				}
				return vocab.UsageErrorf("%s: %s: %q is not a valid value: %v", where, key, val, err)
			}
		}
	}
	return nil
}

// configurableFlags are the command's flags a file may set, by name (the
// file cannot name another config, and help is not a setting).
func configurableFlags(cmd *cli.Command) map[string]cli.Flag {
	out := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != configFlagName && n != "help" && n != "h" && len(n) > 1 {
				out[n] = f
			}
		}
	}
	return out
}

// Repeatable reports the flags that take a list: urfave/cli's slice
// flags, and any flag that says it is one as they do (IsSliceFlag).
func Repeatable(f cli.Flag) bool {
	s, ok := f.(interface{ IsSliceFlag() bool })
	return ok && s.IsSliceFlag()
}

// configValues turns a key's YAML value into the flag values it stands
// for: one for a scalar, one per item of a list, K=V per map entry.
func configValues(v *yaml.Node, repeatable bool) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, errors.New("no value; give one or leave the key out")
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		if !repeatable {
			return nil, errors.New("takes one value, not a list")
		}
		var out []string
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: each item must be one value", item.Line)
			}
			out = append(out, item.Value)
		}
		return out, nil
	case yaml.MappingNode:
		if !repeatable {
			return nil, errors.New("takes one value, not a map")
		}
		var out []string
		for i := 0; i+1 < len(v.Content); i += 2 {
			name, val := v.Content[i], v.Content[i+1]
			if val.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: %s must map to one value", name.Line, name.Value)
			}
			out = append(out, name.Value+"="+val.Value)
		}
		return out, nil
	}
	return nil, errors.New("aliases are not supported; write the value")
}

// nearestKey is "; did you mean X?" for the valid key closest to key.
func nearestKey(key string, flags map[string]cli.Flag) string {
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names) // ties go to the first name, whatever map order
	best, bestD := "", -1
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimLeft(key, "-"), "_", "-"))
	for _, n := range names {
		if d := nccl.EditDistance(norm, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "; the nearest valid key is " + best
}
