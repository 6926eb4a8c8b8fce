package ui

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// HowToStart is what an empty history says.
const HowToStart = "no studies yet — " + stored.StartHint

// PrintHistory prints the studies: history's --json document, or one line
// per study, times in loc; HowToStart when there is none.
func PrintHistory(w io.Writer, asJSON bool, sums []store.StudySummary, loc *time.Location) error {
	if asJSON {
		return WriteJSON(w, historyJSON(sums))
	}
	if len(sums) == 0 {
		_, err := fmt.Fprintln(w, HowToStart)
		return err
	}
	return writeHistoryTable(w, sums, loc)
}

// historyStudy is one study of `history --json`.
type historyStudy struct {
	Study string `json:"study"`
	ID    uint64 `json:"id"`
	Kind  string `json:"kind"`
	Band  string `json:"band"`
	// Workload is a timed workload's calls.
	Workload   string            `json:"workload_calls,omitempty"`
	Collective string            `json:"collective,omitempty"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Labels     map[string]string `json:"labels"`
	// Trials is DESIGN.md's count; TrialCount the same under show --json's
	// name.
	Trials     int       `json:"trials"`
	TrialCount int       `json:"trial_count"`
	Launches   int       `json:"launches"`
	BatchSize  int       `json:"batch_size,omitempty"`
	Status     string    `json:"status"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	// Recommendation's env is what to run (the baseline, when the study
	// keeps it); its verdict the words of history's column.
	Recommendation any               `json:"recommendation"`
	BaselineEnv    map[string]string `json:"baseline_env"`
}

func historyJSON(sums []store.StudySummary) map[string]any {
	studies := make([]historyStudy, 0, len(sums))
	for _, s := range sums {
		var rec any // null until decided
		if s.Recommendation != nil {
			c := stored.SummaryConclusion(s)
			r := *s.Recommendation
			r.Env = c.RunEnv()
			verdict, _, _ := c.Headline()
			rec = withFields(r, map[string]any{"verdict": verdict})
		}
		studies = append(studies, historyStudy{
			Study: s.Name, ID: s.ID, Kind: s.Kind, Band: s.Band, Workload: s.Workload, Collective: s.Collective,
			Simulated: s.Simulated, SimProfile: s.SimProfile, Labels: nonNilMap(s.Labels), Trials: s.Trials, TrialCount: s.Trials, Launches: s.Launches, BatchSize: s.BatchSize,
			Status: s.Status, Created: s.Created, Updated: s.Updated, Recommendation: rec, BaselineEnv: nonNilMap(s.BaselineEnv),
		})
	}
	return map[string]any{"studies": studies}
}

// writeHistoryTable prints one line per study; a timed workload's BAND is
// its calls.
func writeHistoryTable(w io.Writer, sums []store.StudySummary, loc *time.Location) error {
	tw := texttable.New(w)
	fmt.Fprintln(tw, "STUDY\tKIND\tBAND\tFABRIC\tTRIALS\tLAUNCHES\tSTATUS\tCREATED\tRECOMMENDATION")
	for _, s := range sums {
		launches := strconv.Itoa(s.Launches)
		if s.BatchSize > 1 {
			launches += fmt.Sprintf(" (exploring in batches of %d)", s.BatchSize)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n",
			s.Name, s.Kind, orDash(cmp.Or(s.Workload, s.Band)), fabricLabel(s.Simulated, s.SimProfile), s.Trials, launches,
			s.Status, s.Created.In(loc).Format("2006-01-02 15:04"), safetext.Escape(recommendationLine(s)))
	}
	return tw.Flush()
}

// fabricLabel marks simulated studies loudly: their numbers are not measurements.
func fabricLabel(simulated bool, profile string) string {
	switch {
	case !simulated:
		return "real"
	case profile != "":
		return "SIMULATED:" + profile
	}
	return "SIMULATED"
}

// recommendationLine is a study's conclusion in one line: the verdict's
// headline with the confirmed speedup when it recommends a change, else
// what it keeps and what refused the candidate.
func recommendationLine(s store.StudySummary) string {
	c := stored.SummaryConclusion(s)
	headline, change, decided := c.Headline()
	switch {
	case !decided && s.Status == vocab.StatusRunning:
		return "(not decided yet)"
	case !decided:
		return "—"
	case !change && c.Refused != "":
		return "keep " + c.BaselineName() + " (refused: " + c.Refused + ")"
	case !change:
		return "keep " + c.BaselineName() // the headline without its reason, to fit a column
	}
	return fmt.Sprintf("%s  %s", headline, stored.SpeedupText(s.Recommendation.Speedup, s.Recommendation.SpeedupCI))
}
