package nccl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Knob is one NCCL environment variable that nccltune can search.
type Knob struct {
	Name string
	// InDefaultSpace marks the knobs searched when the user names none.
	InDefaultSpace bool
	// Choices are the values searched by default, starting with "" (unset).
	Choices []string
	// Default is NCCL's documented value when unset ("" when it has none
	// or it depends on the platform): setting it equals unset (IsDefault).
	Default string
	check   func(string) error
}

// Validate reports why value is not a valid setting of the knob.
func (k Knob) Validate(value string) error {
	if value == "" {
		return nil
	}
	if err := k.check(value); err != nil {
		return fmt.Errorf("%s=%s: %w", k.Name, value, err)
	}
	return nil
}

var protocols = []string{"LL", "LL128", "Simple"}

var algorithms = []string{"Ring", "Tree", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"}

func pow2Choices(lo, hi int) []string {
	out := []string{""}
	for v := lo; v <= hi; v *= 2 {
		out = append(out, strconv.Itoa(v))
	}
	return out
}

// Knobs lists every knob nccltune knows, default-space knobs first.
var Knobs = []Knob{
	{Name: "NCCL_PROTO", InDefaultSpace: true,
		Choices: []string{"", "Simple", "LL", "LL128", "^LL128", "^LL"},
		check:   func(v string) error { return checkNameList(v, protocols) }},
	{Name: "NCCL_ALGO", InDefaultSpace: true,
		Choices: []string{"", "Ring", "Tree"},
		check:   func(v string) error { return checkNameList(v, algorithms) }},
	{Name: "NCCL_MAX_NCHANNELS", InDefaultSpace: true,
		Choices: pow2Choices(1, 64),
		check:   intRange(1, 64)},
	{Name: "NCCL_MAX_CTAS", InDefaultSpace: true,
		Choices: pow2Choices(1, 64),
		// 1..64 since NCCL 2.25, 1..32 before.
		check: intRange(1, 64)},
	{Name: "NCCL_CROSS_NIC", InDefaultSpace: true,
		// 0 keeps each ring on one NIC, 1 crosses, 2 (the default) if better.
		Choices: []string{"", "0", "1"},
		Default: "2",
		check:   intRange(0, 2)},
	{Name: "NCCL_MIN_NCHANNELS",
		Choices: pow2Choices(1, 32),
		check:   intRange(1, 64)},
	{Name: "NCCL_MIN_CTAS",
		Choices: pow2Choices(1, 32),
		check:   intRange(1, 64)},
	{Name: "NCCL_NTHREADS",
		Choices: []string{"", "64", "128", "256", "512"},
		check:   oneOf("64", "128", "256", "512")},
	{Name: "NCCL_BUFFSIZE",
		// 4194304, NCCL's default, is the same as unset: not searched twice.
		Choices: []string{"", "1048576", "2097152", "8388608", "16777216"},
		Default: "4194304",
		check:   checkBuffSize},
	{Name: "NCCL_SOCKET_NTHREADS",
		Choices: pow2Choices(1, 16),
		check:   intRange(1, 16)},
	{Name: "NCCL_NSOCKS_PERTHREAD",
		Choices: pow2Choices(1, 8),
		check:   intRange(1, 64)},
	{Name: "NCCL_IB_QPS_PER_CONNECTION",
		Choices: pow2Choices(1, 8),
		check:   intRange(1, 128)},
}

// LookupKnob finds a knob by name, case-insensitively and with or without
// the NCCL_ prefix. An unknown name gets an error naming the nearest knob.
func LookupKnob(name string) (Knob, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "NCCL_") {
		n = "NCCL_" + n
	}
	for _, k := range Knobs {
		if k.Name == n {
			return k, nil
		}
	}
	names := KnobNames()
	if near := Nearest(n, names); near != "" {
		return Knob{}, fmt.Errorf("unknown knob %q; did you mean %s? (known: %s)", name, near, strings.Join(names, ", "))
	}
	return Knob{}, fmt.Errorf("unknown knob %q (known: %s)", name, strings.Join(names, ", "))
}

// KnobNames lists the names of all knobs in Knobs order.
func KnobNames() []string {
	out := make([]string, len(Knobs))
	for i, k := range Knobs {
		out[i] = k.Name
	}
	return out
}

// DefaultSpaceKnobs lists the knobs searched when the user names none.
func DefaultSpaceKnobs() []Knob {
	var out []Knob
	for _, k := range Knobs {
		if k.InDefaultSpace {
			out = append(out, k)
		}
	}
	return out
}

