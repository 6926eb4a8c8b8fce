package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/search"
)

// --part's and --calls' usage errors come before anything is stored
// (exit 2, no database file): a workload is the calls a process makes,
// or parts and bands, never both.
func TestPartUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"with --band", []string{"--band", "1M-2M", "--part", "all_reduce:1M-2M"}, "--part and --band"},
		{"with --op", []string{"--op", "all_gather", "--part", "all_reduce:1M-2M"}, "drop --op"},
		{"bad part", []string{"--part", "all_reduce"}, "OP:BAND[:WEIGHT]"},
		{"unknown op", []string{"--part", "alltoal:1M-2M"}, "did you mean alltoall"},
		{"overlap", []string{"--part", "all_reduce:1M-2M", "--part", "all_reduce:2M-4M"}, "overlap"},
		{"guarded part", []string{"--part", "all_reduce:1M-2M", "--part", "all_gather:1M-2M", "--guard-ops", "all_gather"}, "part of the workload"},
		{"unknown guard op", []string{"--band", "1M-2M", "--guard-ops", "brodcast"}, "did you mean broadcast"},
		{"guard op twice", []string{"--band", "1M-2M", "--guard-ops", "broadcast,broadcast"}, "twice"},
		{"calls with --part", []string{"--calls", "all_reduce:10240:760", "--part", "all_reduce:1M-2M"}, "drop --part"},
		{"calls with --band", []string{"--calls", "all_reduce:10240:760", "--band", "1M-2M"}, "drop --band"},
		{"calls with --op", []string{"--op", "all_gather", "--calls", "all_reduce:10240:760"}, "drop --op"},
		{"bad call", []string{"--calls", "all_reduce:10240"}, "OP:BYTES:CALLS"},
		{"no calls", []string{"--calls", "all_reduce:10240:0"}, "positive number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			_, stderr, code := runCLI(t, db, append([]string{"search", "--sim", "spark4"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming %q", code, stderr, exitUsage, tt.want)
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("a database was created for a usage error")
			}
		})
	}
}

