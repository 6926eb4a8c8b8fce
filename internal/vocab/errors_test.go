package vocab

import (
	"errors"
	"fmt"
	"testing"
)

func TestMark(t *testing.T) {
	cause := errors.New("--min 3X: not a size")
	for _, tc := range []struct {
		name string
		err  error
		msg  string
		is   []error
		not  []error
	}{
		{"usage", Mark(ErrUsage, cause), "--min 3X: not a size", []error{ErrUsage, cause}, []error{ErrFabric, ErrInterrupted}},
		{"fabric", Mark(ErrFabric, cause), "--min 3X: not a size", []error{ErrFabric, cause}, []error{ErrUsage}},
		{"wrapped again", fmt.Errorf("study a: %w", Mark(ErrFabric, cause)), "study a: --min 3X: not a size", []error{ErrFabric, cause}, []error{ErrUsage}},
		{"usage worded", UsageErrorf("study %s: %w", "a", cause), "study a: --min 3X: not a size", []error{ErrUsage, cause}, []error{ErrFabric}},
		{"usage as it is", UsageError(cause), "--min 3X: not a size", []error{ErrUsage, cause}, []error{ErrFabric}},
		{"sentinel wrapped", fmt.Errorf("%w: no mpirun", ErrFabric), "the benchmark or fabric failed: no mpirun", []error{ErrFabric}, []error{ErrUsage, cause}},
	} {
		if got := tc.err.Error(); got != tc.msg {
			t.Errorf("%s: message %q, want %q", tc.name, got, tc.msg)
		}
		for _, target := range tc.is {
			if !errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%v) false, want true", tc.name, target)
			}
		}
		for _, target := range tc.not {
			if errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%v) true, want false", tc.name, target)
			}
		}
	}
	if Mark(ErrUsage, nil) != nil {
		t.Error("Mark(ErrUsage, nil) is not nil")
	}
}
