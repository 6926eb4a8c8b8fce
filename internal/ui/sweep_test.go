package ui

import (
	"strings"
	"testing"
)

// TestNoIntervalNote: the note names the launches a 95 % interval needs
// (model.MinLaunchesForInterval: 6).
func TestNoIntervalNote(t *testing.T) {
	if note := noIntervalNote(3, 6); !strings.Contains(note, "3 launches are too few") || !strings.Contains(note, "--repeats 6 or more") {
		t.Errorf("note for 3 launches: %s", note)
	}
	if note := noIntervalNote(1, 6); !strings.Contains(note, "from one launch") {
		t.Errorf("note for 1 launch: %s", note)
	}
}
