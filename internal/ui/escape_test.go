package ui

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/store"
)

// TestVerifyReasonEscaped: verify's reason can quote a benchmark's output
// or a plugin's path: printed, it stays data (no raw ESC reaches the
// terminal), as search and show print the same sentences.
func TestVerifyReasonEscaped(t *testing.T) {
	const hostile = "the candidate failed (\x1b[2J\x1b]0;owned\x07)"
	for _, r := range []runresult.VerifyResult{
		{Study: "v", Verifies: "s", Speedup: math.NaN(), Reason: hostile},
		{Study: "v", Verifies: "s", Speedup: 1.1, Refused: "its call broadcast 1M", Verdict: "keep\x1b[31m", Reason: hostile},
	} {
		var buf bytes.Buffer
		printVerify(&buf, &store.Study{Recommendation: &store.Recommendation{}}, nil, r)
		if out := buf.String(); strings.ContainsRune(out, '\x1b') || strings.ContainsRune(out, '\x07') {
			t.Errorf("verify printed a raw control character:\n%q", out)
		}
	}
}

// TestHistoryLineEscaped: history's recommendation column prints the
// verdict's words, which hold the stored env: a database written by
// another tool (or an old one) can hold any bytes there.
func TestHistoryLineEscaped(t *testing.T) {
	sums := []store.StudySummary{{Name: "s", Status: "done", Recommendation: &store.RecommendationSummary{
		Env: map[string]string{"NCCL_ALGO": "Ring\x1b[2J"}, Speedup: 1.2, SpeedupCI: [2]float64{1.1, 1.3}, Significant: true}}}
	var buf bytes.Buffer
	if err := PrintHistory(&buf, false, sums, time.UTC); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.ContainsRune(out, '\x1b') {
		t.Errorf("history printed a raw ESC:\n%q", out)
	}
}
