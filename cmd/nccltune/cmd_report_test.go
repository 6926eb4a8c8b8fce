package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// checkReportPage checks what every report must be: one HTML page that
// loads nothing, with the sections a reader looks for.
func checkReportPage(t *testing.T, path string, wants ...string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("%s is not one HTML document", path)
	}
	if m := regexp.MustCompile(`(?i)https?://|<script|<link|<img|@import|url\(|\bsrc=|\bhref=`).FindString(page); m != "" {
		t.Errorf("%s refers to something outside itself: %q", path, m)
	}
	for _, id := range []string{"verdict", "figures", "tables", "choices", "export", "fabric", "settings", "trials"} {
		if !strings.Contains(page, `<section id="`+id+`">`) {
			t.Errorf("%s has no %s section", path, id)
		}
	}
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("%s does not say %q", path, w)
		}
	}
	return page
}

func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "review.db")
	fillReviewDB(t, db)
	out := filepath.Join(dir, "s1.html")
	stdout, stderr, code := runCLI(t, db, "report", "s1-512K-4M", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Out       string `json:"out"`
		Study     string `json:"study"`
		Simulated bool   `json:"simulated"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Out != out || doc.Study != "s1-512K-4M" || !doc.Simulated || !strings.Contains(stderr, "SIMULATED") {
		t.Errorf("report --json %+v, stderr %q", doc, stderr)
	}
	checkReportPage(t, out, `id="simulated"`, "<svg", "Set NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128",
		`id="export-env"`, `id="export-nccl-tuner"`, "NCCL WARN invalid protocol", "NVIDIA GB10")

	// A real sweep: no banner, nothing to export, its curve tabulated.
	sweep := filepath.Join(dir, "sweep.html")
	if _, stderr, code := runCLI(t, db, "report", "s2", "--out", sweep); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	page := checkReportPage(t, sweep, "recommends nothing", "NVIDIA H200", "381.0")
	if strings.Contains(page, "SIMULATED") {
		t.Error("a real sweep's report says SIMULATED")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "s1"}, "report needs --out FILE.html"},
		{[]string{"report", "s1", "--out", filepath.Join(dir, "x.txt")}, "name the file .html"},
		{[]string{"report", "--out", out}, "report takes one STUDY"},
		{[]string{"report", "s9", "--out", out}, `no study "s9"`},
	} {
		stdout, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestReportOfSimulatedSearch runs a whole simulated search, then reports
// and plots it: the path a user takes.
func TestReportOfSimulatedSearch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "sim.db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--seed", "1", "--budget", "30"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "report.html")
	if _, stderr, code := runCLI(t, db, "report", "s1", "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	// The transport comes from the explain launches' channel lines: the
	// timed launches run without NCCL's debug log.
	const paths = "network IB (NET/IB/0, NET/IB/1) between ranks 0-3 across hosts"
	checkReportPage(t, out, `id="simulated"`, "<svg", "band geomean", "8M guard", "interleaved confirmation launches",
		`id="export-k8s"`, "sim-spark4-0", "IB: "+paths)
	stdout, stderr, code := runCLI(t, db, "show", "s1")
	if code != 0 || !strings.Contains(stdout, "band geomean") || !strings.Contains(stdout, "│ NCCL defaults") ||
		!strings.Contains(stdout, "data paths") || !strings.Contains(stdout, paths) {
		t.Errorf("show: exit %d, %s\n%s", code, stderr, stdout)
	}
	js, _, _ := runCLI(t, db, "show", "s1", "--json")
	var shown struct {
		Fabric struct {
			Transport string           `json:"transport"`
			Summary   string           `json:"transport_summary"`
			Routes    []benchfmt.Route `json:"routes"`
		} `json:"fabric"`
	}
	if err := json.Unmarshal([]byte(js), &shown); err != nil || shown.Fabric.Transport != "IB" ||
		!strings.HasPrefix(shown.Fabric.Summary, paths) || len(shown.Fabric.Routes) != 1 {
		t.Errorf("show --json fabric %+v (%v)", shown.Fabric, err)
	}
	if _, stderr, code := runCLI(t, db, "plot", "s1", "--out", filepath.Join(dir, "p.svg")); code != 0 {
		t.Errorf("plot: exit %d: %s", code, stderr)
	}
	checkPlotIsTheTable(t, db, js)
	for _, fig := range []string{"speedup", "landscape", "convergence"} {
		for _, ext := range []string{"png", "svg"} {
			out := filepath.Join(dir, fig+"."+ext)
			stdout, stderr, code := runCLI(t, db, "plot", "s1", "--figure", fig, "--out", out, "--json")
			var doc map[string]any
			if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc["figure"] != fig || doc[fig] == nil {
				t.Errorf("plot --figure %s --out %s: exit %d, %s\n%.300s", fig, out, code, stderr, stdout)
			}
			if st, err := os.Stat(out); err != nil || st.Size() < 1000 {
				t.Errorf("%s: %v", out, err)
			}
		}
	}
	if _, stderr, code := runCLI(t, db, "plot", "s1", "--metric", "time", "--explore", "--out", filepath.Join(dir, "t.png")); code != 0 {
		t.Errorf("plot --metric time --explore: exit %d: %s", code, stderr)
	}
}

// checkPlotIsTheTable: the numbers plot --json draws for a search are the
// numbers show --json's comparison tabulates: the same launches, the same
// medians, size by size.
func checkPlotIsTheTable(t *testing.T, db, showJSON string) {
	t.Helper()
	var shown struct {
		Comparison struct {
			Baseline  struct{ Launches int } `json:"baseline"`
			Candidate struct{ Launches int } `json:"candidate"`
			Rows      []struct {
				Bytes    int64 `json:"bytes"`
				Baseline struct {
					TimeUS   float64 `json:"time_us"`
					Launches int     `json:"launches"`
				} `json:"baseline"`
				Candidate struct {
					TimeUS   float64 `json:"time_us"`
					Launches int     `json:"launches"`
				} `json:"candidate"`
			} `json:"rows"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(showJSON), &shown); err != nil || len(shown.Comparison.Rows) == 0 {
		t.Fatalf("show --json has no comparison (%v)", err)
	}
	stdout, stderr, code := runCLI(t, db, "plot", "s1", "--out", filepath.Join(t.TempDir(), "p.png"), "--json")
	if code != 0 {
		t.Fatalf("plot --json: exit %d: %s", code, stderr)
	}
	var plotted struct {
		Subtitle []string `json:"subtitle"`
		Curves   []struct {
			Label    string `json:"label"`
			Launches int    `json:"launches"`
			Points   []struct {
				Bytes    int64   `json:"bytes"`
				TimeUS   float64 `json:"time_us"`
				Launches int     `json:"launches"`
			} `json:"points"`
		} `json:"curves"`
	}
	decodeOneJSON(t, stdout, &plotted)
	if len(plotted.Curves) != 2 || plotted.Curves[0].Launches != shown.Comparison.Baseline.Launches || plotted.Curves[1].Launches != shown.Comparison.Candidate.Launches {
		t.Fatalf("plotted %+v, tabulated %d and %d launches", plotted.Curves, shown.Comparison.Baseline.Launches, shown.Comparison.Candidate.Launches)
	}
	for _, r := range shown.Comparison.Rows {
		for i, want := range []float64{r.Baseline.TimeUS, r.Candidate.TimeUS} {
			found := false
			for _, p := range plotted.Curves[i].Points {
				if p.Bytes == r.Bytes {
					found = true
					if p.TimeUS != want {
						t.Errorf("%s at %d bytes: plotted %v µs, tabulated %v µs", plotted.Curves[i].Label, r.Bytes, p.TimeUS, want)
					}
				}
			}
			if !found {
				t.Errorf("%s: no plotted point at %d bytes", plotted.Curves[i].Label, r.Bytes)
			}
		}
	}
	if !strings.Contains(strings.Join(plotted.Subtitle, " "), "interleaved confirmation launches") {
		t.Errorf("subtitle %q", plotted.Subtitle)
	}
}
