package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/store"
	"github.com/urfave/cli/v2"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one study: its settings, fabric, recommendation and trials",
		ArgsUsage: "STUDY",
		Description: `show prints a study's settings (band, space, base env, launch flags), the
fabric it ran on, its status and its recommendation; --trials adds every
trial with its env, state, launches and score. STUDY is a name from
nccltune history (s7-512K-4M), its number (7) or s7. The database is
opened read-only, so show works while a search is running.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "trials", Usage: "list every trial"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout (trials always included)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("show takes one STUDY (got %d arguments); nccltune history lists them", c.NArg())
			}
			db, err := reviewDBPath(c)
			if err != nil {
				return err
			}
			return runShow(c.Context, showOptions{db: db, study: c.Args().First(), trials: c.Bool("trials"), json: c.Bool("json"), stdout: c.App.Writer})
		},
	}
}

type showOptions struct {
	db     string
	study  string
	trials bool
	json   bool
	stdout io.Writer
}

func runShow(ctx context.Context, o showOptions) error {
	data, err := readStudy(o.db, o.study)
	if err != nil {
		return err
	}
	study, trials := data.Study, data.Trials
	if o.json {
		return writeJSON(o.stdout, showJSON(study, trials))
	}
	w := o.stdout
	if err := writeStudySettings(w, study, time.Local); err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeRecommendation(w, study)
	if o.trials {
		fmt.Fprintln(w)
		return writeTrialsTable(w, trials)
	}
	return nil
}

// readStudy loads a study, its trials and its launches in one short
// read-only visit.
func readStudy(path, query string) (*report.Study, error) {
	studies, err := loadStudies(path, []string{query})
	if err != nil {
		return nil, err
	}
	return studies[0], nil
}

// loadStudies loads each named study with its trials and launches in one
// short read-only visit, so review commands work while a search runs. An
// unknown study is a usage error (exit 2) naming the closest names.
func loadStudies(path string, queries []string) ([]*report.Study, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, usageErrorf("no study %q: %v — %s", queries[0], err, strings.TrimPrefix(howToStart, "no studies yet — "))
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []*report.Study
	for _, q := range queries {
		study, err := st.Study(q)
		if errors.Is(err, store.ErrNotFound) {
			return nil, usageError(err)
		}
		if err != nil {
			return nil, err
		}
		trials, err := st.Trials(study.ID)
		if err != nil {
			return nil, err
		}
		launches, err := st.Launches(study.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, &report.Study{Study: study, Trials: trials, Launches: launches})
	}
	return out, nil
}

// writeStudySettings prints what the study asked for and where it ran, as
// "key  value" lines.
func writeStudySettings(w io.Writer, s *store.Study, loc *time.Location) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(key, value string) {
		if value != "" {
			fmt.Fprintf(tw, "%s\t%s\n", key, value)
		}
	}
	kind := s.Kind
	if s.Simulated {
		kind += " on a SIMULATED fabric"
		if s.Launch.SimProfile != "" {
			kind += " (" + s.Launch.SimProfile + ")"
		}
		kind += ", not a measurement"
	}
	line("study", fmt.Sprintf("%s: %s", s.Name, kind))
	status := s.Status
	if s.Reason != "" {
		status += ": " + s.Reason
	}
	line("status", status)
	line("created", fmt.Sprintf("%s, updated %s", s.Created.In(loc).Format("2006-01-02 15:04:05"), s.Updated.In(loc).Format("2006-01-02 15:04:05")))
	line("band", bandText(s))
	line("collective", s.Collective)
	line("space", spaceText(s.Space))
	line("base env", strings.Join(nccl.Config(s.BaseEnv).Env(), " "))
	line("launch", launchText(s.Launch))
	if s.Launch.SimProfile != "" {
		line("simulator", fmt.Sprintf("profile %s, noise %g, seed %d", s.Launch.SimProfile, s.Launch.SimNoise, s.Launch.SimSeed))
	}
	line("fabric", fabricText(s.Fabric))
	if s.Kind == store.KindSearch || s.Seed != 0 {
		line("seed", strconv.FormatInt(s.Seed, 10))
	}
	line("budget", budgetText(s.Budget))
	line("measured", plural(s.Trials, "trial")+", "+plural(s.Launches, "launch"))
	return tw.Flush()
}

func bandText(s *store.Study) string {
	var parts []string
	if s.Band != "" {
		parts = append(parts, s.Band)
	}
	if len(s.Sizes) > 0 {
		parts = append(parts, "sizes "+sizesText(s.Sizes))
	}
	if len(s.GuardSizes) > 0 {
		parts = append(parts, "guard "+sizesText(s.GuardSizes))
	}
	return strings.Join(parts, "; ")
}

func sizesText(sizes []int64) string {
	out := make([]string, len(sizes))
	for i, b := range sizes {
		out[i] = nccl.FormatSize(b)
	}
	return strings.Join(out, " ")
}

// spaceText is "NCCL_MAX_NCHANNELS: unset 2 4 8 | NCCL_PROTO: …"; an
// empty choice means the knob is left to NCCL.
func spaceText(space map[string][]string) string {
	knobs := make([]string, 0, len(space))
	for k := range space {
		knobs = append(knobs, k)
	}
	sort.Strings(knobs)
	parts := make([]string, len(knobs))
	for i, k := range knobs {
		choices := make([]string, len(space[k]))
		for j, c := range space[k] {
			if c == "" {
				c = "unset"
			}
			choices[j] = c
		}
		parts[i] = k + ": " + strings.Join(choices, " ")
	}
	return strings.Join(parts, " | ")
}

func launchText(l store.LaunchSettings) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if l.Launcher != "" {
		add("%s", l.Launcher)
	}
	if l.NP > 0 {
		add("%s", plural(l.NP, "rank"))
	}
	if len(l.Hosts) > 0 {
		add("hosts %s", strings.Join(l.Hosts, ","))
	}
	if len(l.MPIArgs) > 0 {
		add("launcher args %s", strings.Join(l.MPIArgs, " "))
	}
	if l.Bench != "" || len(l.BenchArgs) > 0 {
		add("bench %s", strings.TrimSpace(l.Bench+" "+strings.Join(l.BenchArgs, " ")))
	}
	if l.Timeout > 0 {
		add("timeout %s", l.Timeout)
	}
	return strings.Join(parts, ", ")
}

func fabricText(f store.Fabric) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if f.NCCLVersion != "" {
		add("NCCL %s", f.NCCLVersion)
	}
	if f.TestsVersion != "" {
		add("nccl-tests %s", f.TestsVersion)
	}
	switch {
	case f.Ranks > 0 && f.Nodes > 0:
		add("%s on %s", plural(f.Ranks, "rank"), plural(f.Nodes, "node"))
	case f.Ranks > 0:
		add("%s", plural(f.Ranks, "rank"))
	}
	if f.GPU != "" {
		add("%s", f.GPU)
	}
	if f.Transport != "" {
		add("%s", f.Transport)
	}
	if f.GDR != nil {
		add("GDR %s", map[bool]string{true: "on", false: "off"}[*f.GDR])
	}
	if len(f.Hosts) > 0 {
		add("hosts %s", strings.Join(f.Hosts, ","))
	}
	return strings.Join(parts, ", ")
}

func budgetText(b store.Budget) string {
	var parts []string
	if b.Trials > 0 {
		parts = append(parts, plural(b.Trials, "trial"))
	}
	if b.Launches > 0 {
		parts = append(parts, plural(b.Launches, "launch"))
	}
	if b.Time > 0 {
		parts = append(parts, b.Time.String())
	}
	return strings.Join(parts, ", ")
}

// writeRecommendation states the study's conclusion in plain words.
func writeRecommendation(w io.Writer, s *store.Study) {
	r := s.Recommendation
	switch {
	case r == nil && s.Status == store.StatusRunning:
		fmt.Fprintln(w, "recommendation: not decided yet (the study is still running)")
		return
	case r == nil:
		fmt.Fprintf(w, "recommendation: none (the study is %s)\n", s.Status)
		return
	case len(r.Env) == 0 || !r.Significant:
		fmt.Fprintln(w, "recommendation: keep NCCL defaults: no significant gain")
	default:
		fmt.Fprintf(w, "recommendation: %s\n", nccl.Config(r.Env).Key())
		fmt.Fprintf(w, "  band speedup %s (95%% CI), p=%.3g\n", speedupText(r.Speedup, r.SpeedupCI), r.PValue)
		if r.BaselineScoreUS > 0 && r.ScoreUS > 0 {
			fmt.Fprintf(w, "  band score %.1f µs with NCCL defaults → %.1f µs\n", r.BaselineScoreUS, r.ScoreUS)
		}
		if r.BaselineLaunches > 0 || r.CandidateLaunches > 0 {
			fmt.Fprintf(w, "  confirmed by %d vs %d interleaved launches\n", r.BaselineLaunches, r.CandidateLaunches)
		}
	}
	if r.Reason != "" {
		fmt.Fprintf(w, "  %s\n", r.Reason)
	}
	if s.Simulated {
		fmt.Fprintln(w, "  (SIMULATED fabric: a demonstration, not a measurement of real hardware)")
	}
}

// writeTrialsTable lists every trial by number.
func writeTrialsTable(w io.Writer, trials []*store.Trial) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "#\tROLE\tSTATE\tLAUNCHES\tSCORE µs\tENV\tREASON")
	for _, t := range trials {
		score := "—"
		if t.ScoreUS > 0 {
			score = fmt.Sprintf("%.1f", t.ScoreUS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Number, orDash(t.Role), t.State, t.Launches, score, t.Config.String(), t.Reason)
	}
	return tw.Flush()
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
	ScoreUS *float64 `json:"score_us"`
}

// showJSON is the `show --json` document: DESIGN.md's fields (study, band,
// simulated, trials, recommendation) and the study's settings.
func showJSON(s *store.Study, trials []*store.Trial) map[string]any {
	ts := make([]showTrial, 0, len(trials))
	for _, t := range trials {
		env := map[string]string(t.Config.Clone())
		st := showTrial{Number: t.Number, ID: t.ID, Env: env, Key: t.Key, Role: t.Role, State: t.State, Reason: t.Reason, Launches: t.Launches}
		if t.ScoreUS > 0 {
			score := t.ScoreUS
			st.ScoreUS = &score
		}
		ts = append(ts, st)
	}
	var rec *store.Recommendation
	if s.Recommendation != nil {
		r := *s.Recommendation
		if r.Env == nil {
			r.Env = map[string]string{}
		}
		if r.PerSize == nil {
			r.PerSize = []store.SizeComparison{}
		}
		rec = &r
	}
	return map[string]any{
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
		"status":         s.Status,
		"reason":         s.Reason,
		"created":        s.Created,
		"updated":        s.Updated,
		"seed":           s.Seed,
		"space":          nonNilMap(s.Space),
		"base_env":       nonNilMap(s.BaseEnv),
		"launch":         s.Launch,
		"fabric":         s.Fabric,
		"budget":         s.Budget,
		"launches":       s.Launches,
		"trials":         ts,
		"recommendation": rec,
	}
}

// plural is "1 trial", "2 trials", "3 launches".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func nonNil(sizes []int64) []int64 {
	if sizes == nil {
		return []int64{}
	}
	return sizes
}

func nonNilMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}
