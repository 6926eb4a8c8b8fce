package benchfmt

import (
	"testing"
	"time"
)

// TestLaunchCost: a simulated launch is weighed by its modelled time, its
// own or its batch share's, a real one (or a simulated one without a
// model) by its measured Duration.
func TestLaunchCost(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name string
		l    Launch
		want time.Duration
	}{
		{"real", Launch{Duration: 3 * ms, Modelled: 7 * ms}, 3 * ms},
		{"real batch share", Launch{Duration: 3 * ms, Batch: &BatchMember{Modelled: 7 * ms}}, 3 * ms},
		{"simulated", Launch{Simulated: true, Duration: 3 * ms, Modelled: 7 * ms}, 7 * ms},
		{"simulated batch share", Launch{Simulated: true, Duration: 3 * ms, Modelled: 5 * ms, Batch: &BatchMember{Modelled: 7 * ms}}, 7 * ms},
		{"simulated, no model", Launch{Simulated: true, Duration: 3 * ms, Batch: &BatchMember{}}, 3 * ms},
	} {
		if got := tt.l.Cost(); got != tt.want {
			t.Errorf("%s: Cost %v, want %v", tt.name, got, tt.want)
		}
	}
}
