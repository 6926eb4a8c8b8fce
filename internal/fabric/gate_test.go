package fabric

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in    string
		want  Threshold
		error string
	}{
		{in: "1M:9", want: Threshold{nccl.MiB, 9}},
		{in: " 256M:22.5 ", want: Threshold{256 * nccl.MiB, 22.5}},
		{in: "1048576:0.5", want: Threshold{nccl.MiB, 0.5}},
		{in: "1M", error: "write SIZE:GBPS"},
		{in: "1MB:9", error: "512K, not 512KiB"},
		{in: "lots:9", error: "not a number of bytes"},
		{in: "3M:9", error: "not a power of two"},
		{in: "0:9", error: "not a power of two"},
		{in: "128G:9", error: "not supported"},
		{in: "1M:-1", error: "more than 0"},
		{in: "1M:0", error: "more than 0"},
		{in: "1M:fast", error: "not a bus bandwidth"},
		{in: "1M:NaN", error: "not a bus bandwidth"},
		{in: "1M:", error: "not a bus bandwidth"},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.in)
		switch {
		case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
			t.Errorf("ParseThreshold(%q) error = %v, want one containing %q", tt.in, err, tt.error)
		case tt.error == "" && (err != nil || got != tt.want):
			t.Errorf("ParseThreshold(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	got, err := ParseThresholds([]string{"256M:22", "1M:9"})
	if err != nil || len(got) != 2 || got[0].Bytes != nccl.MiB || got[1].Bytes != 256*nccl.MiB {
		t.Errorf("ParseThresholds = %v, %v; want 1M then 256M", got, err)
	}
	if _, err := ParseThresholds([]string{"1M:9", "1048576:10"}); err == nil || !strings.Contains(err.Error(), "same size 1M") {
		t.Errorf("duplicate sizes: error = %v", err)
	}
	if _, err := ParseThresholds(nil); err == nil || !strings.Contains(err.Error(), "--at") {
		t.Errorf("no thresholds: error = %v", err)
	}
}

func TestParseBasis(t *testing.T) {
	for in, want := range map[string]Basis{"median": OnMedian, "lower-bound": OnLowerBound, "LOWER_BOUND": OnLowerBound} {
		if got, err := ParseBasis(in); err != nil || got != want {
			t.Errorf("ParseBasis(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseBasis("mean"); err == nil {
		t.Error("ParseBasis(mean) accepted")
	}
}

func TestBusBWFactor(t *testing.T) {
	res := &benchfmt.Result{Rows: []benchfmt.Row{
		{Bytes: 1024, Out: benchfmt.Measure{AlgBW: 0.01, BusBW: 0.02}}, // rounding makes this ratio 2
		{Bytes: nccl.MiB, Out: benchfmt.Measure{AlgBW: 7.47, BusBW: 11.20}},
		{Bytes: 256 * nccl.MiB, Out: benchfmt.Measure{AlgBW: 14.85, BusBW: 22.28}},
	}}
	if got := BusBWFactor(res); math.Abs(got-1.5) > 0.001 {
		t.Errorf("BusBWFactor = %v, want ≈1.5 (from the largest algbw)", got)
	}
	if got := BusBWFactor(nil); got != 1 {
		t.Errorf("BusBWFactor(nil) = %v, want 1", got)
	}
}

func TestJudge(t *testing.T) {
	ths := []Threshold{{nccl.MiB, 9}, {256 * nccl.MiB, 22}}
	m := []Measured{
		{Bytes: nccl.MiB, BusBW: 11.2, Lo: 9.5, Hi: 12, Launches: 5},
		{Bytes: 256 * nccl.MiB, BusBW: 22.3, Lo: 21.6, Hi: 22.6, Launches: 5},
	}
	tests := []struct {
		name   string
		m      []Measured
		on     Basis
		pass   bool
		checks []bool
		note   string
	}{
		{"median holds at both", m, OnMedian, true, []bool{true, true}, ""},
		{"lower bound misses 256M", m, OnLowerBound, false, []bool{true, false}, ""},
		{"1M too slow", []Measured{{Bytes: nccl.MiB, BusBW: 1.4, Lo: 1.3, Hi: 1.5}, m[1]}, OnMedian, false, []bool{false, true}, ""},
		{"size not measured", m[:1], OnMedian, false, []bool{true, false}, "not measured"},
		{"no lower bound", []Measured{{Bytes: nccl.MiB, BusBW: 11, Lo: math.NaN(), Hi: math.NaN(), Launches: 3}, m[1]},
			OnLowerBound, false, []bool{false, false}, "no lower bound from 3 launch(es); 5 are needed"},
		{"exactly at the threshold passes", []Measured{{Bytes: nccl.MiB, BusBW: 9, Lo: 9, Hi: 9}, m[1]}, OnMedian, true, []bool{true, true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(ths, tt.m, tt.on, 5)
			if v.Pass != tt.pass || v.JudgedOn != tt.on || len(v.Checks) != len(tt.checks) {
				t.Fatalf("verdict %+v, want pass %v on %s", v, tt.pass, tt.on)
			}
			notes := ""
			for i, c := range v.Checks {
				if c.Pass != tt.checks[i] {
					t.Errorf("check %d pass = %v, want %v (%+v)", i, c.Pass, tt.checks[i], c)
				}
				notes += c.Note
			}
			if tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
	if v := Judge(nil, m, OnMedian, 5); v.Pass {
		t.Error("a gate without thresholds passed")
	}
}

func TestCheckJSON(t *testing.T) {
	data, err := json.Marshal(Verdict{Pass: false, JudgedOn: OnLowerBound, Checks: []Check{
		{Bytes: nccl.MiB, MinBusBW: 9, BusBW: 11, BusBWLo: math.NaN(), BusBWHi: math.NaN(), Launches: 3, Note: "no lower bound"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pass":false,"judged_on":"lower_bound","checks":[{"busbw":11,"busbw_hi":null,"busbw_lo":null,"bytes":1048576,"launches":3,"min_busbw":9,"note":"no lower bound","pass":false}]}`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
}

func TestFailedChecks(t *testing.T) {
	v := Verdict{JudgedOn: OnLowerBound, Checks: []Check{
		{Bytes: 1 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 8.5},
		{Bytes: 2 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 9.5, Pass: true},
		{Bytes: 4 << 20, MinBusBW: 9, Note: "not measured"},
	}}
	if got, want := v.FailedChecks(), "1M lower bound 8.50 < 9 GB/s, 4M not measured"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
