package ui

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ShowFormat is what show prints of a study.
type ShowFormat struct {
	// JSON is show's --json document; CSV is one row per trial, or with
	// Curves one row per launch and size.
	JSON, CSV, Curves bool
	// Trials adds the table of trials to the text.
	Trials bool
	// Location is the time zone of the text's times.
	Location *time.Location
}

// PrintShow prints a study as f asks: its --json document, a CSV, or the
// text: settings, the recommendation, what the launches measured and NCCL
// chose, and the trials.
func PrintShow(w io.Writer, data *report.Study, f ShowFormat) error {
	switch {
	case f.JSON:
		return WriteJSON(w, showJSON(data))
	case f.CSV && f.Curves:
		return writeCurvesCSV(w, data)
	case f.CSV:
		return writeTrialsCSV(w, data)
	}
	if err := writeStudySettings(w, data.Study, data.Launches, f.Location); err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeRecommendation(w, data.Study)
	if err := writeMeasurements(w, data); err != nil {
		return err
	}
	writeOpTables(w, data.Study, data.Launches)
	if f.Trials {
		fmt.Fprintln(w)
		return writeTrialsTable(w, data)
	}
	return nil
}

// writeStudySettings prints what the study asked for and where it ran.
// The values hold text from outside (paths, host names, the benchmark's
// output): escaped, so that none can forge a line or reach the terminal.
func writeStudySettings(w io.Writer, s *store.Study, launches []*store.Launch, loc *time.Location) error {
	tw := texttable.New(w)
	batches := stored.BatchText(launches)
	for _, f := range stored.Settings(s, loc) {
		fmt.Fprintf(tw, "%s\t%s\n", f.Key, safetext.Escape(f.Value))
		if f.Key == "measured" && batches != "" {
			fmt.Fprintf(tw, "batches\t%s\n", batches)
		}
		if f.Key == "study" && len(s.Labels) > 0 {
			fmt.Fprintf(tw, "labels\t%s\n", safetext.Escape(labelsText(s.Labels)))
		}
		if f.Key == "study" && len(s.BaselineEnv) > 0 {
			fmt.Fprintf(tw, "baseline\t%s (--baseline-env: compared with these, not NCCL's defaults)\n", safetext.Escape(nccl.Config(s.BaselineEnv).Key()))
		}
	}
	return tw.Flush()
}

// writeRecommendation states the study's conclusion in plain words,
// escaped (a headline can name a path, a reason quote the output).
func writeRecommendation(w io.Writer, s *store.Study) {
	v := stored.VerdictOf(s)
	fmt.Fprintf(w, "recommendation: %s\n", safetext.Escape(v.Headline))
	for _, d := range v.Details {
		fmt.Fprintf(w, "  %s\n", safetext.Escape(d))
	}
	if s.Recommendation != nil {
		for _, d := range s.Recommendation.Dropped {
			fmt.Fprintf(w, "  left out %s=%s: %s\n", d.Knob, d.Value, d.Reason)
		}
	}
	for _, line := range planLines(s.Plans) {
		fmt.Fprintln(w, line)
	}
}

// writeMeasurements prints what the launches measured: a workload's size
// table of every part, another confirmed study's comparison with NCCL's
// defaults, or each config's curve of a sweep or an import; then what
// NCCL chose.
func writeMeasurements(w io.Writer, data *report.Study) error {
	if rec := data.Study.Recommendation; data.Study.Parts().ScoredByRounds() && rec != nil && len(rec.Parts) > 0 {
		fmt.Fprintln(w)
		cand := "the candidate"
		if t := data.Candidate(); t != nil {
			cand = t.Config.String()
		}
		fmt.Fprintf(w, "confirmed %d vs %d launches of each op, interleaved: %s against %s\n", rec.BaselineLaunches, rec.CandidateLaunches, cand, BaselineName(data.Study.BaselineEnv))
		printSizeTable(w, rec, "baseline", "candidate")
	} else if cmp := data.Compare(); cmp != nil {
		fmt.Fprintln(w)
		if data.Study.Parts().ScoredByRounds() {
			fmt.Fprintf(w, "%s's launches, the workload's first op (the parts table below has every part):\n", data.Study.Op())
		}
		if err := cmp.WriteText(w); err != nil {
			return err
		}
	} else if data.Study.Kind != vocab.KindSearch {
		for _, t := range data.Trials {
			c, err := data.TrialCurve(t)
			if err != nil {
				continue // no successful launch: the trials table says why
			}
			fmt.Fprintln(w)
			if err := c.WriteText(w); err != nil {
				return err
			}
		}
	}
	return writeChoices(w, data)
}

// writeChoices prints what NCCL chose per size with its defaults and with
// the recommendation, when recorded.
func writeChoices(w io.Writer, data *report.Study) error {
	defaults, recommended := stored.ExplainChoices(data.Study, data.Trials, data.Launches)
	if len(defaults) == 0 && len(recommended) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "what NCCL chose per size (NCCL_DEBUG_SUBSYS=TUNING of the debug launches):")
	return benchfmt.ChoicesTable(w, defaults, recommended)
}

// ScoreDefinition is what SCORE means wherever a trial's score is shown
// (report.ScoredConfigs computes it).
const ScoreDefinition = `SCORE µs is the median, over the trial's scored launches (exploration
and confirmation; not the warm-up or the debug launches), of each
launch's band score: the geometric mean over the band's sizes of the
launch's median time per size; the baseline's and the confirmed config's
is the verdict's score, from their confirmation launches. SCORED counts
those launches, LAUNCHES all of the trial's.`

