package store

import (
	"encoding/json"
	"math"
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

// TestOldStudyLevels: a study stored before levels were (no ci_level)
// reads back with the level its intervals provably had: its per-size
// rows, guard-size rows and parts at the confidence every study has
// compared them at (0.95: no flag sets it), its guarded ops at 1 − its
// stored alpha; the recommendation's own interval and its refusals'
// (a sequential look's, at a level not stored) stay unrecorded, and a
// level stored is kept.
func TestOldStudyLevels(t *testing.T) {
	t.Parallel()
	row := `{"bytes":1048576,"baseline_us":2,"candidate_us":1}`
	old := `{"kind":"search","band":"1M","search":{"min_effect":0.03,"alpha":0.01},` +
		`"recommendation":{"env":{},"speedup":1.2,"speedup_ci":[1.1,1.3],"per_size":[` + row + `],"guards":[` + row + `],` +
		`"parts":[{"op":"all_reduce","band":"1M","speedup":1.2,"speedup_ci":[1.1,1.3],"per_size":[` + row + `]}],` +
		`"op_guards":[{"op":"broadcast","speedup":1,"speedup_ci":[0.9,1.1],"per_size":[]}],` +
		`"refusals":[{"trial_id":3,"env":{},"ending":"op-regression","reason":"r","speedup":1.1,"speedup_ci":[1.0,1.2]}]}}`
	var st Study
	if err := json.Unmarshal([]byte(old), &st); err != nil {
		t.Fatal(err)
	}
	r := st.Recommendation
	for what, got := range map[string]CILevel{
		"per-size rows": RowsCILevel(r.PerSize), "guard-size rows": RowsCILevel(r.Guards),
		"parts": PartsCILevel(r.Parts), "a part's rows": RowsCILevel(r.Parts[0].PerSize),
	} {
		if got != 0.95 {
			t.Errorf("an old study's %s read at level %v (%s), want 0.95", what, float64(got), got.Label())
		}
	}
	if got := OpGuardsCILevel(r.OpGuards); math.Abs(float64(got)-0.99) > 1e-12 {
		t.Errorf("an old study's guarded ops read at level %v (%s), want 1 − its alpha 0.01", float64(got), got.Label())
	}
	if !strings.Contains(r.CILevel.Label(), "unrecorded") || !strings.Contains(r.Refusals[0].CILevel.Label(), "unrecorded") {
		t.Errorf("an old recommendation's own interval says %q, its refusal's %q: levels no record shows", r.CILevel.Label(), r.Refusals[0].CILevel.Label())
	}
	// A level stored stays as stored.
	stored := strings.Replace(old, `"per_size":[`+row+`],"guards"`, `"per_size":[{"bytes":1,"ci_level":0.9}],"guards"`, 1)
	var st2 Study
	if err := json.Unmarshal([]byte(stored), &st2); err != nil {
		t.Fatal(err)
	}
	if got := RowsCILevel(st2.Recommendation.PerSize); got != 0.9 {
		t.Errorf("a stored level 0.9 reads back as %v", float64(got))
	}
	// Without a stored alpha, nothing shows the guarded ops' level.
	noAlpha := strings.Replace(old, `,"alpha":0.01`, ``, 1)
	var st3 Study
	if err := json.Unmarshal([]byte(noAlpha), &st3); err != nil {
		t.Fatal(err)
	}
	if got := OpGuardsCILevel(st3.Recommendation.OpGuards); !strings.Contains(got.Label(), "unrecorded") {
		t.Errorf("guarded ops of a study without a stored alpha read at %s", got.Label())
	}
}
