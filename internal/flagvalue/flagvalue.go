// Package flagvalue holds typed urfave/cli v2 flag values for what
// nccltune's commands take: message sizes, bands, gate thresholds and
// K=V lists, each refused as it is set, as a usage error in nccltune's own
// words. Package flag rewords a refused value, so each value keeps its
// error and Refused gives it back to the app's OnUsageError.
package flagvalue

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// MinElementBytes is the smallest message a collective can move: one
// float (nccl-tests rounds smaller sizes to zero elements).
const MinElementBytes = 4

// CheckElementSize refuses a size below one element given to --flag.
func CheckElementSize(flag string, bytes int64) error {
	if bytes < MinElementBytes {
		return vocab.UsageErrorf("--%s: %d bytes is below one element (%d bytes, a float); nccl-tests cannot measure it — use %d or more", flag, bytes, MinElementBytes, MinElementBytes)
	}
	return nil
}

// refusal is what every value keeps: the error of its last refused Set.
type refusal struct{ err error }

func (r *refusal) fail(err error) error { r.err = err; return err }
func (r *refusal) refused() error       { return r.err }

// listed is what every list value keeps: the items given, in order.
type listed struct {
	refusal
	given []string
}

func (l *listed) String() string  { return strings.Join(l.given, ",") }
func (l *listed) items() []string { return l.given }

// Refused is the error a typed value among flags refused with, in
// nccltune's words, or nil when none refused one.
func Refused(flags []cli.Flag) error {
	for _, f := range flags {
		var v any
		switch f := f.(type) {
		case *cli.GenericFlag:
			v = f.Value
		case *List:
			v = f.Value
		}
		if r, ok := v.(interface{ refused() error }); ok && r.refused() != nil {
			return r.refused()
		}
	}
	return nil
}

// List is a repeatable typed flag: help shows it as one ("--env K=V
// [ --env K=V ]") and a study config gives it a list or a map.
type List struct{ cli.GenericFlag }

// IsSliceFlag says that the flag repeats, as urfave/cli's slice flags do.
func (f *List) IsSliceFlag() bool { return true }

// String is the help line; GenericFlag's own would see only itself.
func (f *List) String() string { return cli.FlagStringer(f) }

// Items are the items given to the list flag name, in order.
func Items(c *cli.Context, name string) []string {
	return c.Generic(name).(interface{ items() []string }).items()
}

// parsed is one value read by parse: a message size (--min, --max) or a
// band (--band).
type parsed[T any] struct {
	refusal
	flag  string
	parse func(string) (T, error)
	text  string
	value T
}

func (v *parsed[T]) String() string { return v.text }

func (v *parsed[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return v.fail(vocab.UsageError(fmt.Errorf("--%s: %w", v.flag, err)))
	}
	v.text, v.value = s, x
	return nil
}

// Size is a size flag whose default is def (help shows it quoted, as for
// a string flag).
func Size(name, def, usage string) *cli.GenericFlag {
	v := &parsed[int64]{flag: name, parse: nccl.ParseSize}
	if err := v.Set(def); err != nil {
		panic(fmt.Sprintf("flag --%s: default %q: %v", name, def, err)) // a programming error
	}
	return &cli.GenericFlag{Name: name, Value: v, Usage: usage, DefaultText: fmt.Sprintf("%q", def)}
}

// SizeOf is the size flag name in bytes.
func SizeOf(c *cli.Context, name string) int64 { return c.Generic(name).(*parsed[int64]).value }

// SizeRange reads --min and --max: at least one element, min ≤ max.
func SizeRange(c *cli.Context) (min, max int64, err error) {
	min, max = SizeOf(c, "min"), SizeOf(c, "max")
	if err := CheckElementSize("min", min); err != nil {
		return 0, 0, err
	}
	if err := (nccl.Band{Min: min, Max: max}).Validate(); err != nil {
		return 0, 0, vocab.UsageError(fmt.Errorf("--min/--max: %w", err))
	}
	return min, max, nil
}

// Band is --band: message sizes, inclusive.
func Band(usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: "band", Value: &parsed[nccl.Band]{flag: "band", parse: nccl.ParseBand}, Usage: usage}
}

