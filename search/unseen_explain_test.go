package search

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
)

// unseenExplain makes the unseen-fabric probe classify each study that
// did not ship the best safe setting (missClass), for the record of why:
// the probe's counts alone do not say which rule of the study to look at.
var unseenExplain = flag.Bool("unseen-explain", false, "classify and log each unseen-probe study that missed the best safe setting")

// Why a study missed the best safe setting, as the probe's explanation
// classifies it (all on simulated fabrics).
const (
	missNeverExplored     = "best safe never explored"
	missNotConfirmed      = "best safe explored, not confirmed: the confirmation of another candidate showed no gain and the study stopped"
	missRefusedNoRoom     = "best safe explored, not confirmed: a refusal, then no confirmation (budget or no promising candidate)"
	missSmallerGain       = "shipped a safe but smaller gain (best safe explored, not confirmed)"
	missSmallerUnexplored = "shipped a safe but smaller gain (best safe never explored)"
	missBestRefused       = "best safe confirmed and refused"
	missBestNoGain        = "best safe confirmed, no gain shown"
	missUnsafe            = "shipped an unsafe setting"
)

// studyMiss is one study's miss, classified, with what tells it apart.
type studyMiss struct {
	class, detail string
}

// missClass classifies res, a timed study of w on p that did not ship
// the best safe setting (its true step time safeStep): whether a trial
// whose config (or its per-function form, as the confirmation scopes
// it) is truly best safe was explored, whether it was confirmed, and how
// the study ended. detail names the candidates confirmed, the best safe
// trials' exploration estimates against the baseline's, and the launches
// left.
func missClass(p *sim.Profile, w nccl.Workload, safeStep float64, res *Result) studyMiss {
	version := p.NCCLVersion
	isBest := func(cfg nccl.Config) bool {
		for _, c := range []nccl.Config{cfg, scopeForm(cfg, w, version)} {
			if tr := timedTruth(p, w, c); tr.bestSafe(safeStep) {
				return true
			}
		}
		return false
	}
	base := res.Baseline
	baseLog := base.logScore(nil)
	confirmed := map[*Trial]string{}
	var order []string
	note := func(t *Trial, how string) {
		if t == nil {
			return
		}
		tr := timedTruth(p, w, t.Config)
		confirmed[t] = how
		order = append(order, fmt.Sprintf("%s %s [truth ×%.2f of best safe, worst %.3f; explored ×%.2f over %d]", how, t.Config,
			tr.step/safeStep, tr.worst, math.Exp(baseLog-t.logScore(nil)), len(t.Explore)))
	}
	for _, r := range res.Refused {
		note(r.Trial, "refused ("+r.Ending+": "+clip(r.Reason, 90)+")")
		note(r.ScopedFrom, "(scoped from)")
	}
	if res.Winner != nil {
		note(res.Winner, "last ("+res.Ending+")")
		note(res.ScopedFrom, "(scoped from)")
	}
	// The best explored trials by exploration's estimate, with their truth.
	var explored []*Trial
	for _, t := range res.Trials {
		if t != base && len(t.Explore) > 0 && !math.IsInf(t.logScore(nil), 1) {
			explored = append(explored, t)
		}
	}
	sort.Slice(explored, func(i, j int) bool { return explored[i].logScore(nil) < explored[j].logScore(nil) })
	var top []string
	for _, t := range explored[:min(5, len(explored))] {
		tr := timedTruth(p, w, scopeForm(t.Config, w, version))
		top = append(top, fmt.Sprintf("%s ×%.2f/%d [scoped truth ×%.2f of best safe, worst %.3f]", t.Config, math.Exp(baseLog-t.logScore(nil)), len(t.Explore), tr.step/safeStep, tr.worst))
	}
	var best []*Trial
	for _, t := range res.Trials {
		if t != base && len(t.Explore) > 0 && isBest(t.Config) {
			best = append(best, t)
		}
	}
	sort.Slice(best, func(i, j int) bool { return best[i].logScore(nil) < best[j].logScore(nil) })
	var bestNotes []string
	bestConfirmed := ""
	for _, t := range best {
		bestNotes = append(bestNotes, fmt.Sprintf("%s explored ×%.2f over %d", t.Config, math.Exp(baseLog-t.logScore(nil)), len(t.Explore)))
		if how, ok := confirmed[t]; ok && bestConfirmed == "" {
			bestConfirmed = how
		}
	}
	// A confirmed candidate that is truly best safe (its scoped form) but
	// was not an explored trial itself.
	for t, how := range confirmed {
		if bestConfirmed == "" && isBest(t.Config) {
			bestConfirmed = how
		}
	}
	tr := timedTruth(p, w, res.Env())
	detail := fmt.Sprintf("shipped %s (×%.2f of best safe); ending %s; unspent %d of %d; confirmed: %s; best safe explored: %s",
		res.Env(), tr.step/safeStep, res.Ending, res.Unspent, res.Launches+res.Unspent, strings.Join(order, " → "), strings.Join(bestNotes, "; "))
	detail += "\n      top explored: " + strings.Join(top, "; ") + "\n      reason: " + clip(res.Reason, 300)
	if len(bestNotes) == 0 {
		detail = strings.TrimSuffix(detail, "; best safe explored: ") + "; best safe never explored"
	}
	class := ""
	switch {
	case tr.worst > 1.05:
		class = missUnsafe
	case bestConfirmed != "" && strings.HasPrefix(bestConfirmed, "refused"):
		class = missBestRefused
	case bestConfirmed != "" && !res.Recommend && !refusable(res):
		class = missBestNoGain
	case bestConfirmed != "":
		class = missBestRefused
	case res.Recommend && len(best) == 0:
		class = missSmallerUnexplored
	case res.Recommend:
		class = missSmallerGain
	case len(best) == 0:
		class = missNeverExplored
	case !refusable(res):
		class = missNotConfirmed
	default:
		class = missRefusedNoRoom
	}
	return studyMiss{class: class, detail: detail}
}

// scopeForm is cfg's lists in the per-function form for w's ops, as a
// timed study confirms a candidate (Options.ScopeLists).
func scopeForm(cfg nccl.Config, w nccl.Workload, version string) nccl.Config {
	c, _ := nccl.ScopeConfig(cfg, w.Ops(), version)
	return c
}

// clip is s cut to n runes, for a log line.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
