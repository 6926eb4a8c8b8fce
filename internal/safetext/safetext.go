// Package safetext keeps text from outside nccltune data wherever
// nccltune writes it (comment lines of generated files, the terminal):
// every character a reader could act on instead of showing is written as
// its Go escape, so the text stays on its line and means only itself.
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that does not show as itself
// (Shows: every line terminator, C0 and C1 control and bidi control)
// written as Go's %q escape, and each byte that is not UTF-8 as \xNN. A
// backslash stays as it is, which keeps Escape idempotent.
func Escape(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !Shows(r) }) {
		return s // the common case: no copy
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Shows(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // 'x' with x escaped
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// Shows reports whether r is written as itself: a printable character or
// the space (unicode.IsPrint, as strconv.Quote decides). It is the rule for
// a check that refuses text (store's labels): U+2028 and bidi controls are
// no controls to unicode.IsControl.
func Shows(r rune) bool { return r == ' ' || unicode.IsPrint(r) }

// CommentLine is the one way nccltune writes a comment line into a file
// it generates: "# " and text, escaped, then one "\n"; "#\n" for empty text.
func CommentLine(text string) string {
	if text == "" {
		return "#\n"
	}
	return "# " + Escape(text) + "\n"
}

// ShellWord returns s as one POSIX shell word that stands for exactly s:
// single-quoted, each single quote ended, escaped and reopened.
func ShellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellPlain reports whether s is one POSIX shell word that means itself
// both typed and after $(…)'s word splitting: letters, digits and
// _=^,.:/+-@% only.
func ShellPlain(s string) bool {
	return s != "" && strings.Trim(s, shellPlainChars) == ""
}

// shellPlainChars are the characters a ShellPlain word is made of.
const shellPlainChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=^,.:/+-@%"

// ShellArg is s itself when ShellPlain, else ShellWord(s).
func ShellArg(s string) string {
	if ShellPlain(s) {
		return s
	}
	return ShellWord(s)
}
