package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// NaN (unknown) values must encode as null and decode back to NaN; known
// values must survive the round trip.
func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	// 3 vs 3: no interval (NaN bounds), per-size intervals NaN too.
	c := Compare(oneSize(10, 11, 12), oneSize(5, 5.5, 6), []int64{m1}, DefaultOptions())
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("marshal a comparison without interval: %v", err)
	}
	for _, want := range []string{`"lo":null`, `"hi":null`, `"speedup":2`, `"ci_ok":false`, `"lo_us":null`, `"median_us":11,`, `"score_us":11`, `"code":"ci-unavailable"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	var back Comparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Lo) || !math.IsNaN(back.Hi) || back.Speedup != c.Speedup || back.P != c.P || back.CIOK ||
		!math.IsNaN(back.Baseline.Sizes[0].Lo) || back.Baseline.Sizes[0].Median != 11 || back.Baseline.ScoreUS != c.Baseline.ScoreUS ||
		len(back.Warnings) != len(c.Warnings) || back.Reason != c.Reason {
		t.Errorf("round trip changed the comparison:\n got %+v\nwant %+v", back, c)
	}
}
