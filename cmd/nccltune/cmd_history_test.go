package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

func TestHistoryTable(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	stdout, stderr, code := runCLI(t, db, "history")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGolden(t, "history/table.golden", []byte(stdout))
}

func TestHistoryJSON(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	stdout, stderr, code := runCLI(t, db, "history", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		Studies []struct {
			Study          string    `json:"study"`
			Band           string    `json:"band"`
			Simulated      bool      `json:"simulated"`
			Trials         int       `json:"trials"`
			Launches       int       `json:"launches"`
			Created        time.Time `json:"created"`
			Kind           string    `json:"kind"`
			Status         string    `json:"status"`
			Recommendation *struct {
				Env         map[string]string `json:"env"`
				Speedup     float64           `json:"speedup"`
				Significant bool              `json:"significant"`
			} `json:"recommendation"`
		} `json:"studies"`
	}
	decodeOneJSON(t, stdout, &doc)
	type row struct {
		study, band, kind, status string
		simulated                 bool
		trials, launches          int
		rec                       bool
	}
	want := []row{
		{"s1-512K-4M", "512K-4M", "search", "done", true, 4, 6, true},
		{"s2-sweep", "32K-256M", "sweep", "done", false, 1, 1, true == false},
		{"lab-runs", "", "import", "done", false, 1, 2, true},
		// Stored as running, but no nccltune holds the database: the
		// process that ran it is gone, so readers say interrupted.
		{"s4-1M", "1M", "search", "interrupted", true, 1, 1, false},
	}
	if len(doc.Studies) != len(want) {
		t.Fatalf("%d studies, want %d:\n%s", len(doc.Studies), len(want), stdout)
	}
	for i, w := range want {
		s := doc.Studies[i]
		got := row{s.Study, s.Band, s.Kind, s.Status, s.Simulated, s.Trials, s.Launches, s.Recommendation != nil}
		if got != w {
			t.Errorf("study %d = %+v, want %+v", i, got, w)
		}
		if time.Since(s.Created) > time.Hour || s.Created.IsZero() {
			t.Errorf("study %d created %v", i, s.Created)
		}
	}
	if r := doc.Studies[0].Recommendation; r.Env["NCCL_PROTO"] != "^LL128" || r.Speedup != 8.125 || !r.Significant {
		t.Errorf("recommendation %+v", r)
	}
	if r := doc.Studies[2].Recommendation; r.Env == nil || len(r.Env) != 0 || r.Significant {
		t.Errorf("keep-defaults recommendation %+v: want env {} and significant false", r)
	}
}

func TestHistoryEmpty(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	for _, tc := range []struct {
		name string
		db   string
	}{
		{"empty database", func() string {
			p := filepath.Join(dir, "empty.db")
			st, err := store.Open(p, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			return p
		}()},
	} {
		stdout, stderr, code := runCLI(t, tc.db, "history")
		if code != 0 || stdout != ui.HowToStart+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, stdout, stderr)
		}
		stdout, _, code = runCLI(t, tc.db, "history", "--json")
		if code != 0 || strings.TrimSpace(stdout) != `{
  "schema_version": 1,
  "studies": []
}` {
			t.Errorf("%s --json: exit %d, stdout %q", tc.name, code, stdout)
		}
	}
	// The default database before any study: no studies yet, not created.
	t.Setenv("NCCLTUNE_DB", "")
	t.Setenv("XDG_DATA_HOME", dir)
	var stdout, stderr bytes.Buffer
	if code := runMain(context.Background(), []string{"history"}, &stdout, &stderr); code != 0 || stdout.String() != ui.HowToStart+"\n" {
		t.Errorf("default database not yet created: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "nccltune", "nccltune.db")); !os.IsNotExist(err) {
		t.Error("history created the default database")
	}
	if _, _, code := runCLI(t, missing, "history", "extra"); code != exitUsage {
		t.Errorf("history with an argument: exit %d, want %d", code, exitUsage)
	}
}

// TestHistoryWhileSearchRuns: a writer (a running search) holds the
// database; history and show still read it.
func TestHistoryWhileSearchRuns(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "review.db")
	fillReviewDB(t, db)
	w, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if stdout, stderr, code := runCLI(t, db, "history"); code != 0 || !strings.Contains(stdout, "s1-512K-4M") {
		t.Fatalf("history while a writer holds the file: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, stderr, code := runCLI(t, db, "show", "s1"); code != 0 || !strings.Contains(stdout, "NCCL_PROTO=^LL128") {
		t.Fatalf("show while a writer holds the file: exit %d\n%s%s", code, stdout, stderr)
	}
}

