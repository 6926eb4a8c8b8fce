package ui

import (
	"errors"
	"testing"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/vocab"
)

// TestParseVerdict checks parse's exit: a failed run is the fabric's
// (3), output that is not nccl-tests' is the user's (2), and the message
// names each file.
func TestParseVerdict(t *testing.T) {
	good := ParseOutcome{Name: "good.txt", Result: &benchfmt.Result{}}
	failed := ParseOutcome{Name: "bad.txt", Err: &benchfmt.FailureError{Message: "NCCL failed"}}
	junk := ParseOutcome{Name: "junk.txt", Err: errors.New("no nccl-tests table")}
	for _, tc := range []struct {
		parsed []ParseOutcome
		kind   error
		want   string
	}{
		{[]ParseOutcome{good}, nil, ""},
		{[]ParseOutcome{failed}, vocab.ErrFabric, "bad.txt: NCCL failed"},
		{[]ParseOutcome{good, failed, junk}, vocab.ErrFabric, "1 of 3 files hold failed runs: bad.txt: NCCL failed"},
		{[]ParseOutcome{good, junk}, vocab.ErrUsage, "junk.txt: no nccl-tests table"},
	} {
		err := ParseVerdict(tc.parsed)
		if tc.kind == nil {
			if err != nil {
				t.Errorf("ParseVerdict of good runs: %v", err)
			}
			continue
		}
		if !errors.Is(err, tc.kind) || err.Error() != tc.want {
			t.Errorf("ParseVerdict = %v, want %v saying %q", err, tc.kind, tc.want)
		}
	}
}
