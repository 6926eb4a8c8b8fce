package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// searchJSONDoc is the `search --json` contract of DESIGN.md.
type searchJSONDoc struct {
	Study     string `json:"study"`
	Simulated bool   `json:"simulated"`
	Launches  int    `json:"launches"`
	Trials    int    `json:"trials"`
	Baseline  struct {
		ScoreUS *float64 `json:"score_us"`
	} `json:"baseline"`
	Recommendation struct {
		Env         map[string]string `json:"env"`
		Speedup     float64           `json:"speedup"`
		SpeedupCI   []float64         `json:"speedup_ci"`
		Significant bool              `json:"significant"`
		Dropped     []struct {
			Knob   string `json:"knob"`
			Value  string `json:"value"`
			Reason string `json:"reason"`
		} `json:"dropped"`
	} `json:"recommendation"`
	Plans *struct {
		Read            bool `json:"read"`
		SpaceConfigs    int  `json:"space_configs"`
		ConfigsExplored int  `json:"configs_explored"`
		PlansExplored   int  `json:"plans_explored"`
		Merged          []struct {
			Reason string `json:"reason"`
			Count  int    `json:"count"`
		} `json:"merged"`
		Refused int `json:"refused"`
	} `json:"plans"`
}

// TestSearchSpark4 runs the main job end to end on the simulated fabric:
// real child processes, parsing, the store; the recommendation avoids
// LL128 and caps the channels, and the output says SIMULATED.
func TestSearchSpark4(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc searchJSONDoc
	decodeOneJSON(t, stdout, &doc)
	// The budget, less the winner's explain launch when exploration's
	// debug launch of it (checkTwin) already read its plan.
	if !doc.Simulated || doc.Launches < 59 || doc.Launches > 60 || doc.Trials < 10 || doc.Baseline.ScoreUS == nil {
		t.Fatalf("document %+v", doc)
	}
	rec := doc.Recommendation
	if !rec.Significant || rec.Speedup < 3 || len(rec.SpeedupCI) != 2 || rec.SpeedupCI[0] > rec.Speedup || rec.SpeedupCI[1] < rec.Speedup {
		t.Fatalf("recommendation %+v", rec)
	}
	if p := rec.Env["NCCL_PROTO"]; p != "Simple" && p != "^LL128" {
		t.Errorf("recommended protocol %q, want LL128 excluded", p)
	}
	if rec.Env["NCCL_MAX_NCHANNELS"] == "" && rec.Env["NCCL_MAX_CTAS"] == "" {
		t.Errorf("recommendation %v leaves the channel count to NCCL", rec.Env)
	}
	if !strings.Contains(stderr, "SIMULATED") {
		t.Errorf("progress output does not say the fabric is simulated:\n%s", stderr)
	}
	// The store holds the study, every launch, and the explain launches.
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	study, err := st.Study(doc.Study)
	if err != nil || study.Status != vocab.StatusDone || !study.Simulated || study.Recommendation == nil {
		t.Fatalf("stored study %+v, %v", study, err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil || len(launches) != doc.Launches {
		t.Fatalf("%d launches stored, %v", len(launches), err)
	}
	// NCCL's plan is read first: the first launch, which is the warm-up
	// too, is a debug launch of the defaults (the baseline, whose first
	// measured launch comes next); the recommended config's choices are
	// recorded too (by its plan or explain launch).
	if l := launches[0]; l.Phase != vocab.PhasePlan || l.TrialID != launches[1].TrialID || l.Facts == nil || len(l.Facts.Choices) == 0 {
		t.Errorf("launch 0 is %s of trial %d, want the defaults' plan launch with NCCL's choices", l.Phase, l.TrialID)
	}
	recorded := false
	for _, l := range launches {
		if !l.Simulated {
			t.Fatalf("launch %d is not marked simulated", l.Seq)
		}
		if l.Phase == vocab.PhaseExplain || l.Phase == vocab.PhasePlan {
			if l.Facts == nil || len(l.Facts.Choices) == 0 {
				t.Errorf("%s launch %d recorded no NCCL choices", l.Phase, l.Seq)
			}
			if l.TrialID == study.Recommendation.TrialID {
				recorded = true
			}
		}
	}
	if !recorded {
		t.Errorf("no debug launch recorded NCCL's choices with the recommended trial %d", study.Recommendation.TrialID)
	}
	if p := doc.Plans; p == nil || !p.Read || p.SpaceConfigs != 3456 || p.PlansExplored < 2 || p.PlansExplored > p.ConfigsExplored {
		t.Errorf("plans %+v, want NCCL's plan read and the space's 3456 configs counted", p)
	}
	if rec.Dropped == nil {
		t.Errorf("recommendation.dropped is missing (want a list, empty when nothing was left out)")
	}
}

// TestSearchFlat: where no knob matters the answer is to keep the defaults.
func TestSearchFlat(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "flat", "--band", "512K-4M", "--budget", "30")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "keep NCCL defaults: ") {
		t.Errorf("output does not keep the defaults:\n%s", stdout)
	}
	// What the study did with NCCL's plan, in the search output and in show.
	if !strings.Contains(stdout, "NCCL's plan: 3456 configs in the space") {
		t.Errorf("search output does not say what it did with NCCL's plan:\n%s", stdout)
	}
	shown, stderr, code := runCLI(t, db, "show", "s1")
	if code != 0 || !strings.Contains(shown, "NCCL's plan: 3456 configs in the space") || !strings.Contains(shown, "merged ") {
		t.Errorf("show (exit %d) does not say what the study did with NCCL's plan:\n%s%s", code, shown, stderr)
	}
	js, _, _ := runCLI(t, db, "show", "s1", "--json")
	var doc struct {
		Plans *struct {
			Read         bool              `json:"read"`
			SpaceConfigs int               `json:"space_configs"`
			Merged       []json.RawMessage `json:"merged"`
		} `json:"plans"`
	}
	decodeOneJSON(t, js, &doc)
	if doc.Plans == nil || !doc.Plans.Read || doc.Plans.SpaceConfigs != 3456 || len(doc.Plans.Merged) == 0 {
		t.Errorf("show --json plans %+v", doc.Plans)
	}
}

