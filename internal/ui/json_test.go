package ui

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/nccltune/nccltune/store"
)

func TestWriteJSONSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"object keeps its field order", struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2}, `{"schema_version":1,"b":1,"a":2}`},
		{"empty object", map[string]int{}, `{"schema_version":1}`},
		{"already versioned", map[string]int{"schema_version": 7, "x": 1}, `{"schema_version":7,"x":1}`},
		{"a list of documents", []map[string]int{{"x": 1}, {"y": 2}}, `[{"schema_version":1,"x":1},{"schema_version":1,"y":2}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, tc.in); err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, buf.Bytes()); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, buf.Bytes())
			}
			if compact.String() != tc.want {
				t.Errorf("got %s, want %s", compact.String(), tc.want)
			}
		})
	}
}

func TestErrorDocument(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, ErrorDocument(ErrorJSON{Code: 2, Kind: "usage", Message: "--band: no sizes"})); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"error":{"code":2,"kind":"usage","message":"--band: no sizes"}}`
	if compact.String() != want {
		t.Errorf("got %s, want %s", compact.String(), want)
	}
}

func TestJSONNumber(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if jsonNumber(x) != nil || store.FiniteOr(x, 7) != 7 {
			t.Errorf("%v: jsonNumber %v, FiniteOr %v", x, jsonNumber(x), store.FiniteOr(x, 7))
		}
	}
	if jsonNumber(1.5) != 1.5 || store.FiniteOr(1.5, 7) != 1.5 {
		t.Error("a finite number changed")
	}
}
