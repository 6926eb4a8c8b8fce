package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/nccl"
)

// Typed flag values: sizes, bands and K=V lists are parsed as urfave/cli
// sets them (from the command line, or from --config through c.Set), so a
// bad value is refused, as a usage error, before any command runs, and
// the commands read parsed values. A value keeps the error its Set
// returned: urfave/cli (through package flag) reports a refused value in
// its own words, and flagValueError gives back nccltune's.

// sizeValue is one message size (--min, --max).
type sizeValue struct {
	flag  string
	text  string
	bytes int64
	err   error
}

func (v *sizeValue) String() string { return v.text }

func (v *sizeValue) Set(s string) error {
	n, err := nccl.ParseSize(s)
	if err != nil {
		return v.fail(usageError(fmt.Errorf("--%s: %w", v.flag, err)))
	}
	v.text, v.bytes = s, n
	return nil
}

func (v *sizeValue) fail(err error) error { v.err = err; return err }
func (v *sizeValue) setError() error      { return v.err }

// sizeFlag is a size flag whose default is def (help shows it quoted, as
// for a string flag).
func sizeFlag(name, def, usage string) *cli.GenericFlag {
	v := &sizeValue{flag: name}
	if err := v.Set(def); err != nil {
		panic(fmt.Sprintf("flag --%s: default %q: %v", name, def, err)) // a programming error
	}
	return &cli.GenericFlag{Name: name, Value: v, Usage: usage, DefaultText: fmt.Sprintf("%q", def)}
}

// bandValue is --band: message sizes, inclusive.
type bandValue struct {
	text string
	band nccl.Band
	err  error
}

func (v *bandValue) String() string { return v.text }

func (v *bandValue) Set(s string) error {
	b, err := nccl.ParseBand(s)
	if err != nil {
		return v.fail(usageError(fmt.Errorf("--band: %w", err)))
	}
	v.text, v.band = s, b
	return nil
}

func (v *bandValue) fail(err error) error { v.err = err; return err }
func (v *bandValue) setError() error      { return v.err }

func bandFlag(usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: "band", Value: &bandValue{}, Usage: usage}
}

// band is --band as parsed, and whether it was given.
func band(c *cli.Context) (nccl.Band, bool) {
	v := c.Generic("band").(*bandValue)
	return v.band, v.text != ""
}

// guardValue is search's --guard: sizes, or "none" for none.
type guardValue struct {
	items []string
	sizes []int64
	err   error
}

func (v *guardValue) String() string { return strings.Join(v.items, ",") }

func (v *guardValue) Set(s string) error {
	s = strings.TrimSpace(s)
	v.items = append(v.items, s)
	if strings.EqualFold(s, "none") {
		return nil
	}
	size, err := nccl.ParseSize(s)
	if err != nil {
		return v.fail(usageError(fmt.Errorf("--guard: %w", err)))
	}
	if err := checkElementSize("guard", size); err != nil {
		return v.fail(err)
	}
	v.sizes = append(v.sizes, size)
	return nil
}

func (v *guardValue) fail(err error) error { v.err = err; return err }
func (v *guardValue) setError() error      { return v.err }

// thresholdsValue is gate's --at SIZE:GBPS, one threshold per size, each
// checked as fabric.ParseThresholds checks it (which then also refuses
// none).
type thresholdsValue struct {
	items []string
	err   error
}

func (v *thresholdsValue) String() string { return strings.Join(v.items, ",") }

func (v *thresholdsValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if _, err := fabric.ParseThresholds(append(append([]string{}, v.items...), s)); err != nil {
		return v.fail(usageError(fmt.Errorf("--at: %w", err)))
	}
	v.items = append(v.items, s)
	return nil
}

func (v *thresholdsValue) fail(err error) error { v.err = err; return err }
func (v *thresholdsValue) setError() error      { return v.err }

// kvValue is a repeatable K=V flag (--env, --base-env, --label…): each
// item is trimmed (unless keepSpace: values passed verbatim), refused if
// its key was given before, and checked by check.
type kvValue struct {
	flag      string
	keepSpace bool
	// check refuses a bad item with the flag's own message.
	check func(item string) error
	// repeated is the message for a key given twice; nil: "K is given
	// twice to --FLAG (…); give it once".
	repeated func(key, prev, item string) error
	items    []string
	seen     map[string]string
	err      error
}

func (v *kvValue) String() string { return strings.Join(v.items, ",") }

func (v *kvValue) Set(s string) error {
	if !v.keepSpace {
		s = strings.TrimSpace(s)
	}
	k, _, _ := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if prev, ok := v.seen[k]; ok {
		if v.repeated != nil {
			return v.fail(v.repeated(k, prev, s))
		}
		return v.fail(usageErrorf("%s is given twice to --%s (%q and %q); give it once", k, v.flag, prev, s))
	}
	if v.check != nil {
		if err := v.check(s); err != nil {
			return v.fail(err)
		}
	}
	if v.seen == nil {
		v.seen = map[string]string{}
	}
	v.seen[k] = s
	v.items = append(v.items, s)
	return nil
}

func (v *kvValue) fail(err error) error { v.err = err; return err }
func (v *kvValue) setError() error      { return v.err }

// listFlag is a repeatable typed flag: help shows it as one ("--env K=V
// [ --env K=V ]") and a study config gives it a list or a map.
type listFlag struct{ cli.GenericFlag }

func (f *listFlag) IsSliceFlag() bool { return true }

// String is the help line; GenericFlag's own would see only itself.
func (f *listFlag) String() string { return cli.FlagStringer(f) }

// kvFlag is a repeatable K=V flag checked item by item with check.
func kvFlag(name, usage string, check func(string) error) *listFlag {
	return &listFlag{cli.GenericFlag{Name: name, Usage: usage, Value: &kvValue{flag: name, check: check}}}
}

// kvItems are the K=V items given to the flag name, in order.
func kvItems(c *cli.Context, name string) []string {
	return c.Generic(name).(*kvValue).items
}

// knobItem checks one K=V item of a flag that takes NCCL knobs (--env,
// --env-a, --env-b), as nccl.ParseConfig checks each item.
func knobItem(flag string) func(string) error {
	return func(item string) error {
		if _, err := nccl.ParseConfig([]string{item}); err != nil {
			return usageError(fmt.Errorf("--%s: %w", flag, err))
		}
		return nil
	}
}

// envItem checks one K=V item of a flag that takes any environment
// variable (--base-env).
func envItem(flag string) func(string) error {
	return func(item string) error {
		if _, _, err := nccl.ParseKeyValue(item); err != nil {
			return usageError(fmt.Errorf("--%s: %w", flag, err))
		}
		return nil
	}
}

// flagValueError is the error a typed value refused with, in nccltune's
// words, or nil when no typed flag of flags refused one.
func flagValueError(flags []cli.Flag) error {
	for _, f := range flags {
		var v any
		switch f := f.(type) {
		case *cli.GenericFlag:
			v = f.Value
		case *listFlag:
			v = f.Value
		}
		if r, ok := v.(interface{ setError() error }); ok && r.setError() != nil {
			return r.setError()
		}
	}
	return nil
}