// ScoreDefinitionOf is what SCORE means for study s: ScoreDefinition, or
// for a study of several parts the objective of its rounds.
func ScoreDefinitionOf(s *store.Study) string {
	if !s.Parts().ScoredByRounds() {
		return ScoreDefinition
	}
	return fmt.Sprintf(`SCORE µs is the median, over the trial's scored rounds (one launch of
each op of the workload; exploration and confirmation; not the warm-up
or the debug launches), of each round's objective:
%s;
the baseline's and the confirmed config's is the verdict's score, from
their confirmation rounds. SCORED counts those rounds, LAUNCHES all of
the trial's launches.`, stored.Objective(s))
}

// trialScores is every trial's score by trial number (none for a study
// without a band).
func trialScores(data *report.Study) map[int]report.ScoredConfig {
	out := map[int]report.ScoredConfig{}
	configs, err := data.ScoredConfigs()
	if err != nil {
		return out
	}
	for _, c := range configs {
		for _, n := range c.Trials {
			out[n] = c
		}
	}
	return out
}

// writeTrialsTable lists every trial by number, with its score; a reason
// may quote the benchmark's output, so it is escaped.
func writeTrialsTable(w io.Writer, data *report.Study) error {
	scores := trialScores(data)
	tw := texttable.New(w)
	fmt.Fprintln(tw, "#\tROLE\tSTATE\tLAUNCHES\tSCORED\tSCORE µs\tENV\tREASON")
	for _, t := range data.Trials {
		score, scored := "—", 0
		if c, ok := scores[t.Number]; ok && c.Scored() {
			score, scored = fmt.Sprintf("%.1f", c.ScoreUS), c.Launches
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", t.Number, orDash(t.Role), t.State, t.Launches, scored, score, safetext.Escape(t.Config.String()), safetext.Escape(t.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n"+ScoreDefinitionOf(data.Study))
	return err
}

// showTrial is one trial of `show --json`.
type showTrial struct {
	Number   int               `json:"number"`
	ID       uint64            `json:"id"`
	Env      map[string]string `json:"env"`
	Key      string            `json:"key"`
	Role     string            `json:"role"`
	State    string            `json:"state"`
	Reason   string            `json:"reason,omitempty"`
	Launches int               `json:"launches"`
	// ScoreUS is null until a launch was scored.
	ScoreUS        *float64 `json:"score_us"`
	ScoredLaunches int      `json:"scored_launches"`
}

// showJSON is the `show --json` document.
func showJSON(data *report.Study) map[string]any {
	s, trials := data.Study, data.Trials
	ts := make([]showTrial, 0, len(trials))
	scores := trialScores(data)
	for _, t := range trials {
		env := map[string]string(t.Config.Clone())
		st := showTrial{Number: t.Number, ID: t.ID, Env: env, Key: t.Key, Role: t.Role, State: string(t.State), Reason: t.Reason, Launches: t.Launches}
		if c, ok := scores[t.Number]; ok && c.Scored() {
			st.ScoreUS, st.ScoredLaunches = new(c.ScoreUS), c.Launches
		}
		ts = append(ts, st)
	}
	var rec *store.Recommendation
	if s.Recommendation != nil {
		r := *s.Recommendation
		r.Env, r.PerSize, r.Dropped = nonNilMap(r.Env), nonNil(r.PerSize), nonNil(r.Dropped)
		rec = &r
	}
	doc := map[string]any{
		"study":          s.Name,
		"id":             s.ID,
		"kind":           s.Kind,
		"band":           s.Band,
		"band_min":       s.BandMin,
		"band_max":       s.BandMax,
		"sizes":          nonNil(s.Sizes),
		"guard_sizes":    nonNil(s.GuardSizes),
		"collective":     s.Collective,
		"simulated":      s.Simulated,
		"labels":         nonNilMap(s.Labels),
		"status":         s.Status,
		"reason":         s.Reason,
		"created":        s.Created,
		"updated":        s.Updated,
		"seed":           s.Seed,
		"space":          nonNilMap(s.Space),
		"base_env":       nonNilMap(s.BaseEnv),
		"baseline_env":   nonNilMap(s.BaselineEnv),
		"launch":         withSeconds(s.Launch, "timeout"),
		"fabric":         s.Platform,
		"budget":         withSeconds(s.Budget, "time"),
		"launches":       s.Launches,
		"trials":         ts,
		"trial_count":    len(ts),
		"recommendation": recommendationJSON(s, rec),
		// An undecided study's refusals (a decided one's are the
		// recommendation's).
		"refusals_so_far": nonNil(s.Refusals),
		"comparison":      data.Compare(),
		"choices":         choicesJSON(data),
		"plans":           s.Plans,
	}
	addOpFields(doc, s, data.Launches)
	return doc
}

// choicesJSON pairs NCCL's recorded choices with its defaults and with the
// recommendation by size; nil when none were recorded.
func choicesJSON(data *report.Study) []benchfmt.ChoiceRow {
	defaults, recommended := stored.ExplainChoices(data.Study, data.Trials, data.Launches)
	if len(defaults) == 0 && len(recommended) == 0 {
		return nil
	}
	return benchfmt.CompareChoices(defaults, recommended)
}

// labelsText is "k=v k2=v2", sorted.
func labelsText(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	for i, k := range keys {
		keys[i] = k + "=" + labels[k]
	}
	return strings.Join(keys, " ")
}
