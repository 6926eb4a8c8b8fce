package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/search"
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
	printSizeTable(&buf, rec)
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
	design := &model.ConfirmDesign{Looks: []int{6, 12}}
	for _, tc := range []struct {
		budget int
		res    search.Result
		want   string
	}{
		{60, search.Result{Launches: 60}, "60 of 60 launches"},
		{0, search.Result{Launches: 42}, "42 launches"},
		{60, search.Result{Launches: 42, Unspent: 18, Stopped: "space", Ending: "futile", Settled: "every distinct NCCL plan…", Design: design, Looks: 1}, "42 of 60 launches, 18 unspent (more could not change the answer)"},
		{60, search.Result{Launches: 30, Unspent: 30, Stopped: "time", Ending: "not-significant"}, "30 of 60 launches, 30 unspent (the --time limit ran out)"},
		{60, search.Result{Launches: 50, Unspent: 10, Stopped: "budget", Ending: "recommended", Design: design, Looks: 1}, "50 of 60 launches, 10 unspent (the confirmation decided (recommended) at look 1 of 2)"},
		{60, search.Result{Launches: 20, Unspent: 40, Stopped: "space", Ending: "no-candidate"}, "20 of 60 launches, 40 unspent (no distinct config was left to explore; ended no-candidate)"},
		{60, search.Result{Launches: 4, Unspent: 56, Stopped: "interrupted", Ending: "interrupted"}, "4 of 60 launches, 56 unspent (interrupted; --resume spends them)"},
	} {
		if got := spentText(tc.budget, &tc.res); got != tc.want {
			t.Errorf("spentText(%d, %+v) = %q\nwant %q", tc.budget, tc.res, got, tc.want)
		}
	}
}
