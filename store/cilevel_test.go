package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCILevelLabel: the one wording of an interval's level, and a record
// stored before levels were (no ci_level) claims none.
func TestCILevelLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level CILevel
		want  string
	}{
		{0.95, "95% CI"}, {0.975, "97.5% CI"}, {1 - 0.0074, "99.26% CI"}, {0.99, "99% CI"},
		{0, "CI at an unrecorded level"}, {1, "CI at an unrecorded level"},
	} {
		if got := tc.level.Label(); got != tc.want {
			t.Errorf("CILevel(%v).Label() = %q, want %q", float64(tc.level), got, tc.want)
		}
	}
	var old Recommendation
	if err := json.Unmarshal([]byte(`{"env":{},"speedup":1.2,"speedup_ci":[1.1,1.3],"per_size":[{"bytes":1024,"baseline_us":2,"candidate_us":1}],"parts":[{"op":"all_reduce","band":"1M"}]}`), &old); err != nil {
		t.Fatal(err)
	}
	for what, l := range map[string]CILevel{"speedup": old.CILevel, "rows": RowsCILevel(old.PerSize), "parts": PartsCILevel(old.Parts)} {
		if !strings.Contains(l.Label(), "unrecorded") {
			t.Errorf("an old record's %s say %q: a level it did not record", what, l.Label())
		}
	}
	rec := Recommendation{CILevel: 0.9926, PerSize: []SizeComparison{{Bytes: 1, CILevel: 0.95}}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back Recommendation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.CILevel != 0.9926 || RowsCILevel(back.PerSize) != 0.95 {
		t.Errorf("levels after a round trip: %v, %v; want 0.9926, 0.95 (%s)", back.CILevel, RowsCILevel(back.PerSize), b)
	}
	if RowsCILevel([]SizeComparison{{CILevel: 0.95}, {CILevel: 0.99}}) != 0 {
		t.Error("rows at two levels share one")
	}
}
