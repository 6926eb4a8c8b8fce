package main

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
)

// workloadStudy is the simulated workload study of issue 26 (all-reduce
// 512K-4M, all-to-all and broadcast 512K-8M, default guards), which the
// report and plot tests read.
var workloadStudy = &sharedStudy{args: []string{"--sim", "h200-loopback", "--np", "4", "--part", "all_reduce:512K-4M",
	"--part", "alltoall:512K-8M", "--part", "broadcast:512K-8M", "--budget", "150", "--seed", "1"}}

// workloadStudyDB copies workloadStudy into a fresh database of the test's
// own and returns its path.
func workloadStudyDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "workload.db")
	workloadStudy.copyTo(t, db)
	return db
}

// readPage reads a report page as text, its entities decoded.
func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(string(b))
}

// The report of a workload of several parts draws and tabulates every
// part's op (the op in every figure's title and on its value axis), and
// carries the parts table and the launches per op as the study stored
// them, in stored's words; plot of it draws one panel per op.
func TestReportAndPlotOfWorkloadStudy(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	db := workloadStudyDB(t)
	dir := filepath.Dir(db)
	out := filepath.Join(dir, "w.html")
	if _, stderr, code := runCLI(t, db, "report", "s1", "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	checkReportPage(t, out, `<section id="workload">`, `id="launches-by-op"`)
	page := readPage(t, out)
	one, err := stored.LoadOne(db, "s1")
	if err != nil {
		t.Fatal(err)
	}
	rec := one.Study.Recommendation
	if rec == nil || len(rec.Parts) != 3 {
		t.Fatalf("the study stored %+v, want a confirmation of 3 parts", rec)
	}
	verdicts := stored.OpVerdicts(rec)
	for i, p := range rec.Parts {
		// The parts table: the stored speedup, interval and verdict.
		row := "<tr><td>" + string(p.Op) + " " + p.Band + "</td><td class=\"num\">0.33</td>"
		for _, want := range []string{row, stored.SpeedupText(p.Speedup, p.SpeedupCI), verdicts[i].Change, verdicts[i].Verdict} {
			if !strings.Contains(page, want) {
				t.Errorf("the report's parts table has no %q (part %s %s)", want, p.Op, p.Band)
			}
		}
	}
	for _, op := range []nccl.Op{nccl.AllReduce, nccl.AllToAll, nccl.Broadcast} {
		for _, want := range []string{
			`id="fig-busbw-` + string(op) + `"`, `id="fig-time-` + string(op) + `"`, `id="fig-speedup-` + string(op) + `"`, `id="tables-` + string(op) + `"`,
			"s1-512K-8M: " + string(op) + " bus bandwidth by message size", "s1-512K-8M: " + string(op) + " time by message size",
			"s1-512K-8M: " + string(op) + " speedup over NCCL defaults by message size",
			">" + string(op) + " bus bandwidth (GB/s)<", ">" + string(op) + " time per operation (µs, log scale)<",
			">" + string(op) + " speedup over NCCL defaults (log scale)<",
			"<h3>" + string(op) + " time µs</h3>", "<h3>" + string(op) + " busbw GB/s</h3>",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the report has no %q", want)
			}
		}
	}
	// The launches per op: the stored launches counted by stored.
	byOp := stored.LaunchesByOp(one.Study, one.Launches)
	for _, c := range byOp {
		if !strings.Contains(page, "<tr><td>"+string(c.Op)+"</td><td>"+c.For()+"</td>") {
			t.Errorf("the launches table has no row for %s (%s)", c.Op, c.For())
		}
	}
	if want := stored.SpendOf(byOp).Text(); !strings.Contains(page, want) {
		t.Errorf("the report does not say %q", want)
	}
	if len(one.Study.GuardOps) == 0 || !strings.Contains(page, "Guarded ops "+string(one.Study.GuardOps[0])) {
		t.Errorf("the report does not say the guarded ops %v were not measured", one.Study.GuardOps)
	}

	svg := filepath.Join(dir, "w.svg")
	stdout, stderr, code := runCLI(t, db, "plot", "s1", "--out", svg, "--json")
	if code != 0 {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	var doc struct {
		Ops    []string `json:"ops"`
		Panels []struct {
			Op       string           `json:"op"`
			Subtitle []string         `json:"subtitle"`
			Curves   []map[string]any `json:"curves"`
		} `json:"panels"`
		Curves []map[string]any `json:"curves"`
	}
	decodeOneJSON(t, stdout, &doc)
	if strings.Join(doc.Ops, ",") != "all_reduce,alltoall,broadcast" || len(doc.Panels) != 3 || len(doc.Curves) != 6 {
		t.Fatalf("plot --json ops %v, %d panels, %d curves; want a panel of 2 curves per op", doc.Ops, len(doc.Panels), len(doc.Curves))
	}
	drawn := readPage(t, svg)
	for i, p := range doc.Panels {
		if p.Op != doc.Ops[i] || len(p.Curves) != 2 || p.Curves[0]["op"] != p.Op {
			t.Errorf("panel %d: op %s, %d curves (%v)", i, p.Op, len(p.Curves), p.Curves)
		}
		if want := "part " + p.Op + " " + rec.Parts[i].Band; len(p.Subtitle) < 2 || !strings.HasPrefix(p.Subtitle[1], want) {
			t.Errorf("panel %s's subtitle %q does not open its verdict with %q", p.Op, p.Subtitle, want)
		}
		for _, want := range []string{"s1-512K-8M: " + p.Op + " bus bandwidth by message size", ">" + p.Op + " bus bandwidth (GB/s)<"} {
			if !strings.Contains(drawn, want) {
				t.Errorf("the plot has no %q", want)
			}
		}
	}
	if !strings.Contains(stderr, "one panel per op (all_reduce, alltoall, broadcast)") {
		t.Errorf("plot said %q", stderr)
	}

	// The speedup figure: one panel per op too, each with its op's
	// comparison.
	stdout, stderr, code = runCLI(t, db, "plot", "s1", "--figure", "speedup", "--out", svg, "--json")
	if code != 0 {
		t.Fatalf("plot --figure speedup: exit %d: %s", code, stderr)
	}
	var sp struct {
		Speedup []struct {
			Op     string `json:"op"`
			Figure struct {
				Rows []struct {
					Bytes int64 `json:"bytes"`
				} `json:"rows"`
			} `json:"figure"`
		} `json:"speedup"`
	}
	decodeOneJSON(t, stdout, &sp)
	if len(sp.Speedup) != 3 || sp.Speedup[1].Op != "alltoall" || len(sp.Speedup[1].Figure.Rows) != 6 {
		t.Errorf("plot --figure speedup --json %+v, want a panel per op, alltoall's with its 5 band sizes and the guard size", sp)
	}
	drawn = readPage(t, svg)
	for _, op := range doc.Ops {
		if want := "s1-512K-8M: " + op + " speedup over NCCL defaults by message size"; !strings.Contains(drawn, want) {
			t.Errorf("the speedup plot has no %q", want)
		}
	}

	// A trial's curves (or --all) are the study's first op's: said so.
	if _, stderr, code := runCLI(t, db, "plot", "s1/0", "--out", svg); code != 0 || !strings.Contains(stderr, "its all_reduce launches only") {
		t.Errorf("plot s1/0: exit %d, stderr %q", code, stderr)
	}
}

// A workload whose guarded op refused the recommendation: the report's
// guarded-ops table names the op, its change and the refusal in stored's
// words.
func TestReportOfWorkloadGuards(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "workload.db")
	fillWorkloadDB(t, db)
	out := filepath.Join(filepath.Dir(db), "w.html")
	if _, stderr, code := runCLI(t, db, "report", "s1", "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page := readPage(t, out)
	one, err := stored.LoadOne(db, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var guard stored.OpVerdict
	for _, v := range stored.OpVerdicts(one.Study.Recommendation) {
		if v.Kind == "guard" {
			guard = v
		}
	}
	row := "<tr><td>alltoall</td><td>" + guard.Sizes + "</td><td class=\"num\">" + guard.Change + "</td><td>" + guard.Worst +
		"</td><td class=\"num\">2 + 2</td><td class=\"worse\">" + guard.Verdict + "</td></tr>"
	if guard.Op != nccl.AllToAll || !strings.Contains(page, row) || !strings.Contains(guard.Verdict, "REFUSED") {
		t.Errorf("the report's guarded-ops table has no row %q", row)
	}
	for _, want := range []string{"all_reduce 512K-1M", "broadcast 512K-1M", "alltoall</td><td>guarded</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
}

// The report of a one-part study with guarded ops shows what its
// confirmed config did to them (as show and the export header do), and
// no parts table; a one-part study without guarded ops has no such
// section at all.
func TestReportOfOnePartGuards(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	db := filepath.Join(t.TempDir(), "guarded.db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--band", "512K-4M",
		"--guard-ops", "alltoall,broadcast", "--seed", "2", "--name", "g"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--band", "512K-4M",
		"--seed", "2", "--name", "plain"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	out := filepath.Join(filepath.Dir(db), "g.html")
	if _, stderr, code := runCLI(t, db, "report", "g", "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page := readPage(t, out)
	one, err := stored.LoadOne(db, "g")
	if err != nil {
		t.Fatal(err)
	}
	verdicts := stored.OpVerdicts(one.Study.Recommendation)
	if len(verdicts) != 2 {
		t.Fatalf("the study stored %d guard verdicts, want alltoall and broadcast measured: %+v", len(verdicts), one.Study.Recommendation)
	}
	for _, v := range verdicts {
		row := "<tr><td>" + string(v.Op) + "</td><td>" + v.Sizes + "</td><td class=\"num\">" + v.Change + "</td>"
		if !strings.Contains(page, row) || !strings.Contains(page, v.Verdict) {
			t.Errorf("the report has no guarded-ops row %q … %q", row, v.Verdict)
		}
	}
	if !strings.Contains(page, `<h2 id="guards">Guarded ops</h2>`) || strings.Contains(page, "The workload's parts") {
		t.Errorf("a one-part study's page should have the guarded ops under their own heading and no parts table")
	}
	plain := filepath.Join(filepath.Dir(db), "plain.html")
	if _, stderr, code := runCLI(t, db, "report", "plain", "--out", plain); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if p := readPage(t, plain); strings.Contains(p, `<section id="workload">`) {
		t.Errorf("a one-part study without guarded ops has a workload section")
	}
}

// The convergence of a workload study pools every part's launches: its
// title names the workload, not the first op alone.
func TestConvergenceTitleOfWorkload(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	db := workloadStudyDB(t)
	out := filepath.Join(filepath.Dir(db), "c.svg")
	if _, stderr, code := runCLI(t, db, "plot", "s1", "--figure", "convergence", "--out", out); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	if page := readPage(t, out); !strings.Contains(page, "workload of all_reduce, alltoall, broadcast: how the search converged") {
		t.Errorf("the convergence figure's title does not name the workload")
	}
}

// A verify of a workload study draws and reports like its search: the
// curves figure keeps the verify's own first subtitle line, which it does
// not have, and adds the stored parts' verdicts. Before, both commands
// panicked slicing the missing line (internal/report/parts.go).
func TestVerifyOfWorkloadPlotsAndReports(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated verify")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	timedStudy.copyTo(t, db)
	if _, stderr, code := runCLI(t, db, "verify", "s1-all_reduce-all_gather", "--sim", "h200-loopback", "--np", "4", "--launches", "4"); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"plot", "s2-verify", "--figure", "curves", "--out", filepath.Join(dir, "curves.svg")},
		{"report", "s2-verify", "--out", filepath.Join(dir, "report.html")},
	} {
		if _, stderr, code := runCLI(t, db, args...); code != 0 {
			t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		if _, err := os.Stat(args[len(args)-1]); err != nil {
			t.Errorf("%s wrote nothing: %v", args[0], err)
		}
	}
}
