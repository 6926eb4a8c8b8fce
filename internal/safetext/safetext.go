// Package safetext keeps text from outside nccltune (a communicator id
// from a log, a file name, a value the user gave) data wherever nccltune
// writes it: in the comment lines of the files it generates (the workload
// YAML, every export format) and on a terminal. Every character that a
// reader could act on instead of showing (a line break, an escape
// sequence, a control or formatting character) is written as its Go
// escape, \x1b or \u2028, so the text stays on its line and means nothing
// but itself. It imports only the standard library, so every package that
// writes can use it.
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that does not show as itself
// written as Go's %q escape (\n, \x1b, \u0085, \u2028, \u202e), and each
// byte that is not UTF-8 as \xNN. That covers every line terminator a
// consumer honours: \n and \r, \v and \f (line breaks to some readers),
// U+0085, U+2028 and U+2029 (line breaks to YAML readers, which let one
// inside a # comment start a key of its own); every C0 and C1 control
// (ESC starts a terminal's escape sequences, and U+009B is a CSI to some
// terminals), NUL and DEL; and the bidirectional controls, which reorder
// what a terminal shows. The rule is strconv's (unicode.IsPrint), so the
// text reads as Go would quote it, without the quotes: escaped, not
// dropped or replaced by a space, so that a reader sees the text held
// something and two ids that differ in one still differ. A backslash stays
// as it is: the escapes are for reading, not for parsing back, and
// keeping it makes Escape idempotent (a Windows path keeps its single
// backslashes).
func Escape(s string) string {
	if clean(s) {
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
// the space (unicode.IsPrint, as strconv.Quote decides). It is the rule
// Escape applies, for a check that refuses text instead (store's labels):
// a line or paragraph separator and a bidi control are no controls to
// unicode.IsControl, yet one breaks a line and the other reorders it.
func Shows(r rune) bool { return r == ' ' || unicode.IsPrint(r) }

// clean reports whether Escape leaves s as it is.
func clean(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if !Shows(r) {
			return false
		}
	}
	return true
}

// CommentLine is the one way nccltune writes a comment line into a file
// it generates: "# " and text, escaped (Escape), then one "\n"; "#\n" for
// empty text. Every line break text could hold is escaped, so the line
// ends where nccltune ends it and whatever followed stays in the comment,
// whichever reader (YAML, a shell, docker's env file, NCCL's tuner
// plugin) reads the file.
func CommentLine(text string) string {
	if text == "" {
		return "#\n"
	}
	return "# " + Escape(text) + "\n"
}

// ShellWord returns s as one POSIX shell word that stands for exactly s:
// single-quoted, with each single quote replaced by
//
//	'\''
//
// (end the quoting, an escaped quote, reopen). Inside single quotes
// nothing is special, not $, `, \ or a newline, so any value survives.
func ShellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellPlain reports whether s is one POSIX shell word that means itself
// both typed and after $(…)'s word splitting: letters, digits and
// _=^,.:/+-@% only (no whitespace, quotes, escapes, expansions, globs or
// operators). docker run $(nccltune export --format docker) depends on
// it: $(…) splits words but removes no quotes.
func ShellPlain(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_=^,.:/+-@%", r):
		default:
			return false
		}
	}
	return true
}

// ShellArg is s as a shell word: s itself when ShellPlain, else quoted
// (ShellWord), for command lines a user copies.
func ShellArg(s string) string {
	if ShellPlain(s) {
		return s
	}
	return ShellWord(s)
}
