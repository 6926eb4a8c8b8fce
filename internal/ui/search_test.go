package ui

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestSizeTableAligned: a wide interval widens its column; every row's
// cells start where the header's do.
func TestSizeTableAligned(t *testing.T) {
	rec := &store.Recommendation{PerSize: []store.SizeComparison{
		{Bytes: 512 << 10, BaselineUS: 1.5, BaselineLo: 1, BaselineHi: 2, CandidateUS: 1, CandidateLo: 0.5, CandidateHi: 1.5, Speedup: 1.5, Significant: true},
		{Bytes: 1 << 30, BaselineUS: 123456789.5, BaselineLo: 100000000.25, BaselineHi: 200000000.75, CandidateUS: 1, Speedup: 1},
	}}
	var buf bytes.Buffer
	printSizeTable(&buf, rec, "baseline", "candidate")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", buf.String())
	}
	col := strings.Index(lines[0], "candidate")
	for _, l := range lines[1:] {
		runes := []rune(l)
		headRunes := []rune(lines[0])
		at := len([]rune(lines[0][:col]))
		if at >= len(runes) || runes[at-1] != ' ' || runes[at] == ' ' || headRunes[at] != 'c' {
			t.Errorf("misaligned row %q under %q", l, lines[0])
		}
	}
}

// TestSpentText: the summary counts launches of the budget and, when some
// are left, says why the study stopped before them (from Settled,
// Stopped and Ending: the rules that decided).
func TestSpentText(t *testing.T) {
	for _, tc := range []struct {
		budget int
		res    SearchEnd
		want   string
	}{
		{60, SearchEnd{Launches: 60}, "60 of 60 launches"},
		{0, SearchEnd{Launches: 42}, "42 launches"},
		{60, SearchEnd{Launches: 42, Unspent: 18, Stopped: "space", Ending: "futile", Settled: "every distinct NCCL plan…", Looks: 1, PlannedLooks: 2}, "42 of 60 launches, 18 unspent (more could not change the answer)"},
		{60, SearchEnd{Launches: 30, Unspent: 30, Stopped: "time", Ending: "not-significant"}, "30 of 60 launches, 30 unspent (--time left too little for the next stage)"},
		{60, SearchEnd{Launches: 50, Unspent: 10, Stopped: "budget", Ending: "recommended", Looks: 1, PlannedLooks: 2}, "50 of 60 launches, 10 unspent (the confirmation decided (recommended) at look 1 of 2)"},
		{60, SearchEnd{Launches: 20, Unspent: 40, Stopped: "space", Ending: "no-candidate"}, "20 of 60 launches, 40 unspent (no distinct config was left to explore; ended no-candidate)"},
		{60, SearchEnd{Launches: 4, Unspent: 56, Stopped: "interrupted", Ending: "interrupted"}, "4 of 60 launches, 56 unspent (interrupted; --resume spends them)"},
		{150, SearchEnd{Launches: 84, Unspent: 66, UnspentForGuards: 64, Stopped: "budget", Ending: "not-significant"},
			"84 of 150 launches, 66 unspent (ended not-significant; 64 held for the guarded ops, measured only beside a recommended config; a larger --budget gives the confirmation more looks)"},
	} {
		if got := spentText(tc.budget, tc.res); got != tc.want {
			t.Errorf("spentText(%d, %+v) = %q\nwant %q", tc.budget, tc.res, got, tc.want)
		}
	}
}

