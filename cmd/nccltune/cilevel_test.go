package main

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/store"
)

// TestIntervalLevelSaidAsStored: a confirmation that decides at an early
// sequential look takes its interval at that look's level (99.26 % here,
// the model's reason says so), and search, show, report, every export and
// the JSON say that level, as the study stored it. Each printed "95% CI"
// beside it, a coverage the interval was not taken at.
func TestIntervalLevelSaidAsStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	// A space of 8 configs explored in full leaves the budget to a
	// confirmation of several looks, whose first decides.
	searchOut, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "1M-4M", "--guard", "none", "--seed", "1", "--budget", "60",
		"--space-only", "--space", "NCCL_MAX_NCHANNELS=unset,2,4,8", "--space", "NCCL_PROTO=unset,Simple", "--json")
	if code != exitOK {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	var doc struct {
		Recommendation struct {
			CILevel     *float64 `json:"ci_level"`
			Significant bool     `json:"significant"`
			Reason      string   `json:"reason"`
		} `json:"recommendation"`
	}
	if err := json.Unmarshal([]byte(searchOut), &doc); err != nil {
		t.Fatalf("search --json: %v\n%s", err, searchOut)
	}
	rec := doc.Recommendation
	if !rec.Significant || !strings.Contains(rec.Reason, "sequential confirmation: look 1 of") {
		t.Fatalf("want a recommendation at the first of several looks; got %+v", rec)
	}
	if rec.CILevel == nil {
		t.Fatalf("search --json stores no ci_level beside its interval: %s", rec.Reason)
	}
	level := store.CILevel(*rec.CILevel)
	if !(level > 0.95 && level < 1) {
		t.Fatalf("ci_level %v: want a sequential look's, above 0.95", level)
	}
	label := level.Label()
	// The decision's reason (the model's words) quotes the level it took
	// the interval at: the one stored.
	var quoted float64
	if i := strings.Index(rec.Reason, " % CI"); i < 0 {
		t.Errorf("the decision's reason quotes no level: %s", rec.Reason)
	} else if _, err := fmt.Sscan(rec.Reason[strings.LastIndex(rec.Reason[:i], " ")+1:i], &quoted); err != nil || math.Abs(quoted-100*float64(level)) > 0.006 {
		t.Errorf("the stored level %v is not the %v %% the decision's reason quotes (%v): %s", level, quoted, err, rec.Reason)
	}

	// Every line that shows the study's speedup with its interval names
	// the stored level, and none says 95 %.
	checkLines := func(what, text, mark string) {
		t.Helper()
		found := false
		for _, line := range strings.Split(text, "\n") {
			if !strings.Contains(line, mark) || !strings.Contains(line, "CI") {
				continue
			}
			found = true
			if !strings.Contains(line, label) || strings.Contains(line, "95% CI") {
				t.Errorf("%s: %q does not say the interval's level %s", what, line, label)
			}
		}
		if !found {
			t.Errorf("%s: no line with %q and its interval:\n%s", what, mark, text)
		}
	}
	plain, stderr, code := runCLI(t, db, "show", "1")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	checkLines("show", plain, "band speedup")
	for _, format := range []string{"env", "sh", "csv"} {
		out, stderr, code := runCLI(t, db, "export", "1", "--format", format)
		if code != exitOK {
			t.Fatalf("export --format %s: exit %d: %s", format, code, stderr)
		}
		checkLines("export "+format, out, "NCCL defaults (")
	}
	for _, args := range [][]string{{"show", "--json", "1"}, {"export", "1", "--format", "json"}} {
		out, stderr, code := runCLI(t, db, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var d struct {
			Recommendation struct {
				CILevel *float64 `json:"ci_level"`
			} `json:"recommendation"`
			CILevel *float64 `json:"ci_level"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		got := d.Recommendation.CILevel
		if got == nil {
			got = d.CILevel
		}
		if got == nil || *got != float64(level) {
			t.Errorf("%v: ci_level %v, want %v", args, got, level)
		}
	}
	page := filepath.Join(dir, "r.html")
	if _, stderr, code := runCLI(t, db, "report", "-o", page, "1"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(data))
	for _, mark := range []string{"band speedup ×", "band 1M–4M: speedup ×", "band score speedup ×"} {
		if !strings.Contains(text, mark) {
			t.Errorf("the report lacks %q", mark)
			continue
		}
		for _, chunk := range strings.Split(text, mark)[1:] {
			if end := strings.Index(chunk, "CI"); end < 0 || !strings.Contains(chunk[:end+2], label) {
				t.Errorf("report: %q%s does not say the interval's level %s", mark, chunk[:min(len(chunk), 60)], label)
			}
		}
	}
}
