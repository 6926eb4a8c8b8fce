package report

import (
	"math"
	"testing"
)

// A study compared with itself measured the same launches: every size is
// common, nothing differs, and the band's speedup is 1.
func TestCompareStudiesWithItself(t *testing.T) {
	s := sweepStudy()
	c, err := CompareStudies(s, s)
	if err != nil {
		t.Fatal(err)
	}
	_, ls := s.ResultLaunches()
	if want := len(measuredSizes(ls)); len(c.Rows) != want {
		t.Errorf("%d rows, want one per measured size (%d)", len(c.Rows), want)
	}
	for _, r := range c.Rows {
		if r.Significant || r.Change != 0 || r.AUS != r.BUS {
			t.Errorf("size %d: %+v, want the same times and no difference", r.Bytes, r)
		}
	}
	if math.Abs(c.Band.Speedup-1) > 1e-9 || c.Band.Significant {
		t.Errorf("band speedup %v significant %v, want 1 and not significant", c.Band.Speedup, c.Band.Significant)
	}
	if c.Arms[0].Study != s.Name() || c.Arms[0].ScoreUS == nil {
		t.Errorf("arm A %+v, want the study's name and its score", c.Arms[0])
	}
}
