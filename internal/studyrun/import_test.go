package studyrun

import (
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

func TestSameTime(t *testing.T) {
	tests := []struct {
		text, js float64
		want     bool
	}{
		{12.34, 12.3449, true}, // the text's two decimals
		{12.34, 12.36, false},  // beyond them
		{18000, 18010.5, true}, // large times: relative precision
		{18000, 18020, false},  // more than 0.06 %
		{0.01, 0.0, true},      // within 0.011 µs
		{0.02, 0.0, false},     // not
	}
	for _, tt := range tests {
		if got := sameTime(tt.text, tt.js); got != tt.want {
			t.Errorf("sameTime(%v, %v) = %v, want %v", tt.text, tt.js, got, tt.want)
		}
	}
}

func TestPairRuns(t *testing.T) {
	row := func(bytes int64, us float64) benchfmt.Row {
		return benchfmt.Row{Bytes: bytes, Out: benchfmt.Measure{TimeUS: us}}
	}
	result := func(coll string, ranks int, rows ...benchfmt.Row) *benchfmt.Result {
		return &benchfmt.Result{Collective: coll, NRanks: ranks, Rows: rows}
	}
	text := &parsedFile{path: "a.txt", result: result("all_reduce", 8, row(1<<20, 10.12), row(2<<20, 20.5))}
	js := &parsedFile{path: "a.json", isJSON: true, result: result("all_reduce", 8, row(1<<20, 10.1234), row(2<<20, 20.4987))}
	other := &parsedFile{path: "b.txt", result: result("all_reduce", 8, row(1<<20, 11), row(2<<20, 20.5))}
	otherRanks := &parsedFile{path: "c.txt", result: result("all_reduce", 4, row(1<<20, 10.12), row(2<<20, 20.5))}
	tests := []struct {
		name  string
		files []*parsedFile
		want  []string // paths kept, in order
		twin  string   // the JSON's twin, if any
	}{
		{"text and its JSON are one run", []*parsedFile{text, js}, []string{"a.json"}, "a.txt"},
		{"order does not matter", []*parsedFile{js, text}, []string{"a.json"}, "a.txt"},
		{"another run's text stays", []*parsedFile{other, js}, []string{"b.txt", "a.json"}, ""},
		{"other ranks are another run", []*parsedFile{otherRanks, js}, []string{"c.txt", "a.json"}, ""},
		{"texts alone stay", []*parsedFile{text, other}, []string{"a.txt", "b.txt"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range tt.files {
				f.twin = nil
			}
			got := pairRuns(tt.files)
			var paths []string
			for _, f := range got {
				paths = append(paths, f.path)
			}
			if len(paths) != len(tt.want) {
				t.Fatalf("kept %v, want %v", paths, tt.want)
			}
			for i := range paths {
				if paths[i] != tt.want[i] {
					t.Fatalf("kept %v, want %v", paths, tt.want)
				}
			}
			twin := ""
			if js.twin != nil {
				twin = js.twin.path
			}
			if twin != tt.twin {
				t.Errorf("twin %q, want %q", twin, tt.twin)
			}
		})
	}
}

func TestLaunchSeed(t *testing.T) {
	seen := map[int64]bool{}
	for seq := 0; seq < 100; seq++ {
		s := LaunchSeed(42, seq)
		if s < 0 || seen[s] {
			t.Fatalf("seed %d of launch %d is negative or repeats", s, seq)
		}
		seen[s] = true
		if s != LaunchSeed(42, seq) {
			t.Fatalf("launch %d's seed is not reproducible", seq)
		}
	}
	if LaunchSeed(1, 0) == LaunchSeed(2, 0) {
		t.Error("two studies' first launches share a seed")
	}
}
