package ui

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
)

// SimLabel is the mark every simulated result carries in text output.
func SimLabel(profile string) string {
	if profile == "" {
		return "SIMULATED fabric"
	}
	return "SIMULATED fabric: " + profile
}

// simTag is SimLabel in brackets after a title line ("  [SIMULATED
// fabric: spark4]"), "" for real hardware.
func simTag(simulated bool, profile string) string {
	if !simulated {
		return ""
	}
	return "  [" + SimLabel(profile) + "]"
}

// BaselineName is how output names what a study compared with.
func BaselineName(baseline map[string]string) string {
	return stored.Conclusion{Baseline: nccl.Config(baseline).Clone()}.BaselineName()
}

// changeText says what a recommendation changes relative to the baseline:
// "NCCL_MAX_NCHANNELS 8 → 16, NCCL_ALGO unset → Ring, NCCL_PROTO ^LL128 →
// unset"; knobs kept as they are are left out.
func changeText(baseline, env map[string]string) string {
	names := slices.AppendSeq(slices.Collect(maps.Keys(baseline)), maps.Keys(env))
	slices.Sort(names)
	var parts []string
	for _, k := range slices.Compact(names) {
		from, to := baseline[k], env[k]
		if from == to {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", k, cmp.Or(from, "unset"), cmp.Or(to, "unset")))
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// AKind names a study kind with its article: "a sweep", "an import".
func AKind(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// ciText is a median with its interval, "12.3 [11.9, 12.8]", or the
// median alone when there is no interval.
func ciText(m, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || lo == hi {
		return fmt.Sprintf("%.1f", m)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", m, lo, hi)
}

// orDash is s, or "—" in a table cell that would otherwise be blank.
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

// WhereStored tells the user which file holds the study: on a first run
// (created) the database did not exist, and nothing else says where it
// went.
func WhereStored(path string, created bool) string {
	if created {
		return fmt.Sprintf("  stored in %s (a new database; --db FILE or NCCLTUNE_DB chooses another)", path)
	}
	return "  stored in " + path
}
