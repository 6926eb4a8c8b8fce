package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
)

// The config's calls: is --calls, and refuses part: beside it.
func TestConfigCalls(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	cfg := writeConfig(t, "calls: [all_reduce:10240:760, all_reduce:2048000:80]\npart: [all_gather:1M-2M]\n")
	_, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "drop --part") {
		t.Fatalf("calls: beside part: exit %d, stderr %q; want a usage error", code, stderr)
	}
	// A small budget: the calls named and guarded are what is checked.
	cfg = writeConfig(t, "calls: [all_reduce:10240:760, all_reduce:2048000:80]\nbudget: 30\n")
	stdout, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg, "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := stdout + stderr
	for _, want := range []string{"all_reduce:10240:760", "all_reduce:2048000:80"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name the call %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "guard size") {
		t.Errorf("a timed workload was guarded at a size it never calls:\n%s", out)
	}
}

// search --json of a timed workload says its time per step, baseline and
// candidate, as the verdict does: Σ calls × time, not the band score.
func TestSearchJSONTimePerStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		calls []string
		want  bool
	}{
		{"calls", []string{"--calls", "all_reduce:10240:760", "--calls", "all_reduce:2048000:80"}, true},
		{"band", []string{"--band", "1M-2M"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			// A small budget: what is checked is where the time per step
			// is said, not what the search finds.
			stdout, stderr, code := runCLI(t, db, append([]string{"search", "--sim", "spark4", "--seed", "3", "--budget", "30", "--json"}, tc.calls...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				Baseline struct {
					ScoreUS float64 `json:"score_us"`
				} `json:"baseline"`
				Step *struct {
					Baseline  *float64 `json:"baseline"`
					Candidate *float64 `json:"candidate"`
				} `json:"time_per_step_us"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if !tc.want {
				if doc.Step != nil {
					t.Errorf("a band study has time_per_step_us %+v", doc.Step)
				}
				return
			}
			if doc.Step == nil || doc.Step.Baseline == nil || doc.Step.Candidate == nil {
				t.Fatalf("time_per_step_us = %+v, want baseline and candidate:\n%s", doc.Step, stdout)
			}
			// Several calls: the score is the step time itself.
			if *doc.Step.Baseline != doc.Baseline.ScoreUS || *doc.Step.Baseline < 760*10 {
				t.Errorf("baseline time per step %v, score %v: want the score, at least 760 calls × 10 µs", *doc.Step.Baseline, doc.Baseline.ScoreUS)
			}
		})
	}
}

// TestTimedStudyDescribedByItsCalls (issue 40): the name, show and
// history of a timed study say its calls per op and size, never a band it
// did not measure (was: "s1-8K-2M", "band 8K-2M; sizes 8K 16K … 2M" for a
// study that measured all_reduce at 8K, 64K, 2M and all_gather at 1M).
func TestTimedStudyDescribedByItsCalls(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	timedStudy.copyTo(t, db)
	const calls = "all_reduce 10240×760, 81920×120, 2048000×80; all_gather 1048576×13"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"history"}, []string{"s1-all_reduce-all_gather  search  " + calls}},
		{[]string{"history", "--json"}, []string{`"study": "s1-all_reduce-all_gather"`, `"workload_calls": "` + calls + `"`}},
		{[]string{"show", "1"}, []string{"workload     " + calls + " (OP BYTES×CALLS", "measured at  all_reduce 8K 64K 2M; all_gather 1M"}},
	} {
		stdout, stderr, code := runCLI(t, db, tc.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v lacks %q:\n%s", tc.args, w, stdout)
			}
		}
		if text := strings.Join(tc.args, " "); !strings.Contains(text, "json") && strings.Contains(stdout, "8K-2M") {
			t.Errorf("%v names a band the study did not measure:\n%s", tc.args, stdout)
		}
	}
}

// TestTimedStudyTrialScoresAreTheObjective (issue 40): show --trials
// scores every trial of a timed workload by its rounds' time per step (Σ
// calls × time), the objective the search ranked by and the verdict
// states, and says so. It scored an explored trial by its all_reduce
// launches' band score alone (~600 µs beside the baseline's 338502 µs per
// step), and a failed trial by the op launch that ran before another op
// failed.
func TestTimedStudyTrialScoresAreTheObjective(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	timedStudy.copyTo(t, db)
	stdout, stderr, code := runCLI(t, db, "show", "--trials", "1")
	if code != exitOK {
		t.Fatalf("show --trials: exit %d: %s", code, stderr)
	}
	// A step makes 973 calls: no step takes less than 1 µs per call.
	const floorUS = 760 + 120 + 80 + 13
	scored := 0
	for _, line := range strings.Split(stdout[strings.Index(stdout, "#   ROLE"):], "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 6 {
			break
		}
		state, score := f[2], f[5]
		if score == "—" {
			continue
		}
		us, err := strconv.ParseFloat(score, 64)
		if err != nil {
			t.Fatalf("trial %s: score %q: %v", f[0], score, err)
		}
		if state == "failed" || us < floorUS {
			t.Errorf("trial %s (%s) scored %v µs: not a time per step of %d calls (an op's band score?)\n%s", f[0], state, us, floorUS, line)
		}
		scored++
	}
	if scored < 3 {
		t.Errorf("%d trials scored; want the baseline, the confirmed config and explored ones:\n%s", scored, stdout)
	}
	flat := strings.Join(strings.Fields(stdout), " ")
	for _, w := range []string{"over the trial's scored rounds", "the time per step, Σ calls × time", "SCORED counts those rounds"} {
		if !strings.Contains(flat, w) {
			t.Errorf("show --trials' SCORE definition lacks %q:\n%s", w, stdout)
		}
	}
}

// TestTimedStudyReportSaysItsCalls (issue 40): the report of a timed
// study heads its figures and tables with each op's calls and ranks its
// configs by the time per step, never by a band it did not measure (was
// "all_reduce 8K–2M: bus bandwidth …", a shaded "searched band 8K–2M",
// "band 8K-2M (8192-2097152 bytes)" in every export's header, "ranked by
// band score").
func TestTimedStudyReportSaysItsCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, out := filepath.Join(dir, "db"), filepath.Join(dir, "r.html")
	timedStudy.copyTo(t, db)
	if _, stderr, code := runCLI(t, db, "report", "-o", out, "1"); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	for _, tc := range []struct {
		what string
		want bool
	}{
		{"all_reduce 10240×760, 81920×120, 2048000×80: bus bandwidth by message size", true},
		{"all_gather 1048576×13: speedup by message size", true},
		{"workload all_reduce 10240×760, 81920×120, 2048000×80; all_gather 1048576×13 (OP BYTES×CALLS), measured at all_reduce 8K 64K 2M; all_gather 1M", true},
		{"ranked by time per step", true},
		{"the median of each config's time per step over its rounds", true},
		{"How the search converged (each round at the launch that completed it, one launch of every op scored together)", true},
		{"each scored over its own op's sizes", false},
		{"8K–2M", false},
		{"(8192-2097152 bytes)", false},
		{"searched band", false},
		{"ranked by band score", false},
		// Each op's table shows the calls' rows as the study decided
		// them; a geomean over an op's calls is a score the study never
		// judged, and once printed an interval the decision did not make.
		{"band geomean", false},
	} {
		if got := strings.Contains(page, tc.what); got != tc.want {
			t.Errorf("the report holds %q: %v, want %v", tc.what, got, tc.want)
		}
	}
}

// The convergence figure of a timed study follows what the search ranked
// by: one dot per complete round (one launch of each op), at the launch
// that completed it, with the round's time per step (Σ calls × time), and
// its lines from those. Each op's own launch band score (tens of µs here)
// once stood in for the objective.
func TestTimedStudyConvergenceFollowsRounds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db, svg := filepath.Join(dir, "db"), filepath.Join(dir, "c.svg")
	calls := []struct {
		call string
		n    float64
	}{{"all_reduce:10240:760", 760}, {"all_reduce:81920:120", 120}, {"all_reduce:2048000:80", 80}, {"all_gather:1048576:13", 13}}
	args := []string{"search", "--sim", "h200-loopback", "--np", "4", "--seed", "1", "--budget", "40"}
	floor := 0.0 // Σ calls × 1 µs: no call takes less than a microsecond
	for _, c := range calls {
		args, floor = append(args, "--calls", c.call), floor+c.n
	}
	if _, stderr, code := runCLI(t, db, args...); code != exitOK {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	one, err := stored.LoadOne(db, "1")
	if err != nil {
		t.Fatal(err)
	}
	var rounds []float64
	for _, tr := range one.Trials {
		explore, confirm, ok := launchstats.Figures{}.RoundScores(one.Study, tr.ID, one.Launches)
		if !ok {
			t.Fatalf("a timed study of four calls is not scored by rounds")
		}
		rounds = append(append(rounds, explore...), confirm...)
	}
	c, err := report.Of(one, launchstats.Figures{}).Convergence()
	if err != nil {
		t.Fatal(err)
	}
	var dots []float64
	for _, d := range c.Dots {
		dots = append(dots, d.ScoreUS)
	}
	slices.Sort(dots)
	slices.Sort(rounds)
	if len(rounds) == 0 || !slices.Equal(dots, rounds) {
		t.Errorf("%d dots %v; want the %d complete rounds' time per step %v", len(dots), dots, len(rounds), rounds)
	}
steps:
	for _, st := range c.Steps {
		for _, v := range []float64{st.LeaderUS, st.BaselineUS, st.ConfirmedUS} {
			if v < floor { // NaN (nothing scored yet) compares false
				t.Errorf("launch %d: a line at %v µs, below Σ calls × 1 µs = %v: not a time per step", st.Launch, v, floor)
				break steps
			}
		}
	}
	if _, stderr, code := runCLI(t, db, "plot", "1", "--figure", "convergence", "--out", svg); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	page := html.UnescapeString(readPage(t, svg))
	for _, tc := range []struct {
		what string
		want bool
	}{
		{"time per step (µs, log scale; lower is faster)", true},
		{"band score", false},
	} {
		if got := strings.Contains(page, tc.what); got != tc.want {
			t.Errorf("the convergence figure holds %q: %v, want %v", tc.what, got, tc.want)
		}
	}
}

// A candidate refused before the one the study decided is said by search,
// show, the export's header and the JSON, with why, whether the study then
// recommended another or kept the defaults; and show names the candidate
// the study decided, not the first one it confirmed. On the simulated
// loopback a candidate is refused for one of the workload's calls; then
// a list-only setting is recommended (seed 3), or the budget holds no
// confirmation after the refusal (seed 4 under --budget 120; seed 2's
// last candidate showed no gain until its calls off the powers of two
// were judged at their own sizes, which no longer refuses the first).
func TestRefusedCandidateIsRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seed, budget string
		recommend    bool
	}{{"3", "", true}, {"4", "120", false}} {
		t.Run("seed"+tc.seed, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "db")
			calls := []string{"--calls", "all_reduce:10240:760", "--calls", "all_reduce:81920:100", "--calls", "all_reduce:327680:50", "--calls", "alltoall:8M:2"}
			args := []string{"search", "--sim", "h200-loopback", "--np", "4", "--seed", tc.seed, "--name", "w"}
			if tc.budget != "" {
				args = append(args, "--budget", tc.budget)
			}
			stdout, stderr, code := runCLI(t, db, append(args, calls...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			showJSON, stderr, code := runCLI(t, db, "show", "w", "--json")
			if code != 0 {
				t.Fatalf("show --json: exit %d: %s", code, stderr)
			}
			var doc struct {
				Recommendation struct {
					Env      map[string]string `json:"env"`
					Refusals []struct {
						Env    map[string]string `json:"env"`
						Ending string            `json:"ending"`
						Reason string            `json:"reason"`
					} `json:"refusals"`
				} `json:"recommendation"`
			}
			if err := json.Unmarshal([]byte(showJSON), &doc); err != nil {
				t.Fatal(err)
			}
			if got := len(doc.Recommendation.Env) > 0; got != tc.recommend {
				t.Fatalf("recommends %v, want %v (the seed no longer exercises this ending?):\n%s", doc.Recommendation.Env, tc.recommend, stdout)
			}
			refusals := doc.Recommendation.Refusals
			if len(refusals) == 0 {
				t.Fatalf("no refusal stored (the seed no longer exercises it?):\n%s", stdout)
			}
			refused := refusals[0]
			if refused.Ending != "op-regression" || !strings.Contains(refused.Reason, "for its call") || len(refused.Env) == 0 {
				t.Errorf("stored refusal %+v: want a call's op-regression of a config", refused)
			}
			why, _, _ := strings.Cut(refused.Reason, "; keep")
			show, _, _ := runCLI(t, db, "show", "w")
			export, _, _ := runCLI(t, db, "export", "w", "--format", "env")
			// The tuner CSV's header folds its long comment lines.
			tuner, _, _ := runCLI(t, db, "export", "w", "--format", "nccl-tuner")
			tuner = strings.ReplaceAll(tuner, "\n#   ", " ")
			for name, out := range map[string]string{"search": stdout, "show": show, "export": export, "tuner CSV": tuner} {
				if !strings.Contains(out, "refused earlier") || !strings.Contains(out, why) {
					t.Errorf("%s does not say which candidate was refused and why:\n%s", name, out)
				}
			}
			confirmed := func(out string) string {
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, "confirmed ") {
						_, rest, _ := strings.Cut(l, "interleaved: ")
						return rest
					}
				}
				return ""
			}
			if a, b := confirmed(stdout), confirmed(show); a == "" || a != b {
				t.Errorf("search confirmed %q, show says %q", a, b)
			}
		})
	}
}

// show --format csv --curves of a workload writes every op's launches,
// each row naming its launch's op in the column after phase (was: the
// first part's op alone, with no op column, so an all_reduce 2M row and
// an all_gather 2M row could not be told apart): its rows are exactly the
// stored launches that measured their config, one per size.
func TestTimedStudyCurvesCSVHasEveryOp(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	timedStudy.copyTo(t, db)
	out, stderr, code := runCLI(t, db, "show", "1", "--format", "csv", "--curves")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != exitOK || err != nil || len(rows) < 2 {
		t.Fatalf("show --curves: exit %d, %v: %s\n%s", code, err, stderr, out)
	}
	if head := strings.Join(rows[0][:7], ","); head != "study,trial,env,launch,phase,op,bytes" {
		t.Fatalf("curves CSV header %q, want op after phase", rows[0])
	}
	one, err := stored.LoadOne(db, "s1-all_reduce-all_gather")
	if err != nil {
		t.Fatal(err)
	}
	want, ops := map[string]int{}, map[string]bool{}
	for _, l := range one.Launches {
		if l.Outcome == benchfmt.OK && l.Scored && l.Phase != vocab.PhaseWarmup {
			want[fmt.Sprintf("%d %s %s", l.Seq+1, l.Phase, l.Op.OrAllReduce())] += len(l.Sizes)
			ops[string(l.Op)] = true
		}
	}
	if !ops["all_reduce"] || !ops["all_gather"] {
		t.Fatalf("the study measured %v; want launches of all_reduce and all_gather", ops)
	}
	got := map[string]int{}
	for _, r := range rows[1:] {
		got[r[3]+" "+r[4]+" "+r[5]]++
	}
	if !maps.Equal(got, want) {
		t.Errorf("curves CSV rows per launch, phase and op:\n%v\nwant the stored launches':\n%v", got, want)
	}
}

// --chose belongs to --calls; a choice is well formed and given once.
func TestChoseRefusals(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--band", "64K-128K", "--chose", "all_reduce:81920:ring:simple"}, "give them with --calls"},
		{[]string{"--calls", "all_reduce:81920:10", "--chose", "all_reduce:81920:ring:fast"}, `protocol "fast"`},
		{[]string{"--calls", "all_reduce:81920:10", "--chose", "all_reduce:81920:ring:simple", "--chose", "all_reduce:81920:ring:ll"}, "given twice"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"search", "--sim", "spark4"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("search %v: exit %d, stderr %q; want a usage error saying %q", c.args, code, stderr, c.want)
		}
	}
}

// A study of one call decided on its band score (the call's time): show
// keeps that row and its verdict; a study of several calls decided per
// call and per step, and shows no band score over them
// (TestTimedStudyReportSaysItsCalls).
func TestOneCallStudyKeepsItsBandRow(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--calls", "all_reduce:1048576:100", "--seed", "2", "--budget", "30"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	out, stderr, code := runCLI(t, db, "show", "1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "band geomean") || !strings.Contains(out, "(speedup ×") {
		t.Errorf("show of a one-call study has no band row with its speedup:\n%s", out)
	}
}

// Calls off the powers of two are judged at their own sizes by the
// search (phase exact), and only there: verify re-measures the study's
// parts, and once refused every such recommendation "for lack of
// launches" (exit 1); a call under the smallest size nccl-tests runs (3
// bytes: no whole float) is judged at its power of two, where its own
// size once read a 0-byte row as safe.
func TestCallsAtTheirOwnSizesEndToEnd(t *testing.T) {
	t.Parallel()
	phases := func(db string) map[string]int {
		t.Helper()
		out, stderr, code := runCLI(t, db, "show", "1", "--json")
		if code != 0 {
			t.Fatalf("show --json: exit %d: %s", code, stderr)
		}
		var doc struct {
			ByOp []struct {
				Phases map[string]int `json:"phases"`
			} `json:"launches_by_op"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.ByOp) == 0 {
			t.Fatalf("show --json: %v\n%s", err, out)
		}
		return doc.ByOp[0].Phases
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "g.db")
	sim := []string{"--sim", "h200-loopback", "--np", "4"}
	if _, stderr, code := runCLI(t, db, append([]string{"search", "--seed", "2", "--calls", "all_gather:32760:500", "--calls", "all_gather:2097152:10"}, sim...)...); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if phases(db)["exact"] == 0 {
		t.Fatalf("no launch judged the 32760-byte all-gathers at their own size: %v", phases(db))
	}
	out, stderr, code := runCLI(t, db, append([]string{"verify", "1", "--op", "all_gather"}, sim...)...)
	if code != 0 { // the refusal "for lack of launches" was exit 1
		t.Errorf("verify of the study: exit %d\n%s%s", code, out, stderr)
	}
	small := filepath.Join(dir, "s.db")
	if _, stderr, code := runCLI(t, small, append([]string{"search", "--seed", "2", "--calls", "all_reduce:3:500", "--calls", "all_reduce:2097152:10"}, sim...)...); code != 0 {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if n := phases(small)["exact"]; n != 0 {
		t.Errorf("%d launches measured a 3-byte call at its own size, where nccl-tests times nothing", n)
	}
}
