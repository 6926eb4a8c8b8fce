package benchfmt

import (
	"bytes"
	"reflect"
	"testing"
)

// TestParseLaunch: the rows come from -J when it parses (they carry every
// iteration), the NCCL facts and failures from the text, which -J lacks.
func TestParseLaunch(t *testing.T) {
	stdout := readTestdata(t, "fixtures/ar2_full_periter.txt")
	jsonOut := readTestdata(t, "fixtures/ar2_full_periter.json")
	var stderr []byte
	for _, line := range bytes.SplitAfter(readTestdata(t, "fixtures/ar2_debug_tuning.txt"), []byte("\n")) {
		if bytes.Contains(line, []byte(" NCCL INFO ")) {
			stderr = append(stderr, line...)
		}
	}
	wantFacts := ParseFacts(stderr)
	if wantFacts == nil {
		t.Fatal("the debug fixture holds no NCCL log line")
	}
	tests := []struct {
		name        string
		launch      Launch
		rowsFrom    []byte // the output the rows must equal
		parse       func([]byte) (*Result, error)
		facts       bool
		wantErrFree bool
	}{
		{"json and text", Launch{Stdout: stdout, Stderr: stderr, JSON: jsonOut}, jsonOut, ParseJSON, true, true},
		{"text only", Launch{Stdout: stdout, Stderr: stderr}, stdout, Parse, true, true},
		{"json that does not parse falls back to text", Launch{Stdout: stdout, JSON: []byte("{")}, stdout, Parse, false, true},
		{"nothing printed", Launch{}, nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseLaunch(&tt.launch)
			if (err == nil) != tt.wantErrFree {
				t.Fatalf("err = %v, want error %v", err, !tt.wantErrFree)
			}
			if tt.parse == nil {
				return
			}
			want, _ := tt.parse(tt.rowsFrom)
			if !reflect.DeepEqual(r.Rows, want.Rows) {
				t.Errorf("rows differ from %d rows of the expected output", len(want.Rows))
			}
			if got := r.Facts != nil; got != tt.facts {
				t.Fatalf("facts present %v, want %v", got, tt.facts)
			}
			if tt.facts && !reflect.DeepEqual(r.Facts, wantFacts) {
				t.Errorf("facts\n got %+v\nwant %+v", r.Facts, wantFacts)
			}
		})
	}
}

// TestBatchRows: a batch member's rows leave round 0 (the warm-up round)
// out and take each size's median over the other rounds, which are its
// samples; a slow visit moves the median little.
func TestBatchRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rounds  []map[int64]float64
		want    map[int64]float64
		samples int
	}{
		{"warm-up round only", []map[int64]float64{{1024: 9}}, map[int64]float64{}, 0},
		{"warm-up left out", []map[int64]float64{{1024: 900}, {1024: 10}, {1024: 12}}, map[int64]float64{1024: 11}, 2},
		{"a visit 40 % slow", []map[int64]float64{{1024: 20, 2048: 40}, {1024: 10, 2048: 20}, {1024: 14, 2048: 21}, {1024: 10.5, 2048: 19}},
			map[int64]float64{1024: 10.5, 2048: 20}, 3},
	} {
		rows := BatchRows(tc.rounds)
		if len(rows) != len(tc.want) {
			t.Fatalf("%s: %d rows, want %d", tc.name, len(rows), len(tc.want))
		}
		for i, r := range rows {
			if i > 0 && rows[i-1].Bytes >= r.Bytes {
				t.Errorf("%s: rows out of order: %d after %d", tc.name, r.Bytes, rows[i-1].Bytes)
			}
			if r.Out.TimeUS != tc.want[r.Bytes] || len(r.Out.Iter.TimesUS) != tc.samples {
				t.Errorf("%s: %d bytes: %.1f µs over %d rounds, want %.1f over %d", tc.name, r.Bytes, r.Out.TimeUS, len(r.Out.Iter.TimesUS), tc.want[r.Bytes], tc.samples)
			}
		}
	}
}
