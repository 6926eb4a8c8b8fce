package golden

import (
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	tests := []struct{ want, got, has string }{
		{"a\nb\nc", "a\nx\nc", "line 2"},
		{"a\nb", "a\nb\nc", "line 3"},
		{"a", "a", "no difference"},
	}
	for _, tt := range tests {
		if d := FirstDiff(tt.want, tt.got); !strings.Contains(d, tt.has) {
			t.Errorf("FirstDiff(%q, %q) = %q, want it to say %q", tt.want, tt.got, d, tt.has)
		}
	}
}
