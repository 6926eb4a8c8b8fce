package main

import (
	"errors"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg, study string
		trial      int
		bad        bool
	}{
		{"s3-512K-4M", "s3-512K-4M", -1, false},
		{"s3-512K-4M/7", "s3-512K-4M", 7, false},
		{"3/0", "3", 0, false},
		{"lab/runs/2", "lab/runs", 2, false},
		{"s3/", "", 0, true},
		{"s3/-1", "", 0, true},
		{"/4", "", 0, true},
	} {
		got, err := parseTarget(tc.arg)
		if tc.bad && !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("parseTarget(%q): %v, want a usage error", tc.arg, err)
		}
		if (err != nil) != tc.bad || (!tc.bad && (got.Study != tc.study || got.Trial != tc.trial)) {
			t.Errorf("parseTarget(%q) = %+v, %v", tc.arg, got, err)
		}
	}
}
