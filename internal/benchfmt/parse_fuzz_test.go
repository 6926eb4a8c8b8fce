package benchfmt

import (
	"os"
	"testing"
)

// FuzzParse feeds arbitrary output to Parse: it must never panic, and what
// it returns must keep the parser's promises (see checkConsistent). The
// seeds are every parser input under testdata.
func FuzzParse(f *testing.F) {
	for _, in := range parseInputs(f) {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		checkConsistent(t, data, r, err)
		if f := ParseFacts(data); f != nil && (f.Channels < 0 || f.NRanks < 0) {
			t.Fatalf("facts %+v", f)
		}
	})
}

// FuzzParseJSON aims at the JSON reader directly, seeded with the JSON
// inputs and small documents around its edges.
func FuzzParseJSON(f *testing.F) {
	for _, in := range []string{
		"testdata/fixtures/ar2_full_periter.json",
		"testdata/json/ar2_nocheck_cycles_sim.json",
		"testdata/json/ar2_truncated.json",
		"testdata/json/version4_rows.json",
		"testdata/json/version2_unknown.json",
	} {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{}`, `{"version": 3}`, `{"version": 3, "results": []}`,
		`{"version": 3, "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
		  "out_of_place": {"time": 1, "alg_bw": "nan", "bus_bw": 0, "nwrong": null}}], "average_bus_bandwidth": {"bandwidth": 1}}`,
		`{"version": 3, "results": [{"size": -8, "out_of_place": {"time": -1}}]}`,
		`{"version": 3, "results": {"size": 8}}`,
		`{"version": "3", "results": [null, 1, "x", {"size": 1e300}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseJSON(data)
		checkConsistent(t, data, r, err)
	})
}
