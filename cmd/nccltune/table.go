package main

import (
	"bytes"
	"io"
	"strings"
	"text/tabwriter"
)

// table is the one table writer of nccltune's text output (history, show,
// import, search, sweep, gate): cells end with a tab and are padded to the
// widest cell of their column, so a long value (a config, an interval)
// widens its column instead of pushing the rest of its row out of line.
// Lines lose the padding of an empty last column on Flush.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

func (t *table) Flush() error {
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
