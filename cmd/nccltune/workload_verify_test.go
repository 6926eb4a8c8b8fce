package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
)

// verifyDoc is what the workload tests read of verify --json.
type verifyDoc struct {
	Study       string     `json:"study"`
	Speedup     float64    `json:"speedup"`
	SpeedupCI   [2]float64 `json:"speedup_ci"`
	Significant bool       `json:"significant"`
	Consistent  bool       `json:"consistent"`
	Ending      string     `json:"ending"`
	Verdict     string     `json:"verdict"`
	Refused     string     `json:"refused"`
	Failed      bool       `json:"failed"`
	Parts       []struct {
		Op        string     `json:"op"`
		Band      string     `json:"band"`
		Weight    float64    `json:"weight"`
		Speedup   float64    `json:"speedup"`
		SpeedupCI [2]float64 `json:"speedup_ci"`
		Verdict   string     `json:"verdict"`
		PerSize   []struct {
			Bytes int64 `json:"bytes"`
		} `json:"per_size"`
	} `json:"parts"`
	Guards []struct {
		Op                string `json:"op"`
		Refused           bool   `json:"refused"`
		BaselineLaunches  int    `json:"baseline_launches"`
		CandidateLaunches int    `json:"candidate_launches"`
		Verdict           string `json:"verdict"`
	} `json:"guards"`
	LaunchesByOp []struct {
		Op     string         `json:"op"`
		Role   string         `json:"role"`
		Phases map[string]int `json:"phases"`
	} `json:"launches_by_op"`
	Spent struct {
		Parts  int `json:"parts"`
		Guards int `json:"guards"`
	} `json:"launches_spent"`
	Tuner *struct {
		PerOp []struct {
			Op    string `json:"op"`
			Check struct {
				Applied int `json:"applied"`
				NoMatch int `json:"no_match"`
			} `json:"check"`
		} `json:"per_op"`
		Warnings []struct{ Message string } `json:"warnings"`
	} `json:"tuner_plugin"`
}

// verify of a workload study measures every part's op at its band, the
// study's launches per arm, interleaved with NCCL's defaults, and
// reports each part and the combined score the search claimed; a config
// a guarded op (or a part) finds significantly slower by more than the
// minimum effect is refused and fails verify (exit 1), naming the op.
func TestVerifyWorkload(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	db := filepath.Join(t.TempDir(), "db")
	// A budget of 60 (the default is 60 an op and 8 for the guard): what
	// is verified is the study's record, whatever its search found.
	if _, stderr, code := runCLI(t, db, "search", "--sim", "h200-loopback", "--np", "4", "--seed", "2", "--budget", "60",
		"--part", "all_reduce:512K-4M:0.75", "--part", "all_gather:512K-4M:0.25", "--guard-ops", "broadcast"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, db, "verify", "s1", "--sim", "h200-loopback", "--np", "4", "--launches", "6", "--json")
	var doc verifyDoc
	decodeOneJSON(t, stdout, &doc)
	if (code == 0) == doc.Failed {
		t.Fatalf("verify: exit %d with failed %v\n%s", code, doc.Failed, stderr)
	}
	if len(doc.Parts) != 2 || doc.Parts[0].Op != "all_reduce" || doc.Parts[1].Op != "all_gather" || doc.Parts[1].Band != "512K-4M" ||
		doc.Parts[0].Weight != 0.75 || len(doc.Parts[1].PerSize) != 4 || !(doc.Parts[1].SpeedupCI[0] > 0) || doc.Parts[0].Verdict == "" {
		t.Errorf("parts %+v", doc.Parts)
	}
	phases := map[string]map[string]int{}
	for _, c := range doc.LaunchesByOp {
		phases[c.Op] = c.Phases
	}
	if phases["all_reduce"]["confirm"] != 12 || phases["all_gather"]["confirm"] != 12 {
		t.Errorf("confirmation launches per op %v, want 6 per arm of each part's op", phases)
	}
	// The claim checked is the study's combined score, and so is the
	// fresh speedup (not the first op's).
	verify := storedStudy(t, db, doc.Study).study
	if len(verify.Workload) != 2 || verify.Recommendation == nil || len(verify.Recommendation.Parts) != 2 || verify.Recommendation.Speedup != doc.Speedup {
		t.Errorf("the verify study stored %+v", verify.Recommendation)
	}
	// One channel makes broadcast slower on the loopback: the guard
	// measures it (the study's 8 launches per arm) and refuses it, and
	// verify fails naming broadcast.
	stdout, _, code = runCLI(t, db, "verify", "s1", "--sim", "h200-loopback", "--np", "4", "--env", "NCCL_MAX_NCHANNELS=1", "--json")
	doc = verifyDoc{}
	decodeOneJSON(t, stdout, &doc)
	if code != exitCheckFailed || !doc.Failed || doc.Ending != "op-regression" || !strings.Contains(doc.Refused, "broadcast") ||
		!strings.Contains(doc.Verdict, "broadcast") || len(doc.Guards) != 1 || !doc.Guards[0].Refused ||
		doc.Guards[0].BaselineLaunches != 8 || doc.Spent.Guards != 16 {
		t.Errorf("one channel: exit %d, %+v", code, doc)
	}
	text, _, _ := runCLI(t, db, "verify", "s1", "--sim", "h200-loopback", "--np", "4", "--env", "NCCL_MAX_NCHANNELS=1")
	for _, want := range []string{"all_gather 512K ", "fresh workload speedup", "parts (confirmation launches", "guarded ops (change in time",
		"launches per op and phase:", "refused: keep NCCL defaults: the candidate makes broadcast at"} {
		if !strings.Contains(text, want) {
			t.Errorf("verify's text lacks %q:\n%s", want, text)
		}
	}
}

