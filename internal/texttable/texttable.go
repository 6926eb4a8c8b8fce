// Package texttable lays out nccltune's text tables: Table over
// text/tabwriter, width helpers (in runes, so µ and ± count as one column)
// for the layouts tabwriter cannot do, and Plural.
package texttable

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Table writes tab-terminated cells padded to the widest cell of their
// column; Flush drops the padding an empty last column leaves.
type Table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// New returns a Table writing to w, two spaces between columns.
func New(w io.Writer) *Table {
	t := &Table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush lays out what was written and writes it to the Table's writer.
func (t *Table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") {
			lines[i] = strings.TrimRight(l[:len(l)-1], " ") + "\n"
		}
	}
	t.buf.Reset()
	_, err := io.WriteString(t.out, strings.Join(lines, ""))
	return err
}

// Width is the number of columns s takes: its runes.
func Width(s string) int { return utf8.RuneCountInString(s) }

// PadRight left-aligns s in n columns.
func PadRight(s string, n int) string {
	if d := n - Width(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}

// PadLeft right-aligns s in n columns.
func PadLeft(s string, n int) string {
	if d := n - Width(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}

// Center centres s in n columns; an odd space goes to the right.
func Center(s string, n int) string {
	d := n - Width(s)
	if d <= 0 {
		return s
	}
	return strings.Repeat(" ", d/2) + s + strings.Repeat(" ", d-d/2)
}

// Plural is "1 trial", "2 trials", "3 launches".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