// BenchmarkHistory is `nccltune history` (open read-only, read the
// summaries, render the table) on a database of 10,000 trials in 40
// studies. Target: < 100 ms.
func BenchmarkHistory(b *testing.B) {
	db := historyBenchDB(b) // once for both sub-benchmarks: about ten seconds
	for _, args := range [][]string{{"history"}, {"history", "--json"}} {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			full := append([]string{"nccltune", "--db", db}, args...)
			for b.Loop() {
				if err := run(context.Background(), full, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// historyBenchDB builds a database of 10,000 trials (each its own
// fsync'ed transaction, as a study writes them) in 40 studies.
func historyBenchDB(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "history.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const studies, trialsPerStudy = 40, 250
	for s := 0; s < studies; s++ {
		study := &store.Study{Kind: vocab.KindSearch, Band: "512K-4M", BandMin: 512 * nccl.KiB, BandMax: 4 * nccl.MiB,
			Simulated: s%2 == 0, Launch: store.LaunchSettings{SimProfile: "spark4"}}
		if err := st.CreateStudy(study); err != nil {
			b.Fatal(err)
		}
		var first *store.Trial
		for i := 0; i < trialsPerStudy; i++ {
			tr := &store.Trial{StudyID: study.ID, Config: nccl.Config{"NCCL_BUFFSIZE": fmt.Sprint(4096 * (i + 1))}, State: vocab.TrialComplete}
			if err := st.AddTrial(tr); err != nil {
				b.Fatal(err)
			}
			if first == nil {
				first = tr
			}
		}
		for i := 0; i < 10; i++ {
			l := &store.Launch{StudyID: study.ID, TrialID: first.ID, Outcome: benchfmt.OK, Scored: true, ScoreUS: 100,
				Sizes: []benchfmt.Size{{Bytes: nccl.MiB, TimeUS: 100, Samples: make([]float64, 100)}}}
			if err := st.AddLaunch(l, &store.Raw{Stdout: []byte("launch output\n")}); err != nil {
				b.Fatal(err)
			}
		}
		study.Status = vocab.StatusDone
		study.Recommendation = &store.Recommendation{Env: map[string]string{"NCCL_BUFFSIZE": "8192"}, Speedup: 1.2, SpeedupCI: [2]float64{1.1, 1.3}, Significant: true}
		if err := st.UpdateStudy(study); err != nil {
			b.Fatal(err)
		}
	}
	return path
}

// TestHistoryKeepsTheBaseline: a study against the user's settings that
// finds nothing better says "keep your baseline (…)" in history, as show
// and the exports do, and history --json's env is those settings (what to
// run), not the {} that means NCCL's defaults.
func TestHistoryKeepsTheBaseline(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "512K-4M", "--budget", "24", "--confirm", "4",
		"--baseline-env", "NCCL_PROTO=^LL128", "--baseline-env", "NCCL_MAX_NCHANNELS=8"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	show, _, _ := runCLI(t, db, "show", "s1")
	if !strings.Contains(show, "keep your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128)") {
		t.Skipf("the flat fabric recommended a change this time:\n%s", show)
	}
	out, _, code := runCLI(t, db, "history")
	if code != 0 || !strings.Contains(out, "keep your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128)") || strings.Contains(out, "keep NCCL defaults") {
		t.Errorf("history:\n%s", out)
	}
	var doc struct {
		Studies []struct {
			Recommendation struct {
				Env     map[string]string `json:"env"`
				Verdict string            `json:"verdict"`
			} `json:"recommendation"`
			BaselineEnv map[string]string `json:"baseline_env"`
		} `json:"studies"`
	}
	out, _, _ = runCLI(t, db, "history", "--json")
	decodeOneJSON(t, out, &doc)
	if len(doc.Studies) != 1 || doc.Studies[0].Recommendation.Env["NCCL_PROTO"] != "^LL128" || !strings.HasPrefix(doc.Studies[0].Recommendation.Verdict, "keep your baseline") || doc.Studies[0].BaselineEnv["NCCL_MAX_NCHANNELS"] != "8" {
		t.Errorf("history --json:\n%s", out)
	}
	for _, args := range [][]string{{"show", "s1", "--json"}, {"export", "s1", "--json"}} {
		out, _, _ := runCLI(t, db, args...)
		if !strings.Contains(out, `"NCCL_PROTO": "^LL128"`) {
			t.Errorf("%v does not give the baseline's env to run:\n%s", args, out)
		}
	}
}

// A database the user names (--db or NCCLTUNE_DB) that does not exist is a
// usage error for every command that only reads studies, naming the path
// and how to list or create one; history said "no studies yet", exit 0.
func TestReviewMissingNamedDB(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"history"},
		{"history", "--json"},
		{"show", "s1-512K-4M"},
		{"export", "s1-512K-4M", "--format", "env"},
		{"report", "s1-512K-4M", "--out", out + ".html"},
		{"plot", "s1-512K-4M", "--out", out + ".svg"},
		{"compare", "s1-512K-4M", "s2-512K-4M"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			for _, how := range []string{"--db", "NCCLTUNE_DB"} {
				var stdout, stderr bytes.Buffer
				argv := append([]string{"--db", missing}, args...)
				if how == "NCCLTUNE_DB" {
					t.Setenv("NCCLTUNE_DB", missing)
					argv = args
				}
				code := runMain(context.Background(), argv, &stdout, &stderr)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want %d\nstdout %q\nstderr %q", how, code, exitUsage, stdout.String(), stderr.String())
				}
				for _, s := range []string{missing + " (--db or NCCLTUNE_DB) does not exist", "nccltune history without --db", "with --db " + missing + " creates"} {
					if !strings.Contains(stderr.String(), s) {
						t.Errorf("%s: stderr lacks %q:\n%s", how, s, stderr.String())
					}
				}
				// --json's error document is the only thing on stdout.
				if json := slices.Contains(args, "--json"); json != strings.Contains(stdout.String(), `"kind": "usage"`) || !json && stdout.Len() != 0 {
					t.Errorf("%s: stdout %q, want nothing but --json's error document", how, stdout.String())
				}
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Error("the command created the database")
			}
		})
	}
}
