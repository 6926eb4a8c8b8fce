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
