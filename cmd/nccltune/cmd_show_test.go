package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/ui"
)

func TestShowGolden(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"show/search_trials.golden", []string{"show", "s1-512K-4M", "--trials"}},
		{"show/search.golden", []string{"show", "1"}},
		{"show/sweep.golden", []string{"show", "s2"}},
		{"show/keep_defaults.golden", []string{"show", "lab-runs", "--trials"}},
		{"show/running.golden", []string{"show", "s4-1M"}},
		{"show/search_curves.golden", []string{"show", "s1-512K-4M", "--format", "csv", "--curves"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, db, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkGolden(t, tc.golden, []byte(stdout))
		})
	}
}

func TestShowJSON(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	type trial struct {
		Env            map[string]string `json:"env"`
		State          string            `json:"state"`
		Launches       int               `json:"launches"`
		ScoreUS        *float64          `json:"score_us"`
		ScoredLaunches int               `json:"scored_launches"`
		Number         int               `json:"number"`
		Reason         string            `json:"reason"`
	}
	var doc struct {
		Study          string  `json:"study"`
		Band           string  `json:"band"`
		Simulated      bool    `json:"simulated"`
		Kind           string  `json:"kind"`
		Status         string  `json:"status"`
		Launches       int     `json:"launches"`
		Trials         []trial `json:"trials"`
		Recommendation *struct {
			Env         map[string]string `json:"env"`
			Speedup     float64           `json:"speedup"`
			SpeedupCI   []float64         `json:"speedup_ci"`
			Significant bool              `json:"significant"`
			PerSize     []struct {
				Bytes       int64   `json:"bytes"`
				BaselineUS  float64 `json:"baseline_us"`
				CandidateUS float64 `json:"candidate_us"`
			} `json:"per_size"`
		} `json:"recommendation"`
		Fabric struct {
			NCCLVersion string `json:"nccl_version"`
			GDR         *bool  `json:"gdr"`
		} `json:"fabric"`
	}
	stdout, stderr, code := runCLI(t, db, "show", "s1-512K-4M", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Study != "s1-512K-4M" || doc.Band != "512K-4M" || !doc.Simulated || doc.Kind != "search" || doc.Status != "done" || doc.Launches != 6 {
		t.Errorf("header fields: %+v", doc)
	}
	if len(doc.Trials) != 4 {
		t.Fatalf("%d trials, want 4", len(doc.Trials))
	}
	base, best, failed, running := doc.Trials[0], doc.Trials[1], doc.Trials[2], doc.Trials[3]
	if base.Env == nil || len(base.Env) != 0 || base.Launches != 3 || base.ScoreUS == nil || *base.ScoreUS != 1150.25 || base.ScoredLaunches != 2 || base.Number != 0 {
		t.Errorf("baseline trial %+v score %v", base, *base.ScoreUS)
	}
	if best.Env["NCCL_MAX_NCHANNELS"] != "8" || best.State != "complete" || *best.ScoreUS != 141.5 || best.ScoredLaunches != 2 { // the report's score; the baseline's and the confirmed config's are the verdict's (the stored band scores)
		t.Errorf("best trial %+v score %v", best, *best.ScoreUS)
	}
	if failed.State != "failed" || failed.ScoreUS != nil || !strings.Contains(failed.Reason, "invalid protocol") {
		t.Errorf("failed trial %+v", failed)
	}
	if running.Launches != 0 || running.ScoreUS != nil {
		t.Errorf("unlaunched trial %+v", running)
	}
	r := doc.Recommendation
	if r == nil || r.Env["NCCL_PROTO"] != "^LL128" || r.Speedup != 8.125 || len(r.SpeedupCI) != 2 || r.SpeedupCI[0] != 7.875 || !r.Significant ||
		len(r.PerSize) != 1 || r.PerSize[0].CandidateUS != 141.5 {
		t.Errorf("recommendation %+v", r)
	}
	if doc.Fabric.NCCLVersion != "2.28.3" || doc.Fabric.GDR == nil || *doc.Fabric.GDR {
		t.Errorf("fabric %+v", doc.Fabric)
	}

	// A study still running has a null recommendation.
	stdout, _, _ = runCLI(t, db, "show", "s4-1M", "--json")
	doc.Recommendation = nil
	var raw map[string]any
	decodeOneJSON(t, stdout, &raw)
	if v, ok := raw["recommendation"]; !ok || v != nil {
		t.Errorf("running study: recommendation = %v (present %v), want null", v, ok)
	}
}

func TestShowUnknownStudy(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"show", "s1-512k-4m"}, []string{`no study "s1-512k-4m"`, "closest: s1-512K-4M"}},
		{[]string{"show", "lab-run"}, []string{"closest: lab-runs"}},
		{[]string{"show", "s9"}, []string{`no study "s9"`, "nccltune history lists them all"}},
		{[]string{"show"}, []string{"show takes one STUDY"}},
		{[]string{"show", "a", "b"}, []string{"show takes one STUDY"}},
	} {
		stdout, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit %d and nothing on stdout", tc.args, code, stdout, exitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q does not say %q", tc.args, stderr, w)
			}
		}
	}
	_, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "none.db"), "show", "s1")
	if code != exitUsage || !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "nccltune search") {
		t.Errorf("show on a missing database: exit %d, %q", code, stderr)
	}
}