// verify --tuner-plugin of a workload study makes one debug launch per
// op of the workload: each shows the plugin applied to that op's calls.
func TestVerifyWorkloadTunerPlugin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--seed", "1", "--budget", "60", "--guard-ops", "none",
		"--part", "all_reduce:512K-4M:0.8", "--part", "all_gather:1M-8M:0.2"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	so := filepath.Join(dir, "tuner.so")
	if err := os.WriteFile(so, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", so)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	var doc verifyDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tuner == nil || len(doc.Tuner.PerOp) != 2 || doc.Tuner.PerOp[0].Op != "all_reduce" || doc.Tuner.PerOp[1].Op != "all_gather" {
		t.Fatalf("tuner checks %+v", doc.Tuner)
	}
	for _, c := range doc.Tuner.PerOp {
		if c.Check.Applied == 0 || c.Check.NoMatch != 0 {
			t.Errorf("%s's debug launch: %+v, want the plugin applied to every call", c.Op, c.Check)
		}
	}
	if len(doc.Parts) != 2 {
		t.Errorf("parts %+v", doc.Parts)
	}
}

// compare's fresh form takes --part as search does: each measurement one
// launch per part's op, B over A per part and over the parts' combined
// score; --guard-ops measures other ops for a B that is faster. Its
// flag errors come before anything is stored, and the stored form
// refuses the fresh form's flags.
func TestCompareWorkload(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--part", "all_reduce:1M-2M", "--band", "1M-2M"}, "--part and --band"},
		{[]string{"--part", "all_reduce:1M-2M", "--op", "all_gather"}, "drop --op"},
		{[]string{"--band", "1M-2M", "--guard-ops", "brodcast"}, "did you mean broadcast"},
		{[]string{"--part", "all_reduce:1M-2M", "--part", "all_gather:1M-2M", "--guard-ops", "all_gather"}, "part of the workload"},
		{[]string{"--part", "all_reduce:1M-2M", "--guard-launches", "1"}, "--guard-launches 1"},
		{[]string{}, "compare needs --band"},
	} {
		_, stderr, code := runCLI(t, db, append([]string{"compare", "--sim", "h200-loopback", "--np", "4", "--env-b", "NCCL_MAX_NCHANNELS=1"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d naming %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if _, stderr, code := runCLI(t, db, "compare", "s1", "s2", "--part", "all_reduce:1M-2M"); code != exitUsage || !strings.Contains(stderr, "--part is for a fresh comparison") {
		t.Errorf("the stored form with --part: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a database was created for a usage error")
	}
	if testing.Short() {
		return
	}
	stdout, stderr, code := runCLI(t, db, "compare", "--sim", "h200-loopback", "--np", "4", "--launches", "6", "--json", "--guard-ops", "none",
		"--part", "all_reduce:512K-4M:0.8", "--part", "alltoall:512K-8M:0.2", "--env-b", "NCCL_MAX_NCHANNELS=1")
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	var doc verifyDoc
	decodeOneJSON(t, stdout, &doc)
	if len(doc.Parts) != 2 || doc.Parts[0].Op != "all_reduce" || doc.Parts[1].Op != "alltoall" || len(doc.Parts[1].PerSize) != 5 || len(doc.Guards) != 0 {
		t.Errorf("parts %+v, guards %+v", doc.Parts, doc.Guards)
	}
	// The combined speedup lies between the parts' (a weighted geometric
	// mean of them over each launch's round).
	lo, hi := min(doc.Parts[0].Speedup, doc.Parts[1].Speedup), max(doc.Parts[0].Speedup, doc.Parts[1].Speedup)
	if !(doc.Speedup > lo*0.97 && doc.Speedup < hi*1.03) || !(doc.Parts[0].Speedup > 1.05) {
		t.Errorf("combined speedup %.3f, parts %.3f and %.3f", doc.Speedup, doc.Parts[0].Speedup, doc.Parts[1].Speedup)
	}
	phases := map[string]int{}
	for _, c := range doc.LaunchesByOp {
		phases[c.Op] = c.Phases["confirm"]
	}
	if phases["all_reduce"] != 12 || phases["alltoall"] != 12 {
		t.Errorf("confirmation launches per op %v", phases)
	}
}

// verify --tuner-plugin of a timed workload judges the CSV as delivered:
// at every (op, size) the workload calls and, per op, at the power of
// two just outside the sizes it proved, where a stretched row changes
// what NCCL runs though the workload's parts never measure it. The
// study's own CSV passes; a CSV whose all_gather row past the proven 1M
// is stretched to the top with one channel of LL makes all_gather
// slower at 2M: verify names it and exits 1.
func TestVerifyTimedWorkloadTunerCSV(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	// A budget of 60 (the default is 60 an op): the CSV verified is the
	// study's recommendation, whatever its search spent to find it.
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--seed", "1", "--budget", "60",
		"--calls", "all_reduce:2097152:80", "--calls", "all_reduce:8388608:20", "--calls", "all_gather:1048576:13"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	so := filepath.Join(dir, "tuner.so")
	if err := os.WriteFile(so, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	type guard struct {
		Op      string  `json:"op"`
		Refused bool    `json:"refused"`
		Sizes   []int64 `json:"sizes"`
		PerSize []struct {
			Bytes  int64 `json:"bytes"`
			Slower bool  `json:"slower"`
		} `json:"per_size"`
	}
	type doc struct {
		Failed      bool    `json:"failed"`
		Refused     string  `json:"refused"`
		Reason      string  `json:"reason"`
		Guards      []guard `json:"guards"`
		TunerPlugin struct {
			EqualByRule []struct {
				Op    string  `json:"op"`
				Sizes []int64 `json:"sizes"`
			} `json:"equal_by_rule"`
		} `json:"tuner_plugin"`
	}
	// Each op's called sizes (all_reduce 2M and 8M, not the 4M between
	// them it never calls; all_gather 1M) and the power of two on each
	// side of them.
	want := map[string][]int64{"all_reduce": {1 << 20, 2 << 20, 8 << 20, 16 << 20}, "all_gather": {512 << 10, 1 << 20, 2 << 20}}
	stretched := filepath.Join(dir, "stretched.csv")
	if err := os.WriteFile(stretched, []byte("allgather,0,92681,ring,ll,0,4,4,-1,-1\n"+
		"allgather,92682,741455,ring,ll128,0,4,4,-1,-1\n"+
		"allgather,741456,1482910,ring,simple,8,4,4,-1,-1\n"+
		"allgather,1482911,18446744073709551615,ring,ll,1,4,4,-1,-1\n"+
		"allreduce,0,92681,tree,ll,0,4,4,-1,-1\n"+
		"allreduce,92682,1482910,ring,ll128,0,4,4,-1,-1\n"+
		"allreduce,1482911,2965820,ring,simple,8,4,4,-1,-1\n"+
		"allreduce,2965821,5931641,ring,simple,0,4,4,-1,-1\n"+
		"allreduce,5931642,11863283,ring,simple,8,4,4,-1,-1\n"+
		"allreduce,11863284,18446744073709551615,ring,simple,0,4,4,-1,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The study's own CSV keeps NCCL's choice at 4M, between all_reduce's
	// calls: equal by rule, not judged. One that gives 4M one channel of
	// LL is judged there, and fails.
	own, stderr, code := runCLI(t, db, "export", "s1", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	gap := filepath.Join(dir, "gap.csv")
	if err := os.WriteFile(gap, []byte("allreduce,2965821,5931641,ring,ll,1,4,4,-1,-1\n"+own), 0o644); err != nil {
		t.Fatal(err)
	}
	equal4M := []string{"all_reduce [4194304]"}
	if text, _, _ := runCLI(t, db, "verify", "s1", "--sim", "spark4", "--launches", "6", "--tuner-plugin", so); !strings.Contains(text, "all_reduce at 4M: equal by rule, not judged: the CSV keeps NCCL's own choice there") {
		t.Errorf("verify's text does not say 4M is equal by rule:\n%s", text)
	}
	for _, tc := range []struct {
		name     string
		csv      []string
		code     int
		refused  string
		slowerAt map[string]int64 // the one size of each op judged slower
		equal    []string         // the gaps equal by rule
		judged   []int64          // all_reduce's judged sizes, when not want's
	}{
		{"the study's CSV", nil, 0, "", nil, equal4M, nil},
		{"all_gather stretched past 1M", []string{"--tuner-config", stretched}, exitCheckFailed, "all_gather at 2M", map[string]int64{"all_gather": 2 << 20}, equal4M, nil},
		{"one channel of LL at 4M", []string{"--tuner-config", gap}, exitCheckFailed, "all_reduce at 4M", map[string]int64{"all_reduce": 4 << 20}, nil,
			[]int64{1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20}},
	} {
		args := append([]string{"verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", so}, tc.csv...)
		stdout, stderr, code := runCLI(t, db, args...)
		var d doc
		decodeOneJSON(t, stdout, &d)
		if code != tc.code || d.Failed != (tc.code != 0) || d.Refused != tc.refused {
			t.Errorf("%s: exit %d, failed %v, refused %q; want exit %d, refused %q\n%s\n%s", tc.name, code, d.Failed, d.Refused, tc.code, tc.refused, d.Reason, stderr)
		}
		for op, at := range tc.slowerAt {
			if slow := op + " significantly slower at " + nccl.FormatSize(at); !strings.Contains(d.Reason, slow) {
				t.Errorf("%s: the reason does not say %q: %s", tc.name, slow, d.Reason)
			}
		}
		var equal []string
		for _, e := range d.TunerPlugin.EqualByRule {
			equal = append(equal, fmt.Sprintf("%s %v", e.Op, e.Sizes))
		}
		if !slices.Equal(equal, tc.equal) {
			t.Errorf("%s: equal by rule %v, want %v", tc.name, equal, tc.equal)
		}
		judged := map[string]bool{}
		for _, g := range d.Guards {
			judged[g.Op] = true
			sizes := want[g.Op]
			if g.Op == "all_reduce" && tc.judged != nil {
				sizes = tc.judged
			}
			if !slices.Equal(g.Sizes, sizes) {
				t.Errorf("%s: %s judged at %v, want %v", tc.name, g.Op, g.Sizes, sizes)
			}
			if g.Refused != (tc.slowerAt[g.Op] != 0) {
				t.Errorf("%s: %s refused %v", tc.name, g.Op, g.Refused)
			}
			for _, s := range g.PerSize {
				if s.Slower != (s.Bytes == tc.slowerAt[g.Op]) {
					t.Errorf("%s: %s at %d bytes: slower %v", tc.name, g.Op, s.Bytes, s.Slower)
				}
			}
		}
		if !judged["all_reduce"] || !judged["all_gather"] {
			t.Errorf("%s: judged %v, want both ops of the workload", tc.name, judged)
		}
	}
}

// verify --tuner-plugin of a study whose process calls a size off the
// powers of two measures the CSV at that size itself (the launch request
// the search's own-size check makes: nccl-tests -b 49152 -e 49152), each
// arm after each of its measured launches, and judges it with the
// delivered sizes: the study's own CSV (whose first row gives 49152 the
// plan the study read there) passes, and one that slows only that size,
// where no power of two shows it, fails verify naming it (exit 1). Before,
// verify launched at powers of two only and passed it.
func TestVerifyTunerCSVAtCalledSizes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a simulated search")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if _, stderr, code := runCLI(t, db, "search", "--sim", "spark4", "--seed", "1",
		"--calls", "all_reduce:49152:760", "--calls", "all_reduce:2048000:80"); code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	so := filepath.Join(dir, "tuner.so")
	if err := os.WriteFile(so, sim.TunerPluginFile("2.30.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	own, stderr, code := runCLI(t, db, "export", "s1", "--format", "nccl-tuner")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	// The plan the search read at 49152 bytes with the recommendation
	// (its own-size debug launch) differs from its power of two's (64K,
	// the explain launch): the row the plugin matches there is the one
	// read at 49152, not 64K's stretched over it.
	ss := storedStudy(t, db, "s1")
	read := map[string]string{}
	for _, l := range ss.launches {
		if l.TrialID != ss.study.Recommendation.TrialID || l.Facts == nil {
			continue
		}
		for _, c := range l.Facts.Choices {
			if (l.Phase == "exact" && c.Bytes == 49152) || (l.Phase == "explain" && c.Bytes == 65536) {
				read[l.Phase] = strings.ToLower(fmt.Sprintf("%s,%s,%d", c.Algo, c.Proto, c.Channels))
			}
		}
	}
	if read["exact"] == "" || read["exact"] == read["explain"] {
		t.Fatalf("the search's reads at 49152 and 64K: %v; want two different plans, for this test to mean anything", read)
	}
	for _, line := range strings.Split(own, "\n") {
		var lo, hi uint64
		f := strings.Split(line, ",")
		if len(f) != 10 || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Sscan(f[1], &lo)
		fmt.Sscan(f[2], &hi)
		if lo <= 49152 && 49152 <= hi {
			if got := strings.Join(f[3:6], ","); got != read["exact"] {
				t.Errorf("the CSV's first row matching 49152 bytes gives %s, want %s (read there; 64K ran %s)\n%s", got, read["exact"], read["explain"], own)
			}
			break
		}
	}
	slow := filepath.Join(dir, "slow.csv")
	if err := os.WriteFile(slow, []byte("allreduce,49152,49152,ring,ll,1,4,4,-1,-1\n"+own), 0o644); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Failed bool   `json:"failed"`
		Reason string `json:"reason"`
		Guards []struct {
			Op      string  `json:"op"`
			Sizes   []int64 `json:"sizes"`
			PerSize []struct {
				Bytes  int64 `json:"bytes"`
				Slower bool  `json:"slower"`
			} `json:"per_size"`
		} `json:"guards"`
		TunerPlugin struct {
			AtOwnSize []struct {
				Op    string  `json:"op"`
				Sizes []int64 `json:"sizes"`
			} `json:"at_own_size"`
		} `json:"tuner_plugin"`
	}
	for _, tc := range []struct {
		name   string
		csv    []string
		code   int
		slower bool
	}{
		{"the study's CSV", nil, 0, false},
		{"one channel of LL at 49152 bytes", []string{"--tuner-config", slow}, exitCheckFailed, true},
	} {
		args := append([]string{"verify", "s1", "--sim", "spark4", "--launches", "6", "--json", "--tuner-plugin", so}, tc.csv...)
		stdout, stderr, code := runCLI(t, db, args...)
		var d doc
		decodeOneJSON(t, stdout, &d)
		if code != tc.code || d.Failed != tc.slower {
			t.Errorf("%s: exit %d, failed %v; want exit %d\n%s\n%s", tc.name, code, d.Failed, tc.code, d.Reason, stderr)
		}
		if said := strings.Contains(d.Reason, "all_reduce significantly slower at 48K"); said != tc.slower {
			t.Errorf("%s: the reason names 49152 bytes (48K) slower: %v, want %v: %s", tc.name, said, tc.slower, d.Reason)
		}
		var judged, slowerAt []int64
		for _, g := range d.Guards {
			if g.Op != "all_reduce" {
				continue
			}
			judged = g.Sizes
			for _, s := range g.PerSize {
				if s.Slower {
					slowerAt = append(slowerAt, s.Bytes)
				}
			}
		}
		if !slices.Contains(judged, 49152) {
			t.Errorf("%s: all_reduce judged at %v, not at the 49152 bytes the process calls", tc.name, judged)
		}
		if want := []int64(nil); tc.slower {
			want = []int64{49152}
			if !slices.Equal(slowerAt, want) {
				t.Errorf("%s: slower at %v, want %v", tc.name, slowerAt, want)
			}
		} else if len(slowerAt) > 0 {
			t.Errorf("%s: slower at %v, want none", tc.name, slowerAt)
		}
		// 2048000 is off 2M too.
		if at := d.TunerPlugin.AtOwnSize; len(at) != 1 || at[0].Op != "all_reduce" || !slices.Equal(at[0].Sizes, []int64{49152, 2048000}) {
			t.Errorf("%s: measured at their own sizes %+v, want all_reduce [49152 2048000]", tc.name, at)
		}
	}
	// Each of the 6 measured launches of either arm is followed by one
	// launch of each ladder (49152, and 2048000: their odd parts differ),
	// phase exact.
	out, _, _ := runCLI(t, db, "show", "2", "--json")
	var shown struct {
		ByOp []struct {
			Role   string         `json:"role"`
			Phases map[string]int `json:"phases"`
		} `json:"launches_by_op"`
	}
	decodeOneJSON(t, out, &shown)
	if len(shown.ByOp) == 0 || shown.ByOp[0].Phases["exact"] != 2*2*6 {
		t.Errorf("verify's launches per phase %+v: want 24 exact launches (2 ladders × 6 measured launches × 2 arms)", shown.ByOp)
	}
}