// A workload study stores its parts, its guarded ops and the settings a
// resume needs; its default budget holds 60 measurements of every op and
// the guards' reserve; it decides with a comparison part by part.
func TestWorkloadStudyStored(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--part", "all_reduce:512K-4M:0.8", "--part", "all_gather:1M-8M:0.2", "--guard-ops", "broadcast")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, db, "s1-512K-8M")
	st := s.study
	if got := nccl.Workload(st.Parts()).String(); got != "all_reduce:512K-4M:0.8 all_gather:1M-8M:0.2" {
		t.Errorf("stored workload %s", got)
	}
	if len(st.GuardOps) != 1 || st.GuardOps[0] != nccl.Broadcast || st.Search == nil || !st.Search.ScopeLists || st.Search.GuardLaunches != search.DefaultGuardLaunches {
		t.Errorf("guard ops %v, settings %+v", st.GuardOps, st.Search)
	}
	if want := 2*search.DefaultBudgetLaunches + 2*search.DefaultGuardLaunches + 1; st.Budget.Launches != want {
		t.Errorf("budget %d, want %d (60 per op, 2×8 for broadcast's guard and 1 to read its plan)", st.Budget.Launches, want)
	}
	rec := st.Recommendation
	if rec == nil || len(rec.Parts) != 2 || rec.Parts[0].Op != nccl.AllReduce || rec.Parts[1].Op != nccl.AllGather || len(rec.Parts[1].PerSize) != 4 {
		t.Fatalf("recommendation parts %+v", rec)
	}
	ops := map[nccl.Op]int{}
	for _, l := range s.launches {
		ops[l.Op.OrAllReduce()]++
	}
	if ops[nccl.AllGather] < 10 || ops[nccl.AllReduce] < ops[nccl.AllGather] {
		t.Errorf("launches per op %v", ops)
	}
	// Broadcast's launches: the guard's, and one that read NCCL's plan of it.
	if rec.Significant && (len(rec.OpGuards) != 1 || ops[nccl.Broadcast] != 2*search.DefaultGuardLaunches+1) {
		t.Errorf("recommended with guards %+v after %d broadcast launches", rec.OpGuards, ops[nccl.Broadcast])
	}

	// show says per part, per guarded op and per op and phase what was
	// measured, in text and JSON.
	stdout, stderr, code := runCLI(t, db, "show", "s1-512K-8M", "--json")
	if code != 0 {
		t.Fatalf("show --json: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Recommendation struct {
			Env         map[string]string `json:"env"`
			Speedup     *float64          `json:"speedup"`
			SpeedupCI   []float64         `json:"speedup_ci"`
			Significant *bool             `json:"significant"`
		} `json:"recommendation"`
		Parts []struct {
			Op        string    `json:"op"`
			Band      string    `json:"band"`
			Weight    float64   `json:"weight"`
			Speedup   float64   `json:"speedup"`
			SpeedupCI []float64 `json:"speedup_ci"`
			ScoreUS   float64   `json:"score_us"`
		} `json:"parts"`
		Guards       []json.RawMessage `json:"guards"`
		LaunchesByOp []struct {
			Op       string         `json:"op"`
			Launches int            `json:"launches"`
			Phases   map[string]int `json:"phases"`
		} `json:"launches_by_op"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Recommendation.Speedup == nil || len(doc.Recommendation.SpeedupCI) != 2 || doc.Recommendation.Significant == nil {
		t.Errorf("recommendation lost DESIGN's fields: %s", stdout)
	}
	if len(doc.Parts) != 2 || doc.Parts[0].Op != "all_reduce" || doc.Parts[0].Band != "512K-4M" || doc.Parts[0].Weight != 0.8 ||
		!(doc.Parts[1].ScoreUS > 0) || len(doc.Parts[1].SpeedupCI) != 2 {
		t.Errorf("parts %+v", doc.Parts)
	}
	if doc.Guards == nil {
		t.Error("guards is null, want a list")
	}
	total := 0
	for _, c := range doc.LaunchesByOp {
		sum := 0
		for _, n := range c.Phases {
			sum += n
		}
		if sum != c.Launches || c.Launches != ops[nccl.Op(c.Op)] {
			t.Errorf("%s: %d launches, phases %v; stored %d", c.Op, c.Launches, c.Phases, ops[nccl.Op(c.Op)])
		}
		total += c.Launches
	}
	if total != len(s.launches) {
		t.Errorf("launches_by_op counts %d launches of %d", total, len(s.launches))
	}
	// The exports carry the per-op table; the tuner CSV has rows for
	// every part's collective and for the guarded broadcast (NCCL's own
	// choices, read by its plan launch), with NCCL's own channel counts,
	// and says what still falls back.
	env, stderr, code := runCLI(t, db, "export", "s1-512K-8M", "--format", "env")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"# per collective, the change in time with the confirmed config", "#   all_reduce (part) 512K-4M: ",
		"#   all_gather (part) 1M-8M: ", "#   broadcast (guard) 512K-16M: "} {
		if !strings.Contains(env, want) {
			t.Errorf("env export lacks %q:\n%s", want, env)
		}
	}
	csv, stderr, code := runCLI(t, db, "export", "s1-512K-8M", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export nccl-tuner: exit %d\n%s", code, stderr)
	}
	if strings.Contains(csv, "FALLS BACK: broadcast") || strings.Contains(csv, "every broadcast") {
		t.Errorf("the guarded broadcast falls back to the plugin's one channel:\n%s", csv)
	}
	for _, want := range []string{"\nbroadcast,0,", "communicators covered (nNodes, nRanks as NCCL counts them): allgather on 4 ranks on 4 nodes; allreduce on 4 ranks on 4", "workload all_reduce:512K-4M:0.8 all_gather:1M-8M:0.2: study s1-512K-8M",
		"# 370728-5931641: proven by study s1-512K-8M", "# 741456-11863283: proven by study s1-512K-8M", "\nallreduce,", "\nallgather,"} {
		if !strings.Contains(csv, want) {
			t.Errorf("tuner export lacks %q:\n%s", want, csv)
		}
	}
	// A proven row gives the count measured there, every other row 0
	// (NCCL's own); -1 would run ONE channel.
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) == 10 && f[5] == "-1" {
			t.Errorf("row of one channel (-1): %s", line)
		}
		if len(f) == 10 && f[0] == "broadcast" && f[5] != "0" {
			t.Errorf("the guarded broadcast's row sets a channel count, though nothing was proven for it: %s", line)
		}
	}
	text, _, _ := runCLI(t, db, "show", "s1-512K-8M")
	for _, want := range []string{"workload     all_reduce:512K-4M:0.8 all_gather:1M-8M:0.2", "guarded ops  broadcast", "parts (confirmation launches",
		"all_gather 1M-8M", "launches per op and phase:"} {
		if !strings.Contains(text, want) {
			t.Errorf("show lacks %q:\n%s", want, text)
		}
	}
}

// A study interrupted while it measures the guarded ops resumes with the
// guard launches it made: every stored guard launch is one of an arm's,
// none is made twice, and an arm gets at most --guard-launches of an op
// (fewer only by what resuming costs: the interrupted launch and the
// resumed study's warm-up, within --budget).
func TestResumeDuringGuards(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	guards := 0
	_, stderr, code := runWatched(ctx, db, func(line string) {
		if strings.HasPrefix(line, "launch ") && strings.Contains(line, " guard ") {
			if guards++; guards == 3 {
				cancel()
			}
		}
	}, "search", "--sim", "spark4", "--band", "512K-4M", "--guard-ops", "all_gather,broadcast")
	if code != exitInterrupted {
		t.Fatalf("exit %d (%d guard launches seen)\n%s", code, guards, stderr)
	}
	if _, stderr, code := runCLI(t, db, "search", "--resume", "s1-512K-4M", "--sim", "spark4"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, db, "s1-512K-4M")
	byOp := map[nccl.Op]int{}
	for _, l := range s.launches {
		if l.Phase == vocab.PhaseGuard && l.Scored {
			byOp[l.Op]++
		}
	}
	rec := s.study.Recommendation
	if rec == nil || len(rec.OpGuards) != 2 {
		t.Fatalf("resumed study: %+v", rec)
	}
	n := search.DefaultGuardLaunches
	for _, g := range rec.OpGuards {
		if g.BaselineLaunches > n || g.CandidateLaunches > n || g.BaselineLaunches+g.CandidateLaunches < 2*n-2 {
			t.Errorf("%s: %d and %d launches per arm, want %d each (2 fewer in all at most)", g.Op, g.BaselineLaunches, g.CandidateLaunches, n)
		}
		if byOp[g.Op] != g.BaselineLaunches+g.CandidateLaunches {
			t.Errorf("%s: %d guard launches stored, %d judged", g.Op, byOp[g.Op], g.BaselineLaunches+g.CandidateLaunches)
		}
	}
	if s.study.Launches > s.study.Budget.Launches {
		t.Errorf("%d launches for a budget of %d", s.study.Launches, s.study.Budget.Launches)
	}
}

// The study config nccltune workload writes (part: a list of strings,
// single-size bands included) is a search's workload as it stands.
func TestWorkloadConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "workload.yaml")
	if err := os.WriteFile(cfg, []byte("# nccltune workload\n"+`part: ["all_reduce:128K:0.71", "all_gather:1M:0.18", "all_reduce:2M:0.11"]`+"\nguard-ops: none\nbudget: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--config", cfg); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	s := storedStudy(t, db, "s1-128K-2M").study
	if got := nccl.Workload(s.Parts()).String(); got != "all_reduce:128K:0.71 all_gather:1M:0.18 all_reduce:2M:0.11" || len(s.GuardOps) != 0 {
		t.Errorf("workload %s, guarded ops %v", got, s.GuardOps)
	}
}

// A band study that guards ops (the process runs them) exports a tuner
// CSV that keeps NCCL's own choice for each guarded op's calls: rows from
// 0 to the top with channels 0, read from the defaults' plan launch of
// that op, so that deploying the CSV changes no all-gather or broadcast
// (without rows the example plugin runs them on ONE channel); the header
// names them covered, and falls back only for the ops nobody recorded.
func TestBandStudyTunerKeepsGuardedOps(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--band", "64K-512K", "--guard-ops", "all_gather,broadcast")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	csv, stderr, code := runCLI(t, db, "export", "s1-64K-512K", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export nccl-tuner: exit %d\n%s", code, stderr)
	}
	for _, bad := range []string{"FALLS BACK: all_gather", "FALLS BACK: broadcast", "every broadcast", "every allgather", "allgather, "} {
		if strings.Contains(csv, bad) {
			t.Errorf("tuner export says %q: a guarded op falls back to the plugin's one channel:\n%s", bad, csv)
		}
	}
	if want := "communicators covered (nNodes, nRanks as NCCL counts them): allgather on 4 ranks on 4 nodes; allreduce on 4 ranks on 4"; !strings.Contains(csv, want) {
		t.Errorf("tuner export lacks %q:\n%s", want, csv)
	}
	top := map[string]bool{}
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) != 10 || f[0] != "allgather" && f[0] != "broadcast" {
			continue
		}
		if f[5] != "0" {
			t.Errorf("a guarded op's row sets %s channels, though nothing was proven for it: %s", f[5], line)
		}
		if f[2] == "18446744073709551615" {
			top[f[0]] = true
		}
	}
	if !top["allgather"] || !top["broadcast"] {
		t.Errorf("rows reach the top size for %v, want allgather and broadcast:\n%s", top, csv)
	}
}

// A band study's tuner CSV gives every size below the band the choice
// NCCL logged at that size's own power of two, never the one at the
// floor of a narrower recorded range stretched down (from 32K, a real
// process's 10 KB all-reduces got NCCL's 32K choice and ran 1.6 times
// slower): the defaults' debug launch sweeps from the smallest size the
// benchmark runs of the op on the study's ranks (4 bytes for all-reduce).
func TestTunerRowsBelowTheBandAreLogged(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	_, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--band", "64K-512K", "--budget", "40")
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	csv, stderr, code := runCLI(t, db, "export", "s1-64K-512K", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export nccl-tuner: exit %d\n%s", code, stderr)
	}
	if want := "recorded by study s1-64K-512K at 4-256M"; !strings.Contains(strings.ReplaceAll(csv, "\n#   ", " "), want) {
		t.Errorf("tuner export lacks %q:\n%s", want, csv)
	}
	js, stderr, code := runCLI(t, db, "export", "s1-64K-512K", "--format", "json")
	if code != 0 {
		t.Fatalf("export json: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Choices []struct {
			Collective string `json:"collective"`
			Bytes      int64  `json:"bytes"`
			Default    *struct {
				Algo  string `json:"algo"`
				Proto string `json:"proto"`
			} `json:"default"`
		} `json:"choices"`
	}
	decodeOneJSON(t, js, &doc)
	logged := map[int64]string{}
	for _, c := range doc.Choices {
		if c.Collective == "AllReduce" && c.Default != nil {
			logged[c.Bytes] = strings.ToLower(c.Default.Algo + "," + c.Default.Proto)
		}
	}
	for b := int64(4); b < 32<<10; b *= 2 {
		if logged[b] == "" {
			t.Errorf("no choice of NCCL's defaults recorded at %d bytes: sizes below the band are stretched from a neighbour", b)
		}
	}
	// The row a 10240-byte call matches holds NCCL's choice logged at 8K.
	matched := false
	for _, line := range strings.Split(csv, "\n") {
		f := strings.Split(line, ",")
		if len(f) != 10 || f[0] != "allreduce" {
			continue
		}
		if atoi(t, f[1]) <= 10240 && 10240 <= atoi(t, f[2]) {
			matched = true
			if f[3]+","+f[4] != logged[8<<10] {
				t.Errorf("10240 bytes run %s,%s, NCCL logged %s at 8K: %s", f[3], f[4], logged[8<<10], line)
			}
		}
	}
	if !matched {
		t.Errorf("no allreduce row matches 10240 bytes:\n%s", csv)
	}
}

func atoi(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A confirmation after a refusal measures both arms afresh, its parts
// too: the calls' rule and the per-part table compare the baseline's
// rounds beside this candidate only. The baseline's rounds beside the
// refused candidates once stayed in its parts (24 baseline launches
// against 8 in every part of the reviewer's study, whose decision read
// 8 and 8): a part was judged against launches not interleaved with the
// candidate's.
func TestRefusalRestartsThePartsToo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--seed", "2",
		"--calls", "all_reduce:10240:240", "--calls", "all_reduce:327680:240", "--calls", "all_reduce:2048000:80",
		"--calls", "all_gather:2048000:13", "--calls", "broadcast:1048576:1"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	rec := storedStudy(t, db, "s1-all_reduce-all_gather-broadcast").study.Recommendation
	if rec == nil || len(rec.Refusals) == 0 || len(rec.Parts) == 0 {
		t.Fatalf("want a decision after a refusal, with parts: %+v", rec)
	}
	for _, p := range rec.Parts {
		for _, z := range p.PerSize {
			if z.BaselineLaunches != rec.BaselineLaunches || z.CandidateLaunches != rec.CandidateLaunches {
				t.Errorf("part %s %s: %d and %d launches per arm, the decision's %d and %d", p.Op, p.Band,
					z.BaselineLaunches, z.CandidateLaunches, rec.BaselineLaunches, rec.CandidateLaunches)
			}
		}
	}
}