// BandOf is --band as parsed, and whether it was given.
func BandOf(c *cli.Context) (nccl.Band, bool) {
	v := c.Generic("band").(*parsed[nccl.Band])
	return v.value, v.text != ""
}

// Guard is search's --guard: sizes of at least one element, or "none"
// for none (read as 0).
func Guard(usage string) *List {
	return &List{cli.GenericFlag{Name: "guard", Usage: usage, Value: &listOf[int64]{parse: func(s string, _ []int64) (int64, error) {
		if strings.EqualFold(s, "none") {
			return 0, nil
		}
		size, err := nccl.ParseSize(s)
		if err != nil {
			return 0, vocab.UsageError(fmt.Errorf("--guard: %w", err))
		}
		if err := CheckElementSize("guard", size); err != nil {
			return 0, err
		}
		if err := nccl.CheckPowerOfTwo(size); err != nil {
			return 0, vocab.UsageErrorf("--guard %s: %w", s, err)
		}
		return size, nil
	}}}}
}

// GuardOf is --guard's sizes (none for "none"), and whether it was given.
func GuardOf(c *cli.Context) ([]int64, bool) {
	v := c.Generic("guard").(*listOf[int64])
	var sizes []int64
	for _, n := range v.vals {
		if n > 0 {
			sizes = append(sizes, n)
		}
	}
	return sizes, len(v.given) > 0
}

// listOf is a list flag's value: each item trimmed and read by parse,
// which sees the values before it.
type listOf[T any] struct {
	listed
	parse func(item string, prev []T) (T, error)
	vals  []T
}

func (v *listOf[T]) Set(s string) error {
	s = strings.TrimSpace(s)
	x, err := v.parse(s, v.vals)
	if err != nil {
		return v.fail(err)
	}
	v.given, v.vals = append(v.given, s), append(v.vals, x)
	return nil
}

// parts is a workload flag's value: one part per item, read by parse,
// each band's smallest size at least one element.
func parts(flag string, parse func(string) (nccl.Part, error)) *listOf[nccl.Part] {
	return &listOf[nccl.Part]{parse: func(s string, _ []nccl.Part) (nccl.Part, error) {
		p, err := parse(s)
		if err != nil {
			return p, vocab.UsageError(fmt.Errorf("--%s: %w", flag, err))
		}
		return p, CheckElementSize(flag, p.Band.Min)
	}}
}

// Parts is search's --part OP:BAND[:WEIGHT] (nccl.ParsePart).
func Parts(usage string) *List {
	return &List{cli.GenericFlag{Name: "part", Value: parts("part", nccl.ParsePart), Usage: usage}}
}

// PartsOf is --part's workload, in the order given (nil when not given).
func PartsOf(c *cli.Context) nccl.Workload {
	return c.Generic("part").(*listOf[nccl.Part]).vals
}

// Calls is search's --calls OP:BYTES:CALLS (nccl.ParseCall), one call of
// the timed workload per item (the config file's calls: list).
func Calls(usage string) *List {
	return &List{cli.GenericFlag{Name: "calls", Value: parts("calls", nccl.ParseCall), Usage: usage}}
}

// CallsOf is --calls' timed workload, calls of one op on one power of two
// merged (nccl.MergeCalls); nil when not given.
func CallsOf(c *cli.Context) nccl.Workload {
	v := c.Generic("calls").(*listOf[nccl.Part])
	if len(v.vals) == 0 {
		return nil
	}
	return nccl.MergeCalls(v.vals)
}

// Chose is search's --chose OP:BYTES:ALGO:PROTO (the config's chose:):
// what the process's own NCCL chose, once per (op, size) it calls.
func Chose(usage string) *List {
	return &List{cli.GenericFlag{Name: "chose", Usage: usage, Value: &listOf[nccl.LoggedChoice]{
		parse: func(s string, prev []nccl.LoggedChoice) (nccl.LoggedChoice, error) {
			ch, err := nccl.ParseLoggedChoice(s)
			if err != nil {
				return ch, vocab.UsageError(fmt.Errorf("--chose: %w", err))
			}
			if slices.ContainsFunc(prev, func(c nccl.LoggedChoice) bool { return c.Op == ch.Op && c.Bytes == ch.Bytes }) {
				return ch, vocab.UsageErrorf("--chose %s: %s at %d bytes is given twice; give one choice per op and size", s, ch.Op, ch.Bytes)
			}
			return ch, nil
		}}}}
}

