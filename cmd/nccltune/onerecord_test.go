package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// Issue 39's done-when test: the study decides once, and every command
// that shows the decision says what search itself said — the verdict's
// words, the baseline's name, a refusal's reason, the speedup with its
// interval, p and alpha, and each size's significance mark.

// recordDoc is what search --json and show --json say of the decision.
type recordDoc struct {
	Baseline struct {
		Env map[string]string `json:"env"`
	} `json:"baseline"`
	Recommendation struct {
		Verdict     string        `json:"verdict"`
		Ending      string        `json:"ending"`
		Reason      string        `json:"reason"`
		Speedup     float64       `json:"speedup"`
		SpeedupCI   [2]float64    `json:"speedup_ci"`
		CILevel     store.CILevel `json:"ci_level"`
		PValue      *float64      `json:"p_value"`
		Significant bool          `json:"significant"`
		PerSize     []sizeMark    `json:"per_size"`
		Guards      []sizeMark    `json:"guards"`
		Parts       []struct {
			Op        string     `json:"op"`
			Band      string     `json:"band"`
			Speedup   float64    `json:"speedup"`
			SpeedupCI [2]float64 `json:"speedup_ci"`
			PerSize   []sizeMark `json:"per_size"`
		} `json:"parts"`
	} `json:"recommendation"`
}

// sizeMark is one size's row of the decision: its significance is the
// mark every table prints ("~" or the change), its medians, speedup, p
// and launches the numbers a one-part study's tables print.
type sizeMark struct {
	Op                string  `json:"op"`
	Bytes             int64   `json:"bytes"`
	Significant       bool    `json:"significant"`
	PValue            float64 `json:"p_value"`
	BaselineUS        float64 `json:"baseline_us"`
	CandidateUS       float64 `json:"candidate_us"`
	Speedup           float64 `json:"speedup"`
	BaselineLaunches  int     `json:"baseline_launches"`
	CandidateLaunches int     `json:"candidate_launches"`
}

// row is the line a benchstat-style table prints for the size: both
// medians, the mark, p and the launches, as search's numbers give them.
func (m sizeMark) row() string {
	us := func(v float64) string {
		if v >= 10000 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	}
	mark, n := "~", strconv.Itoa(m.BaselineLaunches)
	if m.Significant {
		mark = fmt.Sprintf("%+.2f%%", 100*(1/m.Speedup-1))
	}
	if m.CandidateLaunches != m.BaselineLaunches {
		n += "+" + strconv.Itoa(m.CandidateLaunches)
	}
	return fmt.Sprintf("%s %s %s (p=%.3f n=%s)", us(m.BaselineUS), us(m.CandidateUS), mark, m.PValue, n)
}

// baselineName is what the study compared with, in the words search
// uses: derived here from search's own baseline env.
func (d recordDoc) baselineName() string {
	if len(d.Baseline.Env) == 0 {
		return "NCCL defaults"
	}
	return "your baseline (" + nccl.Config(d.Baseline.Env).Key() + ")"
}

// marks are the decision's per-size rows, band then guard sizes then
// every part's.
func (d recordDoc) marks() []sizeMark {
	r := d.Recommendation
	out := append(append([]sizeMark{}, r.PerSize...), r.Guards...)
	for _, p := range r.Parts {
		out = append(out, p.PerSize...)
	}
	return out
}

// pageSection is the text of a report page's section (its figures'
// titles and subtitles included), tags left out and white space collapsed, as a reader sees it.
func pageSection(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `<section id="`+id+`">`)
	if start < 0 {
		t.Fatalf("the report has no %s section", id)
	}
	end := strings.Index(page[start:], "</section>")
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page[start:start+end], " ")
	return strings.Join(strings.Fields(text), " ")
}

// tableRow is a size's row in a benchstat-style table (show's and the
// report's time table) as sizeMark.row writes it: both medians, then the
// "vs base" mark ("~" when not significant, else the change), p and n.
func tableRow(t *testing.T, table, size string) (row string, ok bool) {
	t.Helper()
	m := regexp.MustCompile(`(?m)(?:^|\s)` + regexp.QuoteMeta(size) + `(?: guard)?\s+([0-9.]+) ± \S+[^0-9]*?([0-9.]+) ± .*?\s((?:~|[+-][0-9.]+%) \(p=[0-9.]+ n=[0-9+]+\))`).FindStringSubmatch(table)
	if m == nil {
		return "", false
	}
	return m[1] + " " + m[2] + " " + m[3], true
}

