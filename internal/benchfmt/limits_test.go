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
		{"tiny time", strings.Replace(row, "381.26", "1e-300", 1), "would be 1.05e+303 GB/s, not plausible"},
		{"tiny in-place time", strings.Replace(row, "393.34", "1e-9", 1), "not plausible"},
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
		{"2048", "1e-300", "would be 2.05e+300 GB/s, not plausible"},
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

// TestCheckTime: a time is plausible while the bandwidth it implies is
// at most MaxBandwidth; 0 (no time) is not judged here.
func TestCheckTime(t *testing.T) {
	for _, tc := range []struct {
		bytes  int64
		timeUS float64
		ok     bool
	}{
		{1 << 20, 100, true},
		{1 << 20, 1e-300, false},
		{1 << 30, 1, false}, // 1 GiB in 1 µs: 1074 TB/s
		{1 << 30, 1.1, true},
		{8, 1e-3, true},
		{1 << 20, 0, true},
	} {
		if err := CheckTime(tc.bytes, tc.timeUS); (err == nil) != tc.ok {
			t.Errorf("CheckTime(%d, %g) = %v, want ok %v", tc.bytes, tc.timeUS, err, tc.ok)
		}
	}
	if err := CheckSize(Size{Bytes: 1 << 20, TimeUS: 100, Samples: []float64{100, 1e-300}}); err == nil {
		t.Error("a tiny sample passed")
	}
}

// TestOneFileOneRun: two runs saved into one text file are counted, with
// a note; a JSON document is one run and gives the NCCL env it recorded.
func TestOneFileOneRun(t *testing.T) {
	ar, err := os.ReadFile("testdata/ops/all_reduce_4r.txt")
	if err != nil {
		t.Fatal(err)
	}
	ag, err := os.ReadFile("testdata/ops/all_gather_4r.txt")
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Parse(ar)
	two, _ := Parse(append(append([]byte{}, ar...), ag...))
	if one.Runs != 1 || two == nil || two.Runs != 2 || two.Collective != "all_reduce" {
		t.Fatalf("runs: one file %d, two files %+v", one.Runs, two)
	}
	found := false
	for _, n := range two.Notes {
		found = found || strings.Contains(n, "the output holds 2 runs (another starts here: all_gather_perf)")
	}
	if !found {
		t.Errorf("no note of the second run: %q", two.Notes)
	}
	js, err := os.ReadFile("testdata/ops/all_reduce_4r.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(js)
	if err != nil || r.Runs != 1 || r.Env["NCCL_SOCKET_IFNAME"] != "lo" {
		t.Errorf("JSON: %v, runs %d, env %v", err, r.Runs, r.Env)
	}
	for k := range r.Env {
		if !strings.HasPrefix(k, "NCCL_") {
			t.Errorf("env keeps %s: only NCCL_* variables are kept", k)
		}
	}
}