// TestShowJSONComparison checks the fields show --json adds to DESIGN.md's
// contract: the per-size comparison (null without a confirmed config) and
// NCCL's choices (null when not recorded).
func TestShowJSONComparison(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	var doc struct {
		Study      string `json:"study"`
		Comparison *struct {
			Baseline struct {
				Label    string `json:"label"`
				Launches int    `json:"launches"`
			} `json:"baseline"`
			Candidate struct {
				Label string            `json:"label"`
				Env   map[string]string `json:"env"`
			} `json:"candidate"`
			Launches string `json:"launches"`
			Rows     []struct {
				Bytes    int64 `json:"bytes"`
				Baseline struct {
					TimeUS   float64  `json:"time_us"`
					TimeLoUS *float64 `json:"time_lo_us"`
					Notes    []int    `json:"notes"`
				} `json:"baseline"`
				Significant bool `json:"significant"`
			} `json:"rows"`
			Notes []string `json:"notes"`
		} `json:"comparison"`
		Choices []any `json:"choices"`
	}
	stdout, stderr, code := runCLI(t, db, "show", "s1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	decodeOneJSON(t, stdout, &doc)
	c := doc.Comparison
	if c == nil {
		t.Fatalf("no comparison in %s", stdout)
	}
	if c.Baseline.Label != "NCCL defaults" || c.Baseline.Launches != 2 || c.Candidate.Env["NCCL_PROTO"] != "^LL128" || c.Launches != "all" {
		t.Errorf("comparison header %+v", c)
	}
	if len(c.Rows) != 1 || c.Rows[0].Bytes != 1<<20 || c.Rows[0].Baseline.TimeUS != 1150.375 || c.Rows[0].Baseline.TimeLoUS != nil ||
		c.Rows[0].Significant || len(c.Rows[0].Baseline.Notes) != 1 || len(c.Notes) != 1 {
		t.Errorf("comparison rows %+v notes %q", c.Rows, c.Notes)
	}
	if doc.Choices != nil {
		t.Errorf("choices %v, want null: the study has no explain launch", doc.Choices)
	}
	stdout, _, _ = runCLI(t, db, "show", "s2", "--json")
	var raw map[string]any
	decodeOneJSON(t, stdout, &raw)
	if v, ok := raw["comparison"]; !ok || v != nil {
		t.Errorf("sweep: comparison = %v (present %v), want null", v, ok)
	}
}

// TestOneScore: show --trials, show --json, the trials CSV and the
// report's scored configs give a trial the same score over the same
// launches; the definition is in show --help and docs/GUIDE.md ("The
// statistics", where README sends a reader for what scores mean); the curves
// CSV numbers launches from 1, as search's progress does.
func TestOneScore(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, progress, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, progress)
	}
	studies, err := stored.Load(db, []string{"s1"}, stored.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configs, err := report.Of(studies[0], launchstats.Figures{}).ScoredConfigs()
	if err != nil {
		t.Fatal(err)
	}
	var base report.ScoredConfig
	for _, c := range configs {
		if c.Role == "baseline" {
			base = c
		}
	}
	want := fmt.Sprintf("%.1f", base.ScoreUS)
	text, _, _ := runCLI(t, db, "show", "s1", "--trials")
	row := regexp.MustCompile(`(?m)^0 +baseline +complete +(\d+) +(\d+) +([\d.]+) `).FindStringSubmatch(text)
	if row == nil || row[2] != fmt.Sprint(base.Launches) || row[3] != want {
		t.Errorf("show --trials baseline row %q, want score %s over %d launches (the report's)\n%s", row, want, base.Launches, text)
	}
	var doc struct {
		Trials []struct {
			Number         int      `json:"number"`
			ScoreUS        *float64 `json:"score_us"`
			ScoredLaunches int      `json:"scored_launches"`
		} `json:"trials"`
	}
	out, _, _ := runCLI(t, db, "show", "s1", "--json")
	decodeOneJSON(t, out, &doc)
	if doc.Trials[0].ScoreUS == nil || *doc.Trials[0].ScoreUS != base.ScoreUS || doc.Trials[0].ScoredLaunches != base.Launches {
		t.Errorf("show --json trial 0: %+v, want %v over %d", doc.Trials[0], base.ScoreUS, base.Launches)
	}
	csvOut, _, _ := runCLI(t, db, "show", "s1", "--format", "csv")
	if !strings.Contains(csvOut, fmt.Sprintf(",%d,%s,", base.Launches, strconv.FormatFloat(base.ScoreUS, 'f', -1, 64))) {
		t.Errorf("csv lacks the baseline's score %v over %d:\n%s", base.ScoreUS, base.Launches, csvOut)
	}
	curves, _, _ := runCLI(t, db, "show", "s1", "--format", "csv", "--curves")
	rows, err := csv.NewReader(strings.NewReader(curves)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Each launch of the CSV is the launch search's progress numbered so,
	// with the same phase and trial.
	said := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^launch (\d+)/\d+ (\w+) +trial (\d+) `).FindAllStringSubmatch(progress, -1) {
		said[m[1]+" "+m[2]+" "+m[3]] = true
	}
	for _, r := range rows[1:] {
		if key := r[3] + " " + r[4] + " " + r[1]; !said[key] {
			t.Fatalf("the curves CSV's launch %s (%s, trial %s) is not search's launch %s", r[3], r[4], r[1], r[3])
		}
	}
	help, _, _ := runCLI(t, db, "show", "--help")
	guide, _ := os.ReadFile(filepath.Join("..", "..", "docs", "GUIDE.md"))
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for name, doc := range map[string]string{"show --help": help, "docs/GUIDE.md": string(guide)} {
		if !strings.Contains(flat(doc), flat(ui.ScoreDefinition)) {
			t.Errorf("%s does not define SCORE", name)
		}
	}
}
