package stored

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestConclusion: the one rule of what a study concluded — kept NCCL's
// defaults, kept the user's baseline, or changed — with the env to run
// and the headline, the same from a study and from its summary.
func TestConclusion(t *testing.T) {
	baseline := map[string]string{"NCCL_MAX_NCHANNELS": "8", "NCCL_PROTO": "^LL128"}
	for _, tc := range []struct {
		name     string
		baseline map[string]string
		rec      *store.Recommendation
		status   string
		keeps    bool
		run      string
		headline string
	}{
		{"defaults kept", nil, &store.Recommendation{Env: map[string]string{}}, vocab.StatusDone, true, "", "keep NCCL defaults: no significant gain"},
		{"baseline kept", baseline, &store.Recommendation{Env: map[string]string{}}, vocab.StatusDone, true, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", "keep your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128): no significant gain"},
		{"baseline kept, a candidate not significant", baseline, &store.Recommendation{Env: map[string]string{"NCCL_ALGO": "Tree"}}, vocab.StatusDone, true, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", "keep your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128): no significant gain"},
		{"change", nil, &store.Recommendation{Env: map[string]string{"NCCL_PROTO": "^LL128"}, Significant: true}, vocab.StatusDone, false, "NCCL_PROTO=^LL128", "NCCL_PROTO=^LL128"},
		{"defaults beat the baseline", baseline, &store.Recommendation{Env: map[string]string{}, Significant: true}, vocab.StatusDone, false, "", "NCCL defaults (unset your baseline's NCCL_MAX_NCHANNELS NCCL_PROTO)"},
		{"running", nil, nil, vocab.StatusRunning, false, "", "not decided yet (the study is still running)"},
		// Why a study kept its baseline is said from its stored ending, in
		// every command (search's text had its own words; the others said
		// "no significant gain" for a candidate refused at a guard size).
		{"slower at a guard size", nil, &store.Recommendation{Env: map[string]string{}, Ending: vocab.EndingGuard}, vocab.StatusDone, true, "", "keep NCCL defaults: the candidate is slower at a guard size"},
		{"below the minimum effect", baseline, &store.Recommendation{Env: map[string]string{}, Ending: vocab.VerdictBelowMinEffect}, vocab.StatusDone, true, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", "keep your baseline (NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128): the gain is below the minimum effect"},
		{"refused by a guarded op", nil, &store.Recommendation{Env: map[string]string{}, Ending: vocab.EndingOpRegression,
			OpGuards: []store.OpGuard{{Op: nccl.Broadcast, Refused: true, WorstBytes: 1 << 20}}}, vocab.StatusDone, true, "", "keep NCCL defaults: the candidate makes broadcast at 1M significantly slower"},
	} {
		s := &store.Study{Name: "s1", Status: tc.status, BaselineEnv: tc.baseline, Recommendation: tc.rec}
		for how, c := range map[string]Conclusion{"study": ConclusionOf(s), "summary": SummaryConclusion(summaryOf(s))} {
			headline, _, _ := c.Headline()
			if c.Keeps() != tc.keeps || c.RunEnv().Key() != tc.run || headline != tc.headline {
				t.Errorf("%s (%s): keeps %v, runs %q, says %q; want %v, %q, %q", tc.name, how, c.Keeps(), c.RunEnv().Key(), headline, tc.keeps, tc.run, tc.headline)
			}
		}
		if v := VerdictOf(s); v.Headline != tc.headline {
			t.Errorf("%s: VerdictOf says %q, Conclusion %q", tc.name, v.Headline, tc.headline)
		}
	}
}

// summaryOf is what store's summary of s holds of its conclusion.
func summaryOf(s *store.Study) store.StudySummary {
	sum := store.StudySummary{Name: s.Name, Status: s.Status, BaselineEnv: nccl.Config(s.BaselineEnv).Clone()}
	if r := s.Recommendation; r != nil {
		headline := r.Summary()
		sum.Recommendation = &headline
	}
	return sum
}

// TestRefusalWords: the headline says how the part or op refused the
// candidate, as the study decided it: a timed call not shown safe is not
// "significantly slower" (verify printed that of a +4.6 % call whose
// upper bound was +7.5 %), and a failing op is not either.
func TestRefusalWords(t *testing.T) {
	for _, tc := range []struct {
		rec  store.Recommendation
		want string
	}{
		{store.Recommendation{Parts: []store.PartComparison{{Op: nccl.Broadcast, Band: "1M", Refused: true, NotShownSafe: true}}},
			"keep NCCL defaults: the candidate is not shown safe for its call broadcast 1M"},
		{store.Recommendation{Parts: []store.PartComparison{{Op: nccl.AllToAll, Band: "512K-8M", Refused: true}}},
			"keep NCCL defaults: the candidate makes its part alltoall 512K-8M significantly slower"},
		{store.Recommendation{OpGuards: []store.OpGuard{{Op: nccl.SendRecv, Refused: true, Failed: "the candidate failed"}}},
			"keep NCCL defaults: the candidate makes sendrecv fail (the candidate failed)"},
		{store.Recommendation{OpGuards: []store.OpGuard{{Op: nccl.Broadcast, Refused: true, WorstBytes: nccl.MiB}}},
			"keep NCCL defaults: the candidate makes broadcast at 1M significantly slower"},
	} {
		rec := tc.rec
		s := &store.Study{Status: vocab.StatusDone, Recommendation: &rec}
		if got, _, _ := ConclusionOf(s).Headline(); got != tc.want {
			t.Errorf("headline %q, want %q", got, tc.want)
		}
		if got, _, _ := SummaryConclusion(store.StudySummary{Status: vocab.StatusDone, Recommendation: ptr(rec.Summary())}).Headline(); got != tc.want {
			t.Errorf("history's headline %q, want %q", got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestEveryKeepingEndingHasWords: each ending a study can keep its
// baseline with has its own words, not the catch-all of an unknown one.
func TestEveryKeepingEndingHasWords(t *testing.T) {
	for _, ending := range []string{vocab.VerdictBelowMinEffect, vocab.VerdictFutile, vocab.VerdictSlower, vocab.VerdictSlightlySlower,
		vocab.EndingOpRegression, vocab.EndingGuard, vocab.EndingSwitchesOnDisabled, vocab.EndingCandidateFailed, vocab.EndingNoCandidate,
		vocab.EndingSameAsBaseline, vocab.EndingInterrupted, vocab.EndingCannotDecide} {
		if why := keepWhy(ending); why == keepWhy("") {
			t.Errorf("ending %q is said as %q, the words of an unknown ending", ending, why)
		}
	}
}

// ConfirmationSpan: the confirmation under way at a launch runs from the
// latest restart at or before it to the next restart; a study's
// refusals so far count until it decides, then its recommendation's;
// a refusal stored without a restart (before they were kept) restarts
// nothing.
func TestConfirmationSpan(t *testing.T) {
	restarts := []store.Refusal{{TrialID: 2, Restart: &store.Restart{Seq: 40}}, {TrialID: 3}, {TrialID: 4, Restart: &store.Restart{Seq: 70}}}
	running := &store.Study{Refusals: restarts}
	done := &store.Study{Recommendation: &store.Recommendation{Refusals: restarts}, Refusals: restarts[:1]}
	for _, c := range []struct {
		s        *store.Study
		seq      int
		from, to int
	}{
		{&store.Study{}, 55, 0, -1},
		{running, 10, 0, 40},
		{running, 40, 40, 70},
		{running, 69, 40, 70},
		{running, 90, 70, -1},
		{done, 90, 70, -1},
		{&store.Study{Recommendation: &store.Recommendation{}, Refusals: restarts}, 90, 0, -1},
	} {
		if from, to := ConfirmationSpan(c.s, c.seq); from != c.from || to != c.to {
			t.Errorf("ConfirmationSpan(%d) = %d, %d; want %d, %d", c.seq, from, to, c.from, c.to)
		}
	}
}

// TestRefusalLinesSayTheLevel: a refused candidate's interval says the
// level it was taken at, as the recommendation's does; an old record
// without one says so, and a failed candidate (no interval) says none.
// The last refusal of the trial the study's answer confirmed is that
// answer, not an earlier refusal; a record stored before refusals kept
// their restart (none has one) still says every earlier one.
func TestRefusalLinesSayTheLevel(t *testing.T) {
	refusals := []store.Refusal{
		{TrialID: 3, Reason: "A is faster but slower for its call x; keep NCCL's defaults", Speedup: 1.2, SpeedupCI: [2]float64{1.1, 1.3}, CILevel: 0.9642},
		{TrialID: 4, Reason: "B is faster but slower for its call y", Speedup: 1.1, SpeedupCI: [2]float64{1.05, 1.2}},
		{TrialID: 5, Reason: "C failed", Speedup: 1, SpeedupCI: [2]float64{}},
		{TrialID: 6, Reason: "D is faster but not shown safe for its call z; keep NCCL's defaults", Speedup: 1.25, SpeedupCI: [2]float64{1.1, 1.5}, CILevel: 0.99},
	}
	if all := RefusalLines(refusals, 9); len(all) != 4 {
		t.Errorf("the answer confirmed trial 9: want all 4 refusals said, got %q", all)
	}
	got := RefusalLines(refusals, 6)
	want := []string{
		"refused earlier (its speedup ×1.20 [1.10, 1.30], 96.42% CI): A is faster but slower for its call x",
		"refused earlier (its speedup ×1.10 [1.05, 1.20], CI at an unrecorded level): B is faster but slower for its call y",
		"refused earlier (its speedup ×1.00): C failed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// How NCCL's defaults did while exploring is judged at the study's
// minimum effect as StatsOf reads it: a study stored before it recorded
// its minimum effect judges at the default 3 %, not at 0.
func TestDefaultsExplored(t *testing.T) {
	trials := []*store.Trial{{ID: 1, Config: nccl.Config{"NCCL_PROTO": "Simple"}, ScoreUS: 100}, {ID: 2, ScoreUS: 99}}
	for _, tc := range []struct {
		name   string
		search *store.SearchSettings
		rec    store.Recommendation
		want   string
	}{
		{"1 % faster, old study", nil, store.Recommendation{BaselineScoreUS: 100}, "not better than your baseline (exploration only, not confirmed)"},
		{"1 % faster, min effect 0.5 %", &store.SearchSettings{MinEffect: 0.005}, store.Recommendation{BaselineScoreUS: 100, MinEffect: 0.005}, "may be better than your baseline (exploration only, not confirmed)"},
		{"confirmed", &store.SearchSettings{MinEffect: 0.005}, store.Recommendation{BaselineScoreUS: 100, TrialID: 2}, "better than your baseline (confirmed above)"},
		{"slower", nil, store.Recommendation{BaselineScoreUS: 90}, "not better than your baseline (exploration only, not confirmed)"},
	} {
		s := &store.Study{BaselineEnv: map[string]string{"NCCL_PROTO": "Simple"}, Search: tc.search, Recommendation: &tc.rec}
		if def, _, got := DefaultsExplored(s, trials); def != trials[1] || got != tc.want {
			t.Errorf("%s: DefaultsExplored = trial %v, %q; want trial 2, %q", tc.name, def, got, tc.want)
		}
	}
	if def, _, _ := DefaultsExplored(&store.Study{Recommendation: &store.Recommendation{BaselineScoreUS: 100}}, trials); def != nil {
		t.Errorf("against NCCL's defaults: DefaultsExplored = trial %v, want none", def)
	}
}
