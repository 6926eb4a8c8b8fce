package ui

import (
	"bytes"
	"strings"
	"testing"

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
