package studyrun

import (
	"math"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/model"
)

func TestSweepRows(t *testing.T) {
	// Three launches; the last one's table gives the sizes (1M twice: two
	// -N cycles) and the bus-bandwidth factor (busbw = 1.5 × algbw).
	launches := []model.Launch{
		{Times: map[int64][]float64{1 << 20: {100}, 4 << 20: {400}}},
		{Times: map[int64][]float64{1 << 20: {110}, 4 << 20: {380}}},
		{Times: map[int64][]float64{1 << 20: {90}, 4 << 20: {420}}},
	}
	last := &benchfmt.Result{Rows: []benchfmt.Row{
		{Bytes: 1 << 20, Out: benchfmt.Measure{AlgBW: 10, BusBW: 15}},
		{Bytes: 1 << 20, Cycle: 1, Out: benchfmt.Measure{AlgBW: 10, BusBW: 15}},
		{Bytes: 4 << 20, Out: benchfmt.Measure{}},
	}}
	rows := sweepRows(launches, last)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (one per size): %+v", len(rows), rows)
	}
	tests := []struct {
		bytes        int64
		time         float64
		busbwPerAlgb float64
	}{
		{1 << 20, 100, 1.5},
		{4 << 20, 400, 1}, // no algbw in the table: busbw is algbw
	}
	for i, tt := range tests {
		r := rows[i]
		if r.Bytes != tt.bytes || r.TimeUS != tt.time {
			t.Errorf("row %d: %d bytes %g µs, want %d %g", i, r.Bytes, r.TimeUS, tt.bytes, tt.time)
		}
		if want := float64(tt.bytes) / tt.time / 1e3; math.Abs(r.AlgBW-want) > 1e-9 || math.Abs(r.BusBW-want*tt.busbwPerAlgb) > 1e-9 {
			t.Errorf("row %d: algbw %g busbw %g, want %g and %g", i, r.AlgBW, r.BusBW, want, want*tt.busbwPerAlgb)
		}
		if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || r.Lo > r.TimeUS || r.Hi < r.TimeUS {
			t.Errorf("row %d: interval [%g, %g] around %g", i, r.Lo, r.Hi, r.TimeUS)
		}
	}
}
