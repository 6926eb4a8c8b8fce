package nccl

import (
	"fmt"
	"slices"
	"strings"
)

// NCCL_ALGO and NCCL_PROTO take a per-function form since NCCL 2.24
// (tuning.cc parseList): ';'-separated entries, each "function:list"
// except perhaps the first, which applies to every function
// ("LL,Simple;allreduce:^LL"). Functions are compared case-insensitively;
// any other prefix fails the communicator. A function no entry names keeps
// NCCL's defaults, which is how a scoped recommendation leaves the other
// collectives alone.

// perFunctionSince is the first NCCL version code that reads the
// per-function form; older versions fail on it.
const perFunctionSince = 22400

// PerFunctionSupported reports whether NCCL version v ("2.28.3") reads the
// per-function form of NCCL_ALGO and NCCL_PROTO; false when v is unknown.
func PerFunctionSupported(v string) bool {
	return VersionCode(v) >= perFunctionSince
}

// PerFunctionNames are the prefixes NCCL accepts in the per-function form,
// lower case, in NCCL's order: the ops that have one (Op.PerFunction).
func PerFunctionNames() []string {
	var out []string
	for _, o := range []Op{Broadcast, Reduce, AllGather, ReduceScatter, AllReduce} {
		if f, ok := o.PerFunction(); ok {
			out = append(out, f)
		}
	}
	return out
}

// listEntries splits an NCCL_ALGO/NCCL_PROTO value into its entries as
// NCCL reads them ("" function: every function), refusing what NCCL
// refuses.
func listEntries(v string) ([]listEntry, error) {
	var out []listEntry
	for i, part := range strings.Split(v, ";") {
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("empty entry between ';'")
		}
		fn, list, scoped := strings.Cut(part, ":")
		if !scoped {
			out = append(out, listEntry{list: part, unscopedLater: i > 0})
			continue
		}
		if !containsFold(PerFunctionNames(), fn) {
			return nil, fmt.Errorf("unknown collective %q before ':' (NCCL accepts %s; alltoall and sendrecv run as send/recv and have no entry)", fn, strings.Join(PerFunctionNames(), ", "))
		}
		if strings.TrimPrefix(list, "^") == "" {
			return nil, fmt.Errorf("entry %q has no list after ':'", part)
		}
		out = append(out, listEntry{function: strings.ToLower(fn), list: list})
	}
	return out, nil
}

type listEntry struct {
	function string // "" applies to every function
	list     string
	// unscopedLater: an entry without a function after the first, which
	// NCCL refuses (see checkEntryOrder).
	unscopedLater bool
}

// checkEntryOrder refuses an entry without a function after the first:
// NCCL's "All entries except the first must have a prefix".
func checkEntryOrder(entries []listEntry) error {
	for _, e := range entries {
		if e.unscopedLater {
			return fmt.Errorf("entry %q has no function: every entry but the first must name one (e.g. allreduce:%s), NCCL refuses it", e.list, e.list)
		}
	}
	return nil
}

// IsScoped reports whether an NCCL_ALGO/NCCL_PROTO value uses the
// per-function form (any entry names a function).
func IsScoped(v string) bool {
	entries, err := listEntries(v)
	if err == nil {
		err = checkEntryOrder(entries)
	}
	if err != nil {
		return strings.Contains(v, ":")
	}
	return slices.ContainsFunc(entries, func(e listEntry) bool { return e.function != "" })
}

// ScopeList writes a plain NCCL_ALGO/NCCL_PROTO list ("^LL128") in the
// per-function form for ops ("allreduce:^LL128;allgather:^LL128"). ok is
// false when the value is already scoped or invalid, or no op of ops has a
// per-function entry.
func ScopeList(list string, ops []Op) (string, bool) {
	entries, err := listEntries(list)
	if err != nil || len(entries) != 1 || entries[0].function != "" {
		return "", false
	}
	var parts []string
	seen := map[string]bool{}
	for _, o := range ops {
		if f, ok := o.PerFunction(); ok && !seen[f] {
			seen[f] = true
			parts = append(parts, f+":"+list)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, ";"), true
}

// ScopedKnobs are the knobs that take the per-function form; channel and
// CTA caps and every other knob stay process-wide.
var ScopedKnobs = []string{"NCCL_ALGO", "NCCL_PROTO"}

// ScopeConfig returns cfg with its NCCL_ALGO and NCCL_PROTO written in the
// per-function form for ops when NCCL version reads that form, and the
// knobs it rewrote; cfg itself (cloned) and nil otherwise.
func ScopeConfig(cfg Config, ops []Op, version string) (Config, []string) {
	out := cfg.Clone()
	if !PerFunctionSupported(version) {
		return out, nil
	}
	var scoped []string
	for _, k := range ScopedKnobs {
		if s, ok := ScopeList(out[k], ops); ok { // an unset knob ("") is no list
			out[k] = s
			scoped = append(scoped, k)
		}
	}
	return out, scoped
}

// Named are the values an NCCL_ALGO/NCCL_PROTO value names as allowed, in
// any entry (lower case, each once); an exclusion names none, and a value
// NCCL would refuse names nothing.
func Named(v string) []string {
	entries, err := listEntries(v)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.list, "^") {
			continue
		}
		for _, name := range strings.Split(e.list, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}
