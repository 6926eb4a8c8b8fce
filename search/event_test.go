package search

import (
	"math"
	"testing"

	"github.com/nccltune/nccltune/model"
)

// TestGainBounds: the progress line's bounds on the leader's gain are the
// comparison's interval once both trials have launches enough, the range
// of the leader's launches against the baseline's score before, and none
// for the baseline itself or a leader of one launch.
func TestGainBounds(t *testing.T) {
	t.Parallel()
	sizes := []int64{1 << 20}
	trial := func(scores ...float64) *Trial {
		tr := &Trial{}
		for _, s := range scores {
			tr.Explore = append(tr.Explore, model.Launch{Times: map[int64][]float64{1 << 20: {s}}})
		}
		return tr
	}
	base := trial(100, 100)
	if g := gainBounds(base, base, sizes, model.DefaultOptions()); g != nil {
		t.Errorf("the baseline against itself: %+v", g)
	}
	if g := gainBounds(base, trial(50), sizes, model.DefaultOptions()); g != nil {
		t.Errorf("one launch gives no range: %+v", g)
	}
	g := gainBounds(base, trial(50, 80), sizes, model.DefaultOptions())
	if g == nil || g.Interval || math.Abs(g.Lo-1.25) > 1e-9 || math.Abs(g.Hi-2) > 1e-9 {
		t.Errorf("two launches: %+v, want the range 1.25…2", g)
	}
	many := func(x float64) *Trial {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = x * (1 + 0.01*float64(i))
		}
		return trial(xs...)
	}
	g = gainBounds(many(100), many(50), sizes, model.DefaultOptions())
	if g == nil || !g.Interval || !(g.Lo <= 2 && 2 <= g.Hi) {
		t.Errorf("ten launches each: %+v, want an interval around 2", g)
	}
}
