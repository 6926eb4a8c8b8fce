package ui

import (
	"strings"
	"testing"
)

func TestMinLaunchesForCI(t *testing.T) {
	for _, tc := range []struct {
		confidence float64
		want       int
	}{{0.5, 2}, {0.9, 5}, {0.95, 6}, {0.99, 8}} {
		if got := minLaunchesForCI(tc.confidence); got != tc.want {
			t.Errorf("minLaunchesForCI(%g) = %d, want %d", tc.confidence, got, tc.want)
		}
	}
	if note := noIntervalNote(3); !strings.Contains(note, "3 launches are too few") || !strings.Contains(note, "--repeats 6 or more") {
		t.Errorf("note for 3 launches: %s", note)
	}
	if note := noIntervalNote(1); !strings.Contains(note, "from one launch") {
		t.Errorf("note for 1 launch: %s", note)
	}
}
