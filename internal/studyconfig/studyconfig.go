// Package studyconfig reads a study config file (--config FILE): a
// command's flags as YAML keys, set before the command reads its flags.
// Its refusals are usage errors (vocab.ErrUsage).
package studyconfig

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/internal/cliargs"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Each key of a study config is a flag's name without the dashes. A
// scalar is the flag's value as it would be typed; a list repeats a
// repeatable flag; a map gives one K=V per entry. A flag on the command
// line wins over the file's key, whole. Aliases and tags are refused.

// configFlagName is the flag naming the file.
const configFlagName = "config"

// With adds --config FILE to cmd: the file's keys are set as the
// command's flags before its action reads them. fixed, when not nil,
// names the keys that a run takes from elsewhere: they are left as they are.
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
func apply(c *cli.Context, fixed func(c *cli.Context) map[string]bool) error {
	path := c.String(configFlagName)
	if path == "" {
		return nil
	}
	data, err := input.Load(cmp.Or(c.Context, context.Background()), path, input.MaxBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return vocab.UsageErrorf("--config %s: no such file; give the path of a study config (YAML, keys are the flags of nccltune %s)", path, c.Command.Name)
		}
		return vocab.UsageErrorf("--config %s: cannot read it: %v", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, second yaml.Node
	if err = dec.Decode(&doc); err == nil {
		if err = dec.Decode(&second); err == nil {
			return vocab.UsageErrorf("--config %s: line %d: a second YAML document (after ---); a study config is one document — merge them, or keep one per file", path, second.Line)
		}
	}
	if err != nil && err != io.EOF {
		return vocab.UsageErrorf("--config %s is not valid YAML: %v", path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return vocab.UsageErrorf("--config %s: line %d: the file must be a map of flag names to values (band: 512K-4M)", path, top.Line)
	}
	generated, err := checkGenerated(path, top)
	if err != nil {
		return err
	}
	flags := configurableFlags(c.Command)
	var skip map[string]bool
	if fixed != nil {
		skip = fixed(c)
	}
	// When the command line gives the workload, the file's keys of it are left out.
	cliWorkload := slices.ContainsFunc(workloadKeys, c.IsSet)
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		where := fmt.Sprintf("--config %s: line %d", path, k.Line)
		key, err := keyName(k)
		if err != nil {
			return vocab.UsageErrorf("%s: %v", where, err)
		}
		if seen[key] {
			return vocab.UsageErrorf("%s: %s is given twice; give it once", where, key)
		}
		seen[key] = true
		if generated && key == vocab.GeneratedKey {
			continue // the mark is data, not a flag
		}
		f, ok := flags[key]
		if !ok {
			return vocab.UsageErrorf("%s: unknown key %q%s (the keys are the flags of nccltune %s without the dashes; see nccltune %s --help)",
				where, key, nearestKey(key, flags), c.Command.Name, c.Command.Name)
		}
		if c.IsSet(key) || skip[key] || cliWorkload && slices.Contains(workloadKeys, key) {
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

// workloadKeys say one thing together: the workload.
var workloadKeys = []string{"band", "op", "part", "calls", "chose"}

// generatedKeys are the keys a file written by nccltune workload may
// hold: the workload (calls, chose) and part, which files written before
// issue 40 hold; nothing that decides what runs or how.
var generatedKeys = map[string]bool{"calls": true, "part": true, "chose": true}

// checkGenerated reports whether the file carries the mark of one written
// by nccltune workload, and refuses every key such a file may not hold:
// its header quotes a log, whose text must never choose what runs.
func checkGenerated(path string, top *yaml.Node) (bool, error) {
	mark := -1
	for i := 0; i+1 < len(top.Content); i += 2 {
		if k := top.Content[i]; k.Kind == yaml.ScalarNode && k.Value == vocab.GeneratedKey {
			mark = i
			break
		}
	}
	if mark < 0 {
		return false, nil
	}
	if v := top.Content[mark+1]; v.Kind != yaml.ScalarNode || v.Value != vocab.GeneratedWorkload {
		return false, vocab.UsageErrorf("--config %s: line %d: %s must be %q (the mark nccltune workload writes); remove the key from a config you wrote yourself",
			path, v.Line, vocab.GeneratedKey, vocab.GeneratedWorkload)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Kind == yaml.ScalarNode && (k.Value == vocab.GeneratedKey || generatedKeys[k.Value]) {
			continue // a second mark is refused as any key given twice
		}
		return true, vocab.UsageErrorf("--config %s: line %d: %q: this file was generated by nccltune workload from a log and may only hold the workload (part), or its calls (calls) and the log's choices (chose); "+
			"give launch settings such as --%s on the command line, or write your own config without the %s: line",
			path, k.Line, k.Value, k.Value, vocab.GeneratedKey)
	}
	return true, nil
}

// keyName is a key's flag name: a plain name, since an alias's or tagged
// key's Value is not the text other YAML readers see.
func keyName(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
		return "", errors.New("a key must be a flag's name as plain text, not an alias (*name), a tagged value or a list")
	}
	return k.Value, nil
}

// configurableFlags are the command's flags a file may set, by name.
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

// Repeatable reports the flags that take a list (IsSliceFlag).
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
		val, err := scalarValue(v)
		if err != nil {
			return nil, err
		}
		return []string{val}, nil
	case yaml.SequenceNode:
		if !repeatable {
			return nil, errors.New("takes one value, not a list")
		}
		var out []string
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: each item must be one value", item.Line)
			}
			val, err := scalarValue(item)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", item.Line, err)
			}
			out = append(out, val)
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
			k, err := scalarValue(name)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", name.Line, err)
			}
			s, err := scalarValue(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", name.Line, k, err)
			}
			out = append(out, k+"="+s)
		}
		return out, nil
	}
	return nil, errors.New("aliases are not supported; write the value")
}

// scalarValue is a scalar's text as a flag takes it. An alias and an
// explicit tag other than YAML's plain types are refused: the value would
// not be what the file shows.
func scalarValue(n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode {
		return "", errors.New("aliases are not supported; write the value")
	}
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("must be one value")
	}
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.Tag {
		case "!!str", "!!int", "!!float", "!!bool":
		default:
			return "", fmt.Errorf("the YAML tag %s is not supported; write the value as it would be typed", n.Tag)
		}
	}
	return n.Value, nil
}

// nearestKey is "; did you mean X?" for the valid key closest to key.
func nearestKey(key string, flags map[string]cli.Flag) string {
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimLeft(key, "-"), "_", "-"))
	// Sorted: ties go to the first name, whatever map order.
	if best := cliargs.Nearest(norm, slices.Sorted(maps.Keys(flags)), math.MaxInt); best != "" {
		return "; the nearest valid key is " + best
	}
	return ""
}
