package benchfmt

import (
	"os"
	"strings"
	"testing"
)

// TestImplausibleRowsAreDropped: a row whose time is nan, inf or absurd,
// whose size is past any real message, or a line that is binary or too
// long, is dropped with a note naming it; the other rows stay.
func TestImplausibleRowsAreDropped(t *testing.T) {
	data, err := os.ReadFile("testdata/fixtures/ar2_full_periter.txt")
	if err != nil {
		t.Fatal(err)
	}
	const row = "     1048576        262144     float     sum      -1   381.26    2.75    2.75       0   360.29   413.50   413.50     3.01   393.34    2.67    2.67       0   371.01   430.14   430.14     4.04"
	if !strings.Contains(string(data), row) {
		t.Fatal("fixture changed: the 1M row is not there")
	}
	good, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, row, note string
	}{
		{"nan time", strings.Replace(row, "381.26", "nan", 1), `"nan"`},
		{"inf time", strings.Replace(row, "381.26", "inf", 1), `"inf"`},
		{"absurd time", strings.Replace(row, "381.26", "1e308", 1), "not plausible"},
		{"absurd bandwidth", strings.Replace(row, "2.75    2.75", "2.75    1e300", 1), "not plausible"},
		{"huge size", strings.Replace(row, "1048576", "9223372036854775807", 1), "9223372036854775807"},
		{"size past 2^64", strings.Replace(row, "1048576", "18446744073709551616", 1), "18446744073709551616"},
		{"negative size", strings.Replace(row, "1048576", "-4", 1), "size -4: a size or count cannot be negative"},
		{"negative count", strings.Replace(row, "262144", "-1", 1), "cannot be negative"},
		{"NUL byte", strings.Replace(row, "float", "flo\x00t", 1), "NUL"},
		{"long line", row + strings.Repeat(" 1", MaxLineBytes), "KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := Parse([]byte(strings.Replace(string(data), row, tc.row, 1)))
			if res == nil {
				t.Fatal("nothing parsed")
			}
			if len(res.Rows) != len(good.Rows)-1 {
				t.Errorf("%d rows, want %d", len(res.Rows), len(good.Rows)-1)
			}
			for _, r := range res.Rows {
				if r.Bytes == 1048576 {
					t.Errorf("the bad row was kept: %+v", r.Out)
				}
			}
			found := false
			for _, n := range res.Notes {
				found = found || strings.Contains(n, tc.note)
			}
			if !found {
				t.Errorf("no note with %q: %q", tc.note, res.Notes)
			}
		})
	}
}

// TestImplausibleJSONResultsAreDropped: the same for nccl-tests' JSON.
func TestImplausibleJSONResultsAreDropped(t *testing.T) {
	doc := func(size, time string) []byte {
		return []byte(`{"nccl_version": 22803, "results": [
		{"type": "float", "redop": "sum", "root": -1, "size": 1024, "count": 256, "out_of_place": {"time": 10, "alg_bw": 0.1, "bus_bw": 0.1, "nwrong": 0}},
		{"type": "float", "redop": "sum", "root": -1, "size": ` + size + `, "count": 256, "out_of_place": {"time": ` + time + `, "alg_bw": 0.1, "bus_bw": 0.1, "nwrong": 0}}],
		"average_bus_bandwidth": {"bandwidth": 1}}`)
	}
	for _, tc := range []struct{ size, time, note string }{
		{"2048", `"nan"`, "nan"},
		{"2048", "1e308", "not plausible"},
		{"9223372036854775807", "10", "not a real message size"},
	} {
		res, _ := Parse(doc(tc.size, tc.time))
		if res == nil || len(res.Rows) != 1 {
			t.Errorf("size %s time %s: %+v", tc.size, tc.time, res)
			continue
		}
		found := false
		for _, n := range res.Notes {
			found = found || strings.Contains(n, tc.note)
		}
		if !found {
			t.Errorf("size %s time %s: no note with %q: %q", tc.size, tc.time, tc.note, res.Notes)
		}
	}
}
