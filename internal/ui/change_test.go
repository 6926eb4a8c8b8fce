package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/store"
)

// TestCompareChangeIsTheRowsRule: compare says a size's change as the
// report does, from the row's speedup (store.SizeComparison.Change), not
// from the two medians again: the speedup's estimate and the medians'
// ratio differ on real launches.
func TestCompareChangeIsTheRowsRule(t *testing.T) {
	row := store.SizeComparison{Bytes: 1 << 20, BaselineUS: 100, CandidateUS: 90, Speedup: 1.25, Significant: true}
	var buf bytes.Buffer
	printOpComparison(&buf, report.OpComparison{Rows: []store.SizeComparison{row}})
	if out := buf.String(); !strings.Contains(out, "-20.0%") {
		t.Errorf("compare's change is not 1/speedup-1 = -20.0%%:\n%s", out)
	}
	js, err := json.Marshal(opComparisonJSON(report.OpComparison{Rows: []store.SizeComparison{row}}))
	if err != nil || !strings.Contains(string(js), `"change":-0.19999`) {
		t.Errorf("compare --json's change is not -0.2: %s %v", js, err)
	}
}
