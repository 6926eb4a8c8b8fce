package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list the studies in the database",
		ArgsUsage: " ",
		Description: `history lists every study: its kind (search, sweep, import), band, whether
the fabric was SIMULATED, how many trials and launches it holds, its status
and its recommendation. It opens the database read-only, so it works while
a search is running. See one study with: nccltune show STUDY`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
			&cli.StringSliceFlag{Name: "label", Usage: "only studies labelled `K=V` (as given to --label), repeatable: all must match"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("history takes no arguments (got %q); to see one study: nccltune show %s", c.Args().First(), c.Args().First())
			}
			want, err := readNaming(c)
			if err != nil {
				return err
			}
			db, err := dbPath(c)
			if err != nil {
				return err
			}
			return runHistory(c.Context, historyOptions{db: db, json: c.Bool("json"), labels: want.labels, stdout: c.App.Writer})
		},
	}
}

type historyOptions struct {
	db     string
	json   bool
	labels map[string]string
	stdout io.Writer
}

// howToStart is what an empty history says.
const howToStart = "no studies yet — run nccltune search --sim spark4 --band 512K-4M"

func runHistory(ctx context.Context, o historyOptions) error {
	sums, err := readStudies(o.db)
	if err != nil {
		return err
	}
	sums = withLabels(sums, o.labels)
	if o.json {
		return ui.WriteJSON(o.stdout, historyJSON(sums))
	}
	if len(sums) == 0 {
		_, err := fmt.Fprintln(o.stdout, howToStart)
		return err
	}
	return writeHistoryTable(o.stdout, sums, time.Local)
}

// withLabels keeps the studies that carry every label asked for.
func withLabels(sums []store.StudySummary, want map[string]string) []store.StudySummary {
	if len(want) == 0 {
		return sums
	}
	var out []store.StudySummary
	for _, s := range sums {
		match := true
		for k, v := range want {
			if got, ok := s.Labels[k]; !ok || got != v {
				match = false
			}
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}

// historyStudy is one study of `history --json`.
type historyStudy struct {
	Study      string            `json:"study"`
	ID         uint64            `json:"id"`
	Kind       string            `json:"kind"`
	Band       string            `json:"band"`
	Collective string            `json:"collective,omitempty"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Labels     map[string]string `json:"labels"`
	// Trials is DESIGN.md's count; TrialCount says the same under the
	// name show --json uses beside its list of trials.
	Trials         int                          `json:"trials"`
	TrialCount     int                          `json:"trial_count"`
	Launches       int                          `json:"launches"`
	Status         string                       `json:"status"`
	Created        time.Time                    `json:"created"`
	Updated        time.Time                    `json:"updated"`
	Recommendation *store.RecommendationSummary `json:"recommendation"`
}

func historyJSON(sums []store.StudySummary) map[string]any {
	studies := make([]historyStudy, 0, len(sums))
	for _, s := range sums {
		rec := s.Recommendation
		if rec != nil && rec.Env == nil {
			r := *rec
			r.Env = map[string]string{}
			rec = &r
		}
		studies = append(studies, historyStudy{
			Study: s.Name, ID: s.ID, Kind: s.Kind, Band: s.Band, Collective: s.Collective,
			Simulated: s.Simulated, SimProfile: s.SimProfile, Labels: nonNilMap(s.Labels), Trials: s.Trials, TrialCount: s.Trials, Launches: s.Launches,
			Status: s.Status, Created: s.Created, Updated: s.Updated, Recommendation: rec,
		})
	}
	return map[string]any{"studies": studies}
}

// writeHistoryTable prints one line per study, oldest first, times in loc.
func writeHistoryTable(w io.Writer, sums []store.StudySummary, loc *time.Location) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "STUDY\tKIND\tBAND\tFABRIC\tTRIALS\tLAUNCHES\tSTATUS\tCREATED\tRECOMMENDATION")
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n",
			s.Name, s.Kind, orDash(s.Band), fabricLabel(s.Simulated, s.SimProfile), s.Trials, s.Launches,
			s.Status, s.Created.In(loc).Format("2006-01-02 15:04"), recommendationLine(s.Recommendation, s.Status))
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

// recommendationLine is a recommendation in one line: the env and the
// confirmed speedup with its interval, or the plain "keep defaults".
func recommendationLine(r *store.RecommendationSummary, status string) string {
	switch {
	case r == nil && status == vocab.StatusRunning:
		return "(not decided yet)"
	case r == nil:
		return "—"
	case len(r.Env) == 0 || !r.Significant:
		return "keep NCCL defaults"
	}
	return fmt.Sprintf("%s  %s", nccl.Config(r.Env).Key(), report.SpeedupText(r.Speedup, r.SpeedupCI))
}
