package texttable

import (
	"bytes"
	"fmt"
	"testing"
)

func TestPadding(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"right pads", PadRight("ab", 4), "ab  "},
		{"right keeps a longer string", PadRight("abcdef", 4), "abcdef"},
		{"left pads", PadLeft("12.5", 6), "  12.5"},
		{"left counts runes", PadLeft("µs", 4), "  µs"},
		{"centre, odd space right", Center("ab", 5), " ab  "},
		{"centre counts runes", Center("±∞", 4), " ±∞ "},
		{"centre keeps a longer string", Center("abcdef", 3), "abcdef"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if w := Width("│ time µs ±"); w != 11 {
		t.Errorf("Width counts %d, want 11 runes", w)
	}
}

// TestTableAlignsAndTrims: columns are padded to their widest cell and a
// line ends without the padding of an empty last column.
func TestTableAlignsAndTrims(t *testing.T) {
	var out bytes.Buffer
	tab := New(&out)
	fmt.Fprintf(tab, "trial\tconfig\tscore\t\n")
	fmt.Fprintf(tab, "1\tNCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=8\t140.2\t\n")
	fmt.Fprintf(tab, "12\tdefaults\t\t\n")
	if err := tab.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "trial  config                                  score\n" +
		"1      NCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=8  140.2\n" +
		"12     defaults\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