func TestEveryCommandSaysWhatSearchDecided(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs four simulated searches")
	}
	loopback := []string{"--sim", "h200-loopback", "--np", "4"}
	for _, tc := range []struct {
		name string
		args []string
		// alpha is the study's significance level, as the tables say it.
		alpha string
		// want is a word the verdict must hold (the refusal's op).
		want string
	}{
		{"baseline env", []string{"--sim", "spark4", "--band", "512K-4M", "--seed", "1", "--baseline-env", "NCCL_MAX_NCHANNELS=8"}, "0.05", ""},
		// Seed 3: 4M's p is 0.021, significant at 0.05 but not at 0.01.
		{"alpha 0.01", append(loopback, "--band", "512K-4M", "--seed", "3", "--alpha", "0.01"), "0.01", ""},
		// One channel is the loopback's faster all-reduce and slows
		// broadcast at 1M: the guarded op refuses it.
		{"guard refusal", append(loopback, "--band", "512K-4M", "--seed", "1", "--guard-ops", "broadcast",
			"--space-only", "--space", "NCCL_MAX_NCHANNELS=unset,1", "--budget", "40"), "0.05", "broadcast at 8M"},
		{"workload", append(loopback, "--seed", "1", "--budget", "80", "--calls", "all_reduce:10240:760",
			"--calls", "all_reduce:2048000:80", "--calls", "all_gather:1048576:13"), "0.05", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // databases of its own
			dir := t.TempDir()
			db := filepath.Join(dir, "db")
			stdout, stderr, code := runCLI(t, db, append([]string{"search", "--json"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("search --json: exit %d: %s", code, stderr)
			}
			var searched recordDoc
			decodeOneJSON(t, stdout, &searched)
			rec := searched.Recommendation
			verdict, base := rec.Verdict, searched.baselineName()
			if verdict == "" || rec.PValue == nil || !strings.Contains(verdict, tc.want) {
				t.Fatalf("search --json decided %+v: want a verdict naming %q and a p-value", rec, tc.want)
			}
			change := !strings.HasPrefix(verdict, "keep ")
			if !change && !strings.HasPrefix(verdict, "keep "+base+":") {
				t.Errorf("search --json's verdict %q does not keep %s", verdict, base)
			}
			p := *rec.PValue
			speedup := stored.SpeedupText(rec.Speedup, rec.SpeedupCI)

			// search's text, the same study in a database of its own (the
			// seed makes it the same study).
			text, stderr, code := runCLI(t, filepath.Join(dir, "text.db"), append([]string{"search"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("search: exit %d: %s", code, stderr)
			}
			says := func(what, text string, wants ...string) {
				t.Helper()
				for _, w := range wants {
					if !strings.Contains(text, w) {
						t.Errorf("%s does not say %q, as search --json does:\n%s", what, w, text)
					}
				}
			}
			headline := verdict
			if change {
				headline = "recommend: " + verdict
			}
			says("search", text, "\n"+headline+"\n")
			if change {
				says("search", text, speedup, fmt.Sprintf("p=%.3g", p))
			}

			// show --json: the same record, number for number.
			stdout, _, _ = runCLI(t, db, "show", "1", "--json")
			var shown recordDoc
			decodeOneJSON(t, stdout, &shown)
			sr := shown.Recommendation
			if sr.Verdict != verdict || sr.Speedup != rec.Speedup || sr.SpeedupCI != rec.SpeedupCI || sr.PValue == nil || *sr.PValue != p ||
				sr.Significant != rec.Significant || sr.Reason != rec.Reason || fmt.Sprint(shown.marks()) != fmt.Sprint(searched.marks()) {
				t.Errorf("show --json says %+v\nsearch --json said %+v", sr, rec)
			}
			// show's text: the verdict, and each size's mark in its tables.
			shownText, _, _ := runCLI(t, db, "show", "1")
			says("show", shownText, "\nrecommendation: "+verdict+"\n")
			if change {
				says("show", shownText, speedup, fmt.Sprintf("p=%.3g", p))
			}
			if rec.Reason != "" && !change {
				says("show", shownText, rec.Reason)
			}

			// history --json: the verdict in the same words.
			stdout, _, _ = runCLI(t, db, "history", "--json")
			var hist struct {
				Studies []struct {
					Recommendation struct {
						Verdict string `json:"verdict"`
					} `json:"recommendation"`
				} `json:"studies"`
			}
			decodeOneJSON(t, stdout, &hist)
			if len(hist.Studies) != 1 || hist.Studies[0].Recommendation.Verdict != verdict {
				t.Errorf("history --json says %+v, search said %q", hist.Studies, verdict)
			}

			// export --format json: the verdict's words and numbers.
			stdout, stderr, code = runCLI(t, db, "export", "1", "--format", "json")
			if code != exitOK {
				t.Fatalf("export --format json: exit %d: %s", code, stderr)
			}
			var exported struct {
				Verdict      string     `json:"verdict"`
				Speedup      float64    `json:"speedup"`
				SpeedupCI    [2]float64 `json:"speedup_ci"`
				PValue       float64    `json:"p_value"`
				KeepDefaults bool       `json:"keep_defaults"`
				KeepBaseline bool       `json:"keep_baseline"`
			}
			decodeOneJSON(t, stdout, &exported)
			if exported.Verdict != verdict || exported.Speedup != rec.Speedup || exported.SpeedupCI != rec.SpeedupCI || exported.PValue != p ||
				(exported.KeepDefaults || exported.KeepBaseline) == change {
				t.Errorf("export --format json says %+v\nsearch --json said %+v", exported, rec)
			}
			// export --format env: the header's verdict and numbers.
			env, stderr, code := runCLI(t, db, "export", "1", "--format", "env")
			if code != exitOK {
				t.Fatalf("export --format env: exit %d: %s", code, stderr)
			}
			numbers := fmt.Sprintf("%.3gx (%s %.3gx-%.3gx), p=%.2g", rec.Speedup, rec.CILevel.Label(), rec.SpeedupCI[0], rec.SpeedupCI[1], p)
			if change {
				says("export --format env", env, "# speedup "+numbers[:strings.Index(numbers, " ")]+" over "+base+" "+numbers[strings.Index(numbers, " ")+1:])
			} else {
				says("export --format env", env, "# "+verdict+" (best speedup "+numbers+")")
			}

			// report: the verdict section, the decision's subtitle and the
			// per-size tables.
			out := filepath.Join(dir, "x.html")
			if _, stderr, code := runCLI(t, db, "report", "1", "--out", out); code != exitOK {
				t.Fatalf("report: exit %d: %s", code, stderr)
			}
			page := readPage(t, out)
			headline = verdict
			if change {
				headline = "Set " + verdict
			}
			says("the report's verdict", pageSection(t, page, "verdict"), headline)
			if change {
				says("the report's verdict", pageSection(t, page, "verdict"), speedup, fmt.Sprintf("p=%.3g", p))
			}
			if len(rec.Parts) > 0 {
				return // a workload's figures and tables are per op and part
			}
			figures := pageSection(t, page, "figures")
			decided := "recommended"
			if !change {
				decided = "not recommended, keep " + base
			}
			says("the report's decision figure", figures, "vs "+base+":", "speedup "+speedup+" ("+rec.CILevel.Label()+"), p = "+fmt.Sprintf("%.2g", p)+": "+decided)
			tables := pageSection(t, page, "tables")
			says("the report's tables", tables, "(p ≥ "+tc.alpha+")", "(speedup "+speedup+")")
			says("show's tables", shownText, "(p ≥ "+tc.alpha+")", "(speedup "+speedup+")")
			// A one-part study's rows are the record's: search's numbers.
			for _, m := range searched.marks() {
				size := nccl.FormatSize(m.Bytes)
				for what, table := range map[string]string{"the report's tables": tables, "show's tables": shownText} {
					if got, ok := tableRow(t, table, size); !ok {
						t.Errorf("%s have no row for %s", what, size)
					} else if want := m.row(); got != want {
						t.Errorf("%s print %s as %q; search decided %q", what, size, got, want)
					}
				}
			}
		})
	}
}
