package export

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// fixedNow is the export date of every golden file.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

// logChoices is what NCCL chose per size in a saved simulator log
// (spark4, NCCL_DEBUG_SUBSYS=TUNING), read by the runner's own parser.
func logChoices(t testing.TB, name string) []benchfmt.Choice {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	f := benchfmt.ParseFacts(data)
	if f == nil || len(f.Choices) == 0 {
		t.Fatalf("%s: no TUNING choices parsed", name)
	}
	return f.Choices
}

// spark4Study is a finished simulated search over band on spark4 that
// recommends env (trial 12); trial 10 is its baseline.
func spark4Study(id uint64, band string, env map[string]string) *store.Study {
	b, err := nccl.ParseBand(band)
	if err != nil {
		panic(err)
	}
	gdr := false
	return &store.Study{
		ID: id, Name: fmt.Sprintf("s%d-%s", id, band), Kind: vocab.KindSearch,
		Created: time.Date(2026, 2, 28, 10, 30, 0, 0, time.UTC), Band: band, BandMin: b.Min, BandMax: b.Max,
		Collective: "all_reduce",
		BaseEnv:    map[string]string{"NCCL_IB_HCA": "=rocep1s0f1", "NCCL_SOCKET_IFNAME": "enP7s7"},
		Launch:     store.LaunchSettings{Launcher: "mpirun", NP: 4, SimProfile: "spark4", SimNoise: 1, SimSeed: 3},
		Platform:   store.Platform{NCCLVersion: "2.30.7+cuda13.0", Ranks: 4, Nodes: 4, GPU: "NVIDIA GB10", Transport: "IB", GDR: &gdr},
		Simulated:  true, Seed: 3, Status: vocab.StatusDone,
		Recommendation: &store.Recommendation{
			Env: env, Speedup: 8.125, SpeedupCI: [2]float64{7.875, 8.375}, CILevel: 0.95, Significant: true, PValue: 0.00021,
			Reason: "significant and above the 3% minimum effect", MinEffect: 0.03, BaselineScoreUS: 1150.25, ScoreUS: 141.5,
			TrialID: 12, BaselineLaunches: 6, CandidateLaunches: 6,
		},
	}
}

// studyWith builds a Recommendation through NewRecommendation, with explain launches that
// recorded defaults (baseline trial 10) and recommended (trial 12).
func studyWith(t testing.TB, s *store.Study, defaults, recommended []benchfmt.Choice) *Recommendation {
	t.Helper()
	return studyWithLaunches(t, s, defaults, recommended)
}

// studyWithLaunches is studyWith with more launches stored beside its
// explain launches (a timed study's own-size launches, phase exact).
func studyWithLaunches(t testing.TB, s *store.Study, defaults, recommended []benchfmt.Choice, more ...*store.Launch) *Recommendation {
	t.Helper()
	trials := []*store.Trial{{ID: 10, StudyID: s.ID, Number: 0, Role: vocab.RoleBaseline}, {ID: 12, StudyID: s.ID, Number: 5, Role: vocab.RoleExplore}}
	launches := []*store.Launch{
		// A scored launch without facts, and an older debug launch that an
		// explain launch must win over.
		{ID: 1, TrialID: 12, Seq: 3, Phase: vocab.PhaseConfirm, Scored: true},
		{ID: 2, TrialID: 12, Seq: 4, Phase: vocab.PhaseConfirm, Facts: &benchfmt.Facts{Choices: []benchfmt.Choice{{Collective: "AllReduce", Bytes: 1, Algo: "RING", Proto: "LL", Channels: 1}}}},
	}
	if defaults != nil {
		launches = append(launches, &store.Launch{ID: 3, TrialID: 10, Seq: 20, Phase: vocab.PhaseExplain, Facts: &benchfmt.Facts{Choices: defaults}})
	}
	if recommended != nil {
		launches = append(launches, &store.Launch{ID: 4, TrialID: 12, Seq: 21, Phase: vocab.PhaseExplain, Facts: &benchfmt.Facts{Choices: recommended}})
	}
	launches = append(launches, more...)
	b, err := NewRecommendation(s, trials, launches)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureBand is the golden files' study: s3 over 512K-4M recommends
// NCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=8 (and two knobs that are left out).
func fixtureBand(t testing.TB) *Recommendation {
	s := spark4Study(3, "512K-4M", map[string]string{
		"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "16", "NCCL_CROSS_NIC": "2"})
	return studyWith(t, s, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_proto_nchannels8.log"))
}

// hostileValues must survive every format that can carry them.
var hostileValues = map[string]string{
	"NCCL_PROTO":     "LL,Simple;allreduce:^LL",
	"NCCL_ALGO":      "^LL128",
	"V_QUOTE":        `it's "quoted"`,
	"V_QUOTES":       `'' '\'' ""`,
	"V_DOLLAR":       "$HOME ${PATH} $(id) $((1+1))",
	"V_BACKTICK":     "`id` and `uname -a`",
	"V_SPACES":       "  lead and trail  ",
	"V_SEMI":         "a; rm -rf /tmp/x; b && c || d | e & f",
	"V_BACKSLASH":    `C:\path\n\t\\ end\`,
	"V_HASH":         "#not a comment # nor this",
	"V_EQUALS":       "a=b=c",
	"V_GLOB":         "* ? [a-z] ~ ~root",
	"V_BANG":         "!! !$ !-1",
	"V_UNICODE":      "ünïcødé — ✓",
	"V_YAMLISH":      "key: value - [a, b] {c: d} &anchor *alias !tag |",
	"V_YES":          "yes",
	"V_NUMBER":       "8",
	"V_PERCENT":      "%s %d %%",
	"V_LEADING_DASH": "-e --rm",
}

// hostileBand carries values. The name is not a knob, which the formats do
// not care about: they write what the recommendation holds.
func hostileBand(values map[string]string) *Recommendation {
	s := spark4Study(7, "1M", nil)
	s.BaseEnv = nil
	return &Recommendation{Study: s, Env: nccl.Config(values)}
}

// timedBand is a study of a timed workload (--calls all_reduce:40960:760
// --calls all_reduce:2048000:80): measured at 32K and 2M only, stored with
// the band 32K-2M around them that it never measured, named as search
// names it.
func timedBand(t testing.TB, more ...*store.Launch) *Recommendation {
	var calls []nccl.Part
	for _, c := range []string{"all_reduce:40960:760", "all_reduce:2048000:80"} {
		p, err := nccl.ParseCall(c)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, p)
	}
	s := spark4Study(9, "32K-2M", map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	s.Name = "s9-all_reduce"
	for _, p := range nccl.MergeCalls(calls) {
		s.Workload = append(s.Workload, store.PartOf(p))
	}
	return studyWithLaunches(t, s, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_proto_nchannels8.log"), more...)
}