// TestSearchInterruptAndResume: Ctrl-C (a cancelled context) stops the
// study with exit 130 and a resume hint; --resume finishes it without
// repeating a config as a new trial.
func TestSearchInterruptAndResume(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	var out, errOut strings.Builder
	// A budget large enough that the study cannot finish before the
	// cancel, however fast the machine (a 60-launch study takes ~0.4 s).
	err := run(ctx, []string{"nccltune", "--db", db, "search", "--sim", "spark4", "--band", "512K-4M", "--budget", "300"}, &out, &errOut)
	if exitCode(err) != exitInterrupted {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", exitCode(err), err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "--resume s1-512K-4M") {
		t.Fatalf("no resume hint:\n%s", errOut.String())
	}
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := st.Study("s1-512K-4M")
	before := s1.Launches
	st.Close()
	if s1.Status != vocab.StatusInterrupted || before == 0 {
		t.Fatalf("interrupted study: status %s, %d launches", s1.Status, before)
	}

	_, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	st, err = store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s1, _ = st.Study("s1-512K-4M")
	if s1.Status != vocab.StatusDone || s1.Launches < before || s1.Launches > 300 || s1.Recommendation == nil {
		t.Fatalf("resumed study: status %s, %d launches (had %d), recommendation %v", s1.Status, s1.Launches, before, s1.Recommendation)
	}
	trials, _ := st.Trials(s1.ID)
	seen := map[string]bool{}
	for _, tr := range trials {
		if seen[tr.Key] {
			t.Errorf("config %q is two trials", tr.Key)
		}
		seen[tr.Key] = true
	}
}

