package benchfmt

import (
	"strings"
	"testing"
)

// A simulated output's profile name is text from the file: a control or a
// line separator in it is kept escaped, for every printer, figure and
// report of an imported or parsed study (an ESC made an SVG no XML reader
// opens). A plain name is kept as it is.
func TestSimProfileStaysData(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"spark4", "spark4"},
		{"evil\x1b[31m\u2028x\u0085y", `evil\x1b[31m\u2028x\u0085y`},
	} {
		text := "# nccl-tests version 2.17.1 nccl-headers=22803 nccl-library=22803\n" +
			SimulatedHeader(tc.in) + "\n"
		r, _ := Parse([]byte(text))
		if r == nil || r.SimProfile != tc.want {
			t.Errorf("text header %q: profile %q, want %q", tc.in, profileOf(r), tc.want)
		}
		if strings.ContainsAny(profileOf(r), "\x1b\u2028\u0085") {
			t.Errorf("a control reached the parsed profile: %q", profileOf(r))
		}
	}
}

func profileOf(r *Result) string {
	if r == nil {
		return "<no result>"
	}
	return r.SimProfile
}
