package safetext

import (
	"strings"
	"testing"
	"unicode"
)

// TestEscape: every line terminator, control and bidi control is shown
// as its Go escape; printable text, spaces, backslashes and non-ASCII
// letters stay as they are.
func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"0x7f8c496ae9f661", "0x7f8c496ae9f661"},
		{"/tmp/nccl.gpu0.1001 µs × → é 日本", "/tmp/nccl.gpu0.1001 µs × → é 日本"},
		{`C:\logs\a.txt`, `C:\logs\a.txt`},
		{"a\nwrapper: /tmp/evil.sh", `a\nwrapper: /tmp/evil.sh`},
		{"a\rb\vc\fd\te", `a\rb\vc\fd\te`},
		{"a\u0085b\u2028c\u2029d", `a\u0085b\u2028c\u2029d`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00 del\x7f bell\a", `nul\x00 del\x7f bell\a`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"evil\u202egnp.exe \u2066x\u2069", `evil\u202egnp.exe \u2066x\u2069`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"\ufffd is a character", "\ufffd is a character"},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := Escape(Escape(tc.in)); again != Escape(tc.in) {
			t.Errorf("Escape is not idempotent on %q: %q", tc.in, again)
		}
	}
}

// TestEscapeLeavesNoBreak: over every rune a reader could take for a
// line break or a control, the escaped text is one line of printable
// characters.
func TestEscapeLeavesNoBreak(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r <= 0x3000; r++ {
		all.WriteRune(r)
	}
	for _, r := range Escape(all.String()) {
		if r != ' ' && !unicode.IsPrint(r) {
			t.Fatalf("Escape left %U", r)
		}
	}
}

// TestCommentLine: one line, whatever the text holds.
func TestCommentLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "#\n"},
		{"from 4 files", "# from 4 files\n"},
		{"x\u2028wrapper: /tmp/evil.sh", "# x\\u2028wrapper: /tmp/evil.sh\n"},
		{"x\nprefix: sh -c id\r\n", "# x\\nprefix: sh -c id\\r\\n\n"},
	} {
		if got := CommentLine(tc.in); got != tc.want {
			t.Errorf("CommentLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestShellArg: words a shell passes on unchanged stay bare (the docker
// flags export depends on it: $(…) removes no quotes); anything else is
// quoted so that it stands for exactly itself.
func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"spark4":            "spark4",
		"a:1,b:1":           "a:1,b:1",
		"NCCL_IB_HCA==x,y":  "NCCL_IB_HCA==x,y",
		"NCCL_PROTO=^LL128": "NCCL_PROTO=^LL128",
		"docker exec lane":  "'docker exec lane'",
		"it's":              `'it'\''s'`,
		"":                  "''",
		"--mpi-arg=-x $FOO": "'--mpi-arg=-x $FOO'",
		"a*":                "'a*'",
	} {
		if got := ShellArg(in); got != want {
			t.Errorf("ShellArg(%q) = %s, want %s", in, got, want)
		}
	}
}