// TestSearchWorkloadGolden: a workload study's end-of-study text prints
// every part's sizes, grouped by op (two parts of one op together, by
// size), then each op's guard sizes, and the parts, guarded ops and
// launches per op after it.
func TestSearchWorkloadGolden(t *testing.T) {
	kib, mib := int64(nccl.KiB), int64(nccl.MiB)
	row := func(op nccl.Op, b int64, bu, cu float64, sig bool) store.SizeComparison {
		return store.SizeComparison{Op: op, Bytes: b, CILevel: 0.95, BaselineUS: bu, BaselineLo: bu * 0.95, BaselineHi: bu * 1.05,
			CandidateUS: cu, CandidateLo: cu * 0.95, CandidateHi: cu * 1.05, Speedup: bu / cu, Significant: sig}
	}
	study := &store.Study{Name: "s1-32K-1M", Kind: "search", Band: "32K-1M", Simulated: true,
		Launch: store.LaunchSettings{SimProfile: "h200-loopback"}, Budget: store.Budget{Launches: 40},
		Workload: []store.Part{{Op: nccl.AllReduce, Band: "512K-1M", BandMin: 512 * kib, BandMax: mib, Weight: 2},
			{Op: nccl.AllGather, Band: "1M", BandMin: mib, BandMax: mib, Weight: 1},
			{Op: nccl.AllReduce, Band: "32K", BandMin: 32 * kib, BandMax: 32 * kib, Weight: 1}},
		Status: "done",
		Recommendation: &store.Recommendation{Env: map[string]string{"NCCL_MAX_NCHANNELS": "1"}, Speedup: 1.1, SpeedupCI: [2]float64{1.05, 1.15}, CILevel: 0.95,
			Significant: true, PValue: 0.001, Ending: vocab.EndingRecommended, BaselineScoreUS: 500, ScoreUS: 455,
			BaselineLaunches: 6, CandidateLaunches: 6,
			Guards: []store.SizeComparison{row(nccl.AllReduce, 16*mib, 9000, 8900, false), row(nccl.AllGather, 16*mib, 4000, 3900, false)},
			Parts: []store.PartComparison{
				{Op: nccl.AllReduce, Band: "512K-1M", Weight: 0.5, Speedup: 1.14, SpeedupCI: [2]float64{1.1, 1.2}, CILevel: 0.95, Significant: true,
					PerSize: []store.SizeComparison{row(nccl.AllReduce, 512*kib, 400, 350, true), row(nccl.AllReduce, mib, 800, 700, true)}},
				{Op: nccl.AllGather, Band: "1M", Weight: 0.25, Speedup: 1.05, SpeedupCI: [2]float64{0.99, 1.1}, CILevel: 0.95,
					PerSize: []store.SizeComparison{row(nccl.AllGather, mib, 300, 290, false)}},
				{Op: nccl.AllReduce, Band: "32K", Weight: 0.25, Speedup: 1.1, SpeedupCI: [2]float64{1.02, 1.2}, CILevel: 0.95, Significant: true,
					PerSize: []store.SizeComparison{row(nccl.AllReduce, 32*kib, 33, 30, true)}}}}}
	res := SearchEnd{Launches: 40, Trials: 5, Confirmed: true, Candidate: nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, Ending: vocab.EndingRecommended}
	launches := []*store.Launch{{Op: nccl.AllReduce, Phase: "warmup"}, {Op: nccl.AllReduce, Phase: "explore"}, {Op: nccl.AllGather, Phase: "explore"},
		{Op: nccl.AllReduce, Phase: "confirm"}, {Op: nccl.AllGather, Phase: "confirm"}}
	var buf bytes.Buffer
	if err := PrintSearch(&buf, false, study, nil, launches, res, 1500*time.Millisecond, "/tmp/t.db"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "search_workload.golden"), buf.Bytes())
}

