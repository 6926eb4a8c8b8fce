package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "review.db")
	fillReviewDB(t, db)

	// A bare study: its baseline and its recommended trial.
	out := filepath.Join(dir, "s1.png")
	stdout, stderr, code := runCLI(t, db, "plot", "s1-512K-4M", "--out", out)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "2 curves of s1-512K-4M (SIMULATED fabric)") {
		t.Errorf("stderr %q", stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", out, err)
	}
	if img.Bounds().Dx() != 1200 || img.Bounds().Dy() < 700 {
		t.Errorf("PNG %v, want 1200 wide and taller than 700", img.Bounds())
	}

	// Trials by number, from two studies, as SVG, with the curves as JSON.
	svg := filepath.Join(dir, "mixed.svg")
	stdout, stderr, code = runCLI(t, db, "plot", "s1/1", "s2-sweep", "lab-runs/0", "--out", svg, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Out       string `json:"out"`
		Format    string `json:"format"`
		Simulated bool   `json:"simulated"`
		Curves    []struct {
			Study    string            `json:"study"`
			Trial    int               `json:"trial"`
			Label    string            `json:"label"`
			Env      map[string]string `json:"env"`
			Launches int               `json:"launches"`
			Interval string            `json:"interval"`
			Points   []struct {
				Bytes int64    `json:"bytes"`
				BusBW *float64 `json:"busbw"`
			} `json:"points"`
		} `json:"curves"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Out != svg || doc.Format != "svg" || !doc.Simulated || len(doc.Curves) != 3 {
		t.Fatalf("plot --json: %+v", doc)
	}
	c := doc.Curves[0]
	if c.Study != "s1-512K-4M" || c.Trial != 1 || c.Label != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" || c.Launches != 2 || c.Interval != "min–max" ||
		len(c.Points) != 1 || c.Points[0].Bytes != 1<<20 || c.Points[0].BusBW == nil {
		t.Errorf("first curve %+v", c)
	}
	if doc.Curves[1].Study != "s2-sweep" || doc.Curves[2].Label != "NCCL_ALGO=Tree" {
		t.Errorf("curves %+v", doc.Curves)
	}
	body, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(body), "<svg") || !strings.Contains(string(body), "s2-sweep: NCCL defaults") {
		t.Errorf("%s: %v, %.200s", svg, err, body)
	}

	// --all leaves out, and names, the trials without a successful launch.
	_, stderr, code = runCLI(t, db, "plot", "s1", "--all", "--out", filepath.Join(dir, "all.png"))
	if code != 0 || !strings.Contains(stderr, "s1-512K-4M: left out 2 trials with no successful launch (2, 3)") {
		t.Errorf("--all: exit %d, %q", code, stderr)
	}
}

func TestPlotErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "review.db")
	fillReviewDB(t, db)
	png := filepath.Join(dir, "x.png")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", "s1"}, exitUsage, "plot needs --out"},
		{[]string{"plot", "--out", png}, exitUsage, "plot takes one or more STUDY"},
		{[]string{"plot", "s1", "--out", filepath.Join(dir, "x.pdf")}, exitUsage, "name the file .png or .svg"},
		{[]string{"plot", "s1/99", "--out", png}, exitUsage, "study s1-512K-4M has no trial 99 (it has 4 trials"},
		{[]string{"plot", "s1/x", "--out", png}, exitUsage, "is not STUDY or STUDY/TRIAL"},
		{[]string{"plot", "s9", "--out", png}, exitUsage, `no study "s9"`},
		{[]string{"plot", "s1/2", "--out", png}, exitCheckFailed, "trial s1-512K-4M/2 (NCCL_PROTO=LL) has no successful launch to draw (failed: exit status 1: NCCL WARN invalid protocol)"},
		{[]string{"plot", "s4-1M", "--out", png}, exitCheckFailed, "nothing to plot: s4-1M has no successful launch yet"},
		{[]string{"plot", "s1", "--out", filepath.Join(dir, "missing", "x.png")}, exitCheckFailed, "directory"},
		{[]string{"plot", "s1", "--figure", "violin", "--out", png}, exitUsage, "--figure violin is not a figure: use curves, speedup, landscape, convergence"},
		{[]string{"plot", "s1", "--metric", "algbw", "--out", png}, exitUsage, "--metric algbw is not a metric: use busbw or time"},
		{[]string{"plot", "s1", "--figure", "landscape", "--all", "--out", png}, exitUsage, "--figure landscape takes none of them"},
		{[]string{"plot", "s1", "s2", "--figure", "speedup", "--out", png}, exitUsage, "--figure speedup draws one STUDY (got 2 arguments)"},
		{[]string{"plot", "s1/1", "--figure", "convergence", "--out", png}, exitUsage, "draws a whole study"},
		{[]string{"plot", "s2-sweep", "--figure", "landscape", "--out", png}, exitCheckFailed, "study s2-sweep scored no band"},
	} {
		stdout, stderr, code := runCLI(t, db, tc.args...)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(png); !os.IsNotExist(err) {
		t.Errorf("a failed plot left %s behind", png)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".x.png.*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