func TestSearchUsageErrors(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"search", "--sim", "spark4"}, "needs --band"},
		{[]string{"search", "--sim", "spark4", "--band", "4M-512K"}, "did you mean 512K-4M"},
		{[]string{"search", "--sim", "spark4", "--band", "abc"}, "not a number"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--budget", "5"}, "too small"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--space", "NCCL_PORTO"}, "did you mean NCCL_PROTO"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--space", "NCCL_PROTO=Bogus"}, "not one of LL, LL128, Simple"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--base-env", "NCCL_PROTO=LL"}, "either fixed or searched"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--sampler", "annealing"}, "unknown sampler"},
		{[]string{"search", "--band", "512K-4M", "--launcher", "ssh"}, "unknown launcher"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--noise", "-1"}, "cannot be negative"},
		{[]string{"search", "--band", "512K-4M", "--noise", "0"}, "only applies to the simulated fabric"},
		{[]string{"search", "512K-4M"}, "did you mean --band 512K-4M"},
		{[]string{"search", "--band", "512K-4M", "--batch", "4"}, "nccl-tests has no batch mode"},
		{[]string{"search", "--sim", "spark4", "--band", "512K-4M", "--batch", "-2"}, "or 0 to launch every config on its own"},
		{[]string{"search", "--instrument", "torch", "--torch-script", "/opt/x.py", "--launcher", "srun", "--band", "512K-4M"}, "cannot see the batch plan"},
		{[]string{"search", "--instrument", "torch", "--prefix", "docker exec vllm", "--torch-script", "/tmp/x.py", "--band", "512K-4M", "--batch", "4"}, "pass --work-dir DIR"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, db, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestSearchMissingBenchmark: a real run without nccl-tests fails with
// exit 3 and says what to do.
func TestSearchMissingBenchmark(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "search", "--band", "512K-4M", "--bench", "/nonexistent/all_reduce_perf")
	if code != exitFabric || !strings.Contains(stderr, "--bench") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestSweepShowsTheHole: the simulated spark4 defaults take about a
// millisecond at 1 MiB and the seed fix closes the hole.
func TestSweepShowsTheHole(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	type doc struct {
		Simulated bool `json:"simulated"`
		Rows      []struct {
			Bytes  int64   `json:"bytes"`
			TimeUS float64 `json:"time_us"`
			BusBW  float64 `json:"busbw"`
		} `json:"rows"`
	}
	at1M := func(args ...string) float64 {
		stdout, stderr, code := runCLI(t, db, append([]string{"sweep", "--sim", "spark4", "--noise", "0", "--json", "--min", "512K", "--max", "256M"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		var d doc
		decodeOneJSON(t, stdout, &d)
		if !d.Simulated || len(d.Rows) != 10 {
			t.Fatalf("document %+v", d)
		}
		for _, r := range d.Rows {
			if r.Bytes == 1<<20 {
				return r.TimeUS
			}
		}
		t.Fatal("no 1M row")
		return 0
	}
	def, fix := at1M(), at1M("--env", "NCCL_PROTO=^LL128", "--env", "NCCL_MAX_NCHANNELS=8")
	if def < 1000 || def > 1300 || fix < 120 || fix > 160 {
		t.Errorf("1 MiB: defaults %.0f µs (want ≈1150), fixed %.0f µs (want ≈140)", def, fix)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--band", "512K-4M"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, db, "verify", "s1-512K-4M", "--sim", "spark4", "--json")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, stderr)
	}
	var res runresult.VerifyResult
	decodeOneJSON(t, stdout, &res)
	if res.Launches != 10 || !res.Significant || res.Claimed == nil || !res.Consistent || !res.Simulated {
		t.Fatalf("verify result %+v", res)
	}
	if _, stderr, code := runCLI(t, db, "verify", "s1-512K-4M"); code != exitUsage || !strings.Contains(stderr, "simulated fabric") {
		t.Errorf("verifying a simulated study on hardware: exit %d, %s", code, stderr)
	}
}

// TestSearchRefusesDisabledProtocols: where NCCL's defaults keep LL128 off
// (h200-loopback, like the real loopback), NCCL_PROTO=^LL and =LL128 would
// switch it on; the search never launches them unless
// --allow-disabled-protocols says so.
func TestSearchRefusesDisabledProtocols(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		db := filepath.Join(t.TempDir(), "db")
		args := []string{"search", "--sim", "h200-loopback", "--band", "512K-4M", "--space-only", "--space", "NCCL_PROTO",
			"--sampler", "grid", "--budget", "30", "--json"}
		if allow {
			args = append(args, "--allow-disabled-protocols")
		}
		stdout, stderr, code := runCLI(t, db, args...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		var doc searchJSONDoc
		decodeOneJSON(t, stdout, &doc)
		got := storedStudy(t, db, doc.Study)
		launched := false
		for _, tr := range got.trials {
			if p := tr.Config["NCCL_PROTO"]; (p == "^LL" || p == "LL128") && tr.Launches > 0 {
				launched = true
			}
		}
		refused := -1
		if doc.Plans != nil {
			refused = doc.Plans.Refused
		}
		if allow != launched || (allow && refused != 0) || (!allow && refused != 2) {
			t.Errorf("--allow-disabled-protocols %v: LL128 switched on in a launch: %v, refused %d", allow, launched, refused)
		}
		if p := doc.Recommendation.Env["NCCL_PROTO"]; !allow && (p == "^LL" || p == "LL128") {
			t.Errorf("recommended %s without --allow-disabled-protocols", p)
		}
	}
}

// TestBatchSizeFor: --batch defaults to the torch instrument's batches,
// none for nccl-tests (no batch mode) and for the simulated fabric unless
// asked; nccl-tests refuses one.
func TestBatchSizeFor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		given      bool
		n          int
		instrument string
		simulated  bool
		want       int
		err        bool
	}{
		{"nccl-tests", false, 0, benchfmt.InstrumentNCCLTests, false, 0, false},
		{"nccl-tests, no instrument named", false, 0, "", false, 0, false},
		{"torch", false, 0, benchfmt.InstrumentTorch, false, search.DefaultBatchSize, false},
		{"torch, separate launches asked", true, 0, benchfmt.InstrumentTorch, false, 0, false},
		{"torch, 4", true, 4, benchfmt.InstrumentTorch, false, 4, false},
		{"sim", false, 0, "", true, 0, false},
		{"sim, asked", true, 6, "", true, 6, false},
		{"nccl-tests, asked", true, 6, benchfmt.InstrumentNCCLTests, false, 0, true},
		{"negative", true, -1, benchfmt.InstrumentTorch, false, 0, true},
		{"torch, 2: never a batch", true, 2, benchfmt.InstrumentTorch, false, 0, true},
		{"sim, 1: never a batch", true, 1, "", true, 0, true},
		{"torch, the smallest batch", true, search.MinBatchSize, benchfmt.InstrumentTorch, false, search.MinBatchSize, false},
	} {
		got, err := batchSizeFor(tc.given, tc.n, tc.instrument, tc.simulated)
		if got != tc.want || (err != nil) != tc.err || err != nil && !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("%s: %d, %v; want %d, error %v (a usage error)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestSearchViews: the progress shows a leader only when it is not the
// baseline, with its bounds; the summary's looks come from the
// confirmation's design and its candidate only from a confirmation that
// compared one.
func TestSearchViews(t *testing.T) {
	base := &search.Trial{Number: 0, Config: nccl.Config{}}
	best := &search.Trial{Number: 7, Config: nccl.Config{"NCCL_PROTO": "Simple"}}
	ev := search.Event{Seq: 3, Budget: 40, Phase: "explore", Trial: best, Best: base, Baseline: base, BestSpeedup: 1}
	if v := searchEventOf(ev); v.Best != nil || v.Trial != 7 || v.Config.String() != "NCCL_PROTO=Simple" {
		t.Errorf("the baseline leading: %+v, want no leader, trial 7", v)
	}
	ev.Best, ev.BestSpeedup, ev.BestGain = best, 1.2, &search.GainBounds{Lo: 1.1, Hi: 1.3, Interval: true}
	if v := searchEventOf(ev); v.Best == nil || v.Best.Trial != 7 || v.Best.Speedup != 1.2 || v.Best.Gain == nil || !v.Best.Gain.Interval || v.Best.Gain.Hi != 1.3 {
		t.Errorf("trial 7 leading: %+v, want it with its interval", v.Best)
	}
	res := &search.Result{Launches: 30, Trials: []*search.Trial{base, best}, Winner: best, Design: &model.ConfirmDesign{Looks: []int{6, 12}}, Looks: 1}
	if e := searchEndOf(res); e.Trials != 2 || e.PlannedLooks != 2 || e.Looks != 1 || e.Confirmed || e.Candidate.String() != "NCCL_PROTO=Simple" {
		t.Errorf("no decision: %+v, want 2 trials, look 1 of 2, not confirmed", e)
	}
	res.Decision = &model.Comparison{}
	if e := searchEndOf(res); !e.Confirmed {
		t.Errorf("a decision on the winner: %+v, want confirmed", e)
	}
}