// The merged count and its per-rule lines read one count: a config merged
// by several rules (every config of a study of several ops carries the
// ops' rule too) shows under each rule as part of the one total, never as
// lines that add up to more than the headline says.
func TestPlanLinesOneMergedCount(t *testing.T) {
	tests := []struct {
		name string
		p    store.PlanSummary
		want []string
	}{
		{"several rules per config", store.PlanSummary{Read: true, SpaceConfigs: 96, ConfigsExplored: 7, PlansExplored: 5, MergedConfigs: 4,
			Merged: []store.MergeCount{{Reason: "the same plan for all_reduce and all_gather", Count: 4},
				{Reason: "NCCL_MIN_NCHANNELS below NCCL's channels", Count: 3},
				{Reason: "the same plan as a config already tried, proved by a debug log", Count: 2}}},
			[]string{
				"NCCL's plan: 96 configs in the space, 7 explored, 5 distinct plans, 4 configs merged (NCCL runs them like one already tried); the rules that proved it (a config may need several):",
				"  4 of 4: the same plan for all_reduce and all_gather",
				"  3 of 4: NCCL_MIN_NCHANNELS below NCCL's channels",
				"  2 of 4: the same plan as a config already tried, proved by a debug log",
			}},
		{"one rule", store.PlanSummary{Read: true, SpaceConfigs: 12, ConfigsExplored: 3, PlansExplored: 2, MergedConfigs: 1,
			Merged: []store.MergeCount{{Reason: "NCCL_PROTO=LL128 is NCCL's own choice", Count: 1}}},
			[]string{
				"NCCL's plan: 12 configs in the space, 3 explored, 2 distinct plans, 1 config merged (NCCL runs it like one already tried); the rule that proved it:",
				"  1 of 1: NCCL_PROTO=LL128 is NCCL's own choice",
			}},
		{"none merged", store.PlanSummary{Read: true, SpaceConfigs: 12, ConfigsExplored: 3, PlansExplored: 3},
			[]string{"NCCL's plan: 12 configs in the space, 3 explored, 3 distinct plans, no config merged"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planLines(&tt.p)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("planLines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestBatchLine: search's text and show's settings say how many launches
// came from batch launches, and nothing when none did.
func TestBatchLine(t *testing.T) {
	study := &store.Study{Name: "s1-512K-4M", Kind: "search", Band: "512K-4M", Status: "done", Budget: store.Budget{Launches: 60},
		Recommendation: &store.Recommendation{Ending: vocab.EndingNoCandidate, Reason: "no config ran"}}
	res := SearchEnd{Launches: 3, Ending: vocab.EndingNoCandidate}
	const want = "2 launches from 1 batch launch"
	for _, tc := range []struct {
		name     string
		launches []*store.Launch
		line     bool
	}{
		{"separate launches", []*store.Launch{{Phase: "explore"}, {Phase: "explore"}, {Phase: "confirm"}}, false},
		{"a batch", []*store.Launch{{Phase: "explore", Batch: &benchfmt.BatchMember{Configs: 2}},
			{Phase: "explore", Batch: &benchfmt.BatchMember{Position: 1, Configs: 2}}, {Phase: "confirm"}}, true},
	} {
		var searchText, showText bytes.Buffer
		if err := PrintSearch(&searchText, false, study, nil, tc.launches, res, time.Second, "/tmp/t.db"); err != nil {
			t.Fatal(err)
		}
		if err := writeStudySettings(&showText, study, tc.launches, time.UTC); err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"search": searchText.String(), "show": showText.String()} {
			if got := strings.Contains(text, want); got != tc.line {
				t.Errorf("%s: %s's text says %q: %v, want %v:\n%s", tc.name, what, want, got, tc.line, text)
			}
		}
	}
}

// TestVerdictLinesEscaped: a recommendation's env can hold a path (verify
// --tuner-plugin's CSV) and its reason can quote a benchmark's output; a
// line break in one cannot forge a line of show's or search's verdict.
func TestVerdictLinesEscaped(t *testing.T) {
	const forged = "\nrecommendation: forged"
	study := &store.Study{Name: "s1-1M", Kind: "search", Band: "1M", Status: "done", Budget: store.Budget{Launches: 60},
		Recommendation: &store.Recommendation{Env: map[string]string{nccl.TunerConfigVar: "/tmp/t.csv" + forged}, Significant: true,
			Speedup: 1.1, SpeedupCI: [2]float64{1.05, 1.15}, CILevel: 0.95, PValue: 0.001, Ending: vocab.EndingRecommended}}
	kept := &store.Study{Name: "s2-1M", Kind: "search", Band: "1M", Status: "done", Budget: store.Budget{Launches: 60},
		Recommendation: &store.Recommendation{Ending: vocab.EndingCandidateFailed, Reason: "the candidate failed (exit 1" + forged + ")"}}
	for _, s := range []*store.Study{study, kept} {
		var showText, searchText bytes.Buffer
		writeRecommendation(&showText, s)
		res := SearchEnd{Launches: 3, Ending: s.Recommendation.Ending}
		if err := PrintSearch(&searchText, false, s, nil, nil, res, time.Second, "/tmp/t.db"); err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"show": showText.String(), "search": searchText.String()} {
			if strings.Contains(text, forged) || !strings.Contains(text, `\nrecommendation: forged`) {
				t.Errorf("%s: %s's verdict does not escape the line break:\n%s", s.Name, what, text)
			}
		}
	}
}
