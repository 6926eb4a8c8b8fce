package store

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
)

// TestUndefinedNumbersAreStored: a decision holding NaN or Inf (a guard
// size with no spread) is stored, read back as NaN, and reaches JSON as
// null, never as an error.
func TestUndefinedNumbersAreStored(t *testing.T) {
	s := openWriter(t)
	st := searchStudy()
	if err := s.CreateStudy(st); err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	st.Status = vocab.StatusDone
	st.Recommendation = &Recommendation{Env: map[string]string{"NCCL_PROTO": "^LL"}, Speedup: nan, SpeedupCI: [2]float64{nan, math.Inf(1)},
		PValue: nan, MinEffect: 0.03, BaselineScoreUS: 10, ScoreUS: nan,
		PerSize: []SizeComparison{{Bytes: 1 << 20, BaselineUS: 10, CandidateUS: 8, Speedup: 1.25, PValue: 0.01}},
		Guards:  []SizeComparison{{Bytes: 1, BaselineUS: nan, BaselineLo: nan, CandidateUS: math.Inf(-1), Speedup: nan, PValue: nan}}}
	if err := s.UpdateStudy(st); err != nil {
		t.Fatalf("storing a decision with NaN: %v", err)
	}
	got, err := s.Study(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Recommendation
	if !math.IsNaN(r.Speedup) || !math.IsNaN(r.PValue) || !math.IsNaN(r.SpeedupCI[0]) || !math.IsNaN(r.SpeedupCI[1]) || r.MinEffect != 0.03 || r.BaselineScoreUS != 10 {
		t.Errorf("read back %+v", r)
	}
	if r.Env["NCCL_PROTO"] != "^LL" || len(r.PerSize) != 1 || r.PerSize[0].Speedup != 1.25 || r.PerSize[0].PValue != 0.01 {
		t.Errorf("finite fields lost: %+v", r)
	}
	if g := r.Guards[0]; g.Bytes != 1 || !math.IsNaN(g.Speedup) || !math.IsNaN(g.BaselineUS) || !math.IsNaN(g.CandidateUS) {
		t.Errorf("guard read back %+v", g)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"speedup":null`) || !json.Valid(b) {
		t.Errorf("JSON %s", b)
	}
	sums, err := s.Studies()
	if err != nil || len(sums) != 1 || sums[0].Recommendation == nil || !math.IsNaN(sums[0].Recommendation.Speedup) {
		t.Fatalf("summary: %+v %v", sums, err)
	}
	// Finite decisions keep the exact JSON of before.
	fin := Recommendation{Env: map[string]string{}, Speedup: 1.5, SpeedupCI: [2]float64{1.2, 1.8}, PValue: 0.001, Reason: "x", PerSize: []SizeComparison{}}
	type plain Recommendation
	want, _ := json.Marshal(plain(fin))
	if got, _ := json.Marshal(fin); string(got) != string(want) {
		t.Errorf("finite decision JSON changed:\n%s\n%s", got, want)
	}
}

// TestJSONFloat: the one float every --json document and the store write
// NaN and ±Inf as null with (report's tables and comparisons included),
// and FiniteOr, the one fallback where a number cannot be undefined.
func TestJSONFloat(t *testing.T) {
	for _, tc := range []struct {
		x        float64
		json     string
		finiteOr float64
	}{
		{math.NaN(), "null", 7},
		{math.Inf(1), "null", 7},
		{math.Inf(-1), "null", 7},
		{1.5, "1.5", 1.5},
	} {
		b, err := json.Marshal(struct{ X JSONFloat }{JSONFloat(tc.x)})
		if err != nil || string(b) != `{"X":`+tc.json+`}` {
			t.Errorf("%v: %s, %v; want %s", tc.x, b, err, tc.json)
		}
		if got := FiniteOr(tc.x, 7); got != tc.finiteOr {
			t.Errorf("FiniteOr(%v, 7) = %v, want %v", tc.x, got, tc.finiteOr)
		}
	}
}

// TestSizeComparisonJSON: the per-size row keeps a missing interval and an
// undefined speedup interval as null, and a row stored before it held the
// speedup's interval and each arm's launches reads back with neither
// (NaN, zero launches), which the report's table rebuilds.
func TestSizeComparisonJSON(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name, json           string
		lo, speedLo, speedHi float64
		launches             int
	}{
		{"stored before launches", `{"bytes":1048576,"baseline_us":10,"baseline_lo":10,"baseline_hi":10,"candidate_us":8,"candidate_lo":8,"candidate_hi":8,"speedup":1.25,"significant":true,"p_value":0.01}`, 10, nan, nan, 0},
		{"no interval", `{"bytes":1048576,"baseline_us":10,"baseline_lo":null,"baseline_hi":null,"candidate_us":8,"candidate_lo":null,"candidate_hi":null,"speedup":1.25,"speedup_lo":null,"speedup_hi":null,"significant":true,"p_value":0.01,"baseline_launches":3,"candidate_launches":3}`, nan, nan, nan, 3},
		{"intervals", `{"bytes":1048576,"baseline_us":10,"baseline_lo":9,"baseline_hi":11,"candidate_us":8,"candidate_lo":7,"candidate_hi":9,"speedup":1.25,"speedup_lo":1.1,"speedup_hi":1.4,"significant":true,"p_value":0.01,"baseline_launches":8,"candidate_launches":8}`, 9, 1.1, 1.4, 8},
	} {
		var c SizeComparison
		if err := json.Unmarshal([]byte(tc.json), &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(c.BaselineLo, tc.lo) || !same(c.SpeedupLo, tc.speedLo) || !same(c.SpeedupHi, tc.speedHi) ||
			c.BaselineLaunches != tc.launches || c.CandidateLaunches != tc.launches || c.Speedup != 1.25 || c.PValue != 0.01 {
			t.Errorf("%s: read %+v", tc.name, c)
		}
		if tc.launches == 0 {
			continue
		}
		if b, err := json.Marshal(c); err != nil || string(b) != tc.json {
			t.Errorf("%s: written %s, %v; want %s", tc.name, b, err, tc.json)
		}
	}
}

// Keys that only the overlay sets go last in sorted order: map order would
// make the stored bytes differ from one write to the next.
func TestMergeObjectsOrdersKeysOnlyTheOverlaySets(t *testing.T) {
	for range 20 {
		got, err := mergeObjects([]byte(`{"x":1,"y":2}`), []byte(`{"y":5,"d":4,"b":3,"c":6,"a":7}`))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"x":1,"y":5,"a":7,"b":3,"c":6,"d":4}`; string(got) != want {
			t.Fatalf("mergeObjects = %s, want %s", got, want)
		}
	}
}
