package ui

import (
	"bytes"
	"math"
	"testing"
)

func TestTextHelpers(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"AKind before a consonant", AKind("sweep"), "a sweep"},
		{"AKind before a vowel", AKind("import"), "an import"},
		{"BaselineName of NCCL's defaults", BaselineName(nil), "NCCL defaults"},
		{"BaselineName ignores unset knobs", BaselineName(map[string]string{"NCCL_ALGO": ""}), "NCCL defaults"},
		{"BaselineName of a baseline", BaselineName(map[string]string{"NCCL_PROTO": "^LL128"}), "your baseline (NCCL_PROTO=^LL128)"},
		{"simTag of real hardware", simTag(false, "spark4"), ""},
		{"SimLabel without a profile", SimLabel(""), "SIMULATED fabric"},
		{"SimLabel with a profile", SimLabel("spark4"), "SIMULATED fabric: spark4"},
		{"changeText names each change", changeText(map[string]string{"NCCL_PROTO": "^LL128", "NCCL_ALGO": "Ring"},
			map[string]string{"NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "16"}),
			"NCCL_MAX_NCHANNELS unset → 16, NCCL_PROTO ^LL128 → unset"},
		{"changeText of the same config", changeText(map[string]string{"NCCL_ALGO": "Ring"}, map[string]string{"NCCL_ALGO": "Ring"}), "no change"},
		{"ciText with an interval", ciText(12.34, 11.9, 12.81), "12.3 [11.9, 12.8]"},
		{"ciText without one", ciText(12.34, math.NaN(), math.NaN()), "12.3"},
		{"ciText of a point", ciText(12.34, 12.34, 12.34), "12.3"},
		{"orDash of blanks", orDash("  "), "—"},
		{"orDash of a word", orDash("x"), "x"},
		{"WhereStored in a new database", WhereStored("/d/n.db", true), "  stored in /d/n.db (a new database; --db FILE or NCCLTUNE_DB chooses another)"},
		{"WhereStored in an old one", WhereStored("/d/n.db", false), "  stored in /d/n.db"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestWriteWrapped(t *testing.T) {
	var buf bytes.Buffer
	writeWrapped(&buf, "  fix: ", "set NCCL_IB_HCA to the ports that carry traffic and run again", 30)
	want := "  fix: set NCCL_IB_HCA to the\n       ports that carry\n       traffic and run again\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}