// ChoseOf is --chose's choices, in the order given (nil when not given).
func ChoseOf(c *cli.Context) []nccl.LoggedChoice {
	return c.Generic("chose").(*listOf[nccl.LoggedChoice]).vals
}

// Thresholds is gate's --at SIZE:GBPS, each item checked with the ones
// before it as fabric.ParseThresholds checks them.
func Thresholds(usage string) *List {
	return &List{cli.GenericFlag{Name: "at", Usage: usage, Value: &listOf[string]{parse: func(s string, prev []string) (string, error) {
		if _, err := fabric.ParseThresholds(append(slices.Clone(prev), s)); err != nil {
			return s, vocab.UsageError(fmt.Errorf("--at: %w", err))
		}
		return s, nil
	}}}}
}

// KV is a repeatable K=V flag's value (--env, --base-env, --label…): each
// item is trimmed (unless KeepSpace: values passed verbatim), refused if
// its key was given before, and checked by Check.
type KV struct {
	listed
	Flag      string
	KeepSpace bool
	// Check refuses a bad item with the flag's own message.
	Check func(item string) error
	// Repeated is the message for a key given twice (nil: the default's).
	Repeated func(key, prev, item string) error
	seen     map[string]string
}

func (v *KV) Set(s string) error {
	if !v.KeepSpace {
		s = strings.TrimSpace(s)
	}
	k, _, _ := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if prev, ok := v.seen[k]; ok {
		if v.Repeated != nil {
			return v.fail(v.Repeated(k, prev, s))
		}
		return v.fail(vocab.UsageErrorf("%s is given twice to --%s (%q and %q); give it once", k, v.Flag, prev, s))
	}
	if v.Check != nil {
		if err := v.Check(s); err != nil {
			return v.fail(err)
		}
	}
	if v.seen == nil {
		v.seen = map[string]string{}
	}
	v.seen[k] = s
	v.given = append(v.given, s)
	return nil
}

// KVFlag is a repeatable K=V flag checked item by item with check.
func KVFlag(name, usage string, check func(string) error) *List {
	return &List{cli.GenericFlag{Name: name, Usage: usage, Value: &KV{Flag: name, Check: check}}}
}

// KnobItem checks one K=V item of a flag that takes NCCL knobs (--env,
// --env-a, --env-b), as nccl.ParseConfig checks each item.
func KnobItem(flag string) func(string) error {
	return func(item string) error {
		if _, err := nccl.ParseConfig([]string{item}); err != nil {
			return vocab.UsageError(fmt.Errorf("--%s: %w", flag, err))
		}
		return nil
	}
}

// EnvItem checks one K=V item of a flag that takes any environment
// variable (--base-env).
func EnvItem(flag string) func(string) error {
	return func(item string) error {
		if _, _, err := nccl.ParseKeyValue(item); err != nil {
			return vocab.UsageError(fmt.Errorf("--%s: %w", flag, err))
		}
		return nil
	}
}

// RecordedEnvItem checks one K=V item of import's --env: any environment
// variable, NCCL knobs with valid values.
func RecordedEnvItem(flag string) func(string) error {
	return func(item string) error {
		k, v, err := nccl.ParseKeyValue(item)
		if err != nil {
			return vocab.UsageError(fmt.Errorf("--%s %w", flag, err))
		}
		if nccl.IsKnob(k) {
			knob, _ := nccl.LookupKnob(k)
			if err := knob.Validate(v); err != nil {
				return vocab.UsageError(fmt.Errorf("--%s %s: %w", flag, item, err))
			}
		}
		return nil
	}
}

// EnvOf is the K=V flag name's items (each checked as it was set) as a
// config; an item with an empty value sets nothing.
func EnvOf(c *cli.Context, name string) nccl.Config {
	cfg := nccl.Config{}
	for _, it := range Items(c, name) {
		k, v, _ := nccl.ParseKeyValue(it)
		if v != "" {
			cfg[k] = v
		}
	}
	return cfg
}