// IsKnob reports whether name is a searchable knob.
func IsKnob(name string) bool {
	return slices.ContainsFunc(Knobs, func(k Knob) bool { return k.Name == name })
}

func intRange(lo, hi int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want an integer from %d to %d", lo, hi)
		}
		return nil
	}
}

func oneOf(vals ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(vals, v) {
			return nil
		}
		return fmt.Errorf("want one of %s", strings.Join(vals, ", "))
	}
}

func checkBuffSize(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 4096 || n > GiB || n&(n-1) != 0 {
		return fmt.Errorf("want a power of two in bytes from 4096 to 1073741824 (e.g. 4194304)")
	}
	return nil
}

// checkNameList validates NCCL's list syntax for PROTO and ALGO: a comma
// list of names, optionally led by ^, in per-function entries (listEntries).
func checkNameList(v string, valid []string) error {
	entries, err := listEntries(v)
	if err != nil {
		return err
	}
	for _, e := range entries {
		list, exclude := strings.CutPrefix(e.list, "^")
		folded := map[string]bool{}
		for _, name := range strings.Split(list, ",") {
			folded[strings.ToLower(strings.TrimSpace(name))] = true
			if !containsFold(valid, strings.TrimSpace(name)) {
				msg := fmt.Sprintf("%q is not one of %s", name, strings.Join(valid, ", "))
				if near := Nearest(name, valid); near != "" {
					msg += "; did you mean " + near + "?"
				}
				return fmt.Errorf("%s", msg)
			}
		}
		if exclude && len(folded) >= len(valid) {
			return fmt.Errorf("excludes every choice, leaving NCCL nothing to use")
		}
	}
	return checkEntryOrder(entries)
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// Nearest returns the candidate closest to s by edit distance, if it is
// close enough to be a plausible misspelling, else "".
func Nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	u := strings.ToUpper(s)
	for _, c := range candidates {
		d := EditDistance(u, strings.ToUpper(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(1, len([]rune(s))/3) {
		return best
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// CheckEnvName reports an environment variable name that looks like a
// knob written wrong ("nccl_proto", "PROTO", or within two edits), which
// NCCL would silently ignore; any other name is fine.
func CheckEnvName(name string) error {
	if IsKnob(name) {
		return nil
	}
	if k, err := LookupKnob(name); err == nil {
		return fmt.Errorf("%q is not how NCCL spells it: write %s (NCCL reads exact, upper-case names)", name, k.Name)
	}
	u := strings.ToUpper(name)
	best, bestD := "", 3
	for _, k := range Knobs {
		if d := EditDistance(u, k.Name); d < bestD {
			best, bestD = k.Name, d
		}
	}
	if best != "" {
		return fmt.Errorf("%q is not a variable NCCL reads; did you mean %s? (the knobs are %s)", name, best, strings.Join(KnobNames(), ", "))
	}
	return nil
}

// ValueExamples lists, per knob, a value of every form a study can
// recommend (each choice and, for the list knobs, exclusions, comma lists
// and per-function forms), NCCL's defaults left out. The export formats
// are tested to carry each unchanged.
func ValueExamples() map[string][]string {
	out := map[string][]string{}
	for _, k := range Knobs {
		seen := map[string]bool{}
		add := func(v string) {
			if v != "" && !seen[v] && k.Validate(v) == nil && !IsDefault(k.Name, v) {
				seen[v] = true
				out[k.Name] = append(out[k.Name], v)
			}
		}
		for _, c := range k.Choices {
			add(c)
		}
		var names []string
		switch k.Name {
		case "NCCL_PROTO":
			names = protocols
		case "NCCL_ALGO":
			names = algorithms
		}
		if len(names) < 2 {
			continue
		}
		a, b := names[0], names[1]
		add(strings.Join(names, ","))
		add("^" + a + "," + b)
		all := []Op{Broadcast, Reduce, AllGather, ReduceScatter, AllReduce}
		if s, ok := ScopeList("^"+a, all); ok {
			add(s)
		}
		if s, ok := ScopeList(a, []Op{AllReduce, AllGather}); ok {
			add(s) // allreduce:Ring;allgather:Ring
		}
		if s, ok := ScopeList(a+","+b, []Op{AllReduce, AllGather}); ok {
			add(s)
		}
		add("allreduce:" + a + ";allgather:" + b)
		add(a + "," + b + ";allreduce:^" + a)
	}
	return out
}
