package studyrun

import (
	"testing"

	"github.com/nccltune/nccltune/fabric"
)

func TestFailedChecks(t *testing.T) {
	v := fabric.Verdict{JudgedOn: fabric.OnLowerBound, Checks: []fabric.Check{
		{Bytes: 1 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 8.5},
		{Bytes: 2 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 9.5, Pass: true},
		{Bytes: 4 << 20, MinBusBW: 9, Note: "not measured"},
	}}
	if got, want := FailedChecks(v), "1M lower bound 8.50 < 9 GB/s, 4M not measured"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
