package benchfmt

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
)

// Pick is NCCL's choice for one size, spelled as NCCL_ALGO and NCCL_PROTO
// take it, and the channel count.
type Pick struct {
	Algo     string `json:"algo"`
	Proto    string `json:"proto"`
	Channels int    `json:"channels"`
}

func (p Pick) String() string {
	return fmt.Sprintf("%s %s, %s", p.Algo, p.Proto, texttable.Plural(p.Channels, "channel"))
}

func pickOf(c Choice) Pick {
	return Pick{Algo: nccl.AlgoName(c.Algo), Proto: nccl.ProtoName(c.Proto), Channels: c.Channels}
}

// ChoiceRow is what NCCL chose at one size with its defaults and with the recommendation.
type ChoiceRow struct {
	Collective string `json:"collective"`
	Bytes      int64  `json:"bytes"`
	// Default and Recommended are nil when that launch did not record it.
	Default     *Pick `json:"default"`
	Recommended *Pick `json:"recommended"`
	// Changed is true when both are known and differ.
	Changed bool `json:"changed"`
}

// CompareChoices pairs the two lists by collective and size, sorted by
// collective then size; empty (non-nil) when neither has anything.
func CompareChoices(defaults, recommended []Choice) []ChoiceRow {
	rows := map[choiceKey]*ChoiceRow{}
	get := func(c Choice) *ChoiceRow {
		k := choiceKey{c.Collective, c.Bytes}
		if rows[k] == nil {
			rows[k] = &ChoiceRow{Collective: c.Collective, Bytes: c.Bytes}
		}
		return rows[k]
	}
	for _, c := range defaults {
		if r := get(c); r.Default == nil {
			r.Default = new(pickOf(c))
		}
	}
	for _, c := range recommended {
		if r := get(c); r.Recommended == nil {
			r.Recommended = new(pickOf(c))
		}
	}
	out := make([]ChoiceRow, 0, len(rows))
	for _, r := range rows {
		r.Changed = r.Default != nil && r.Recommended != nil && *r.Default != *r.Recommended
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ChoiceRow) int {
		return cmp.Or(strings.Compare(a.Collective, b.Collective), cmp.Compare(a.Bytes, b.Bytes))
	})
	return out
}

// ChoicesTable writes, per message size, what NCCL chose with its defaults
// and with the recommendation, side by side, marking the sizes where they
// differ.
func ChoicesTable(w io.Writer, defaults, recommended []Choice) error {
	return ChoicesTableAs(w, "RECOMMENDED", defaults, recommended)
}

// ChoicesTableAs is ChoicesTable with the second column headed other.
func ChoicesTableAs(w io.Writer, other string, defaults, recommended []Choice) error {
	rows := CompareChoices(defaults, recommended)
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "NCCL's choices per size were not recorded (no explain launch with NCCL_DEBUG_SUBSYS=TUNING)")
		return err
	}
	several := rows[0].Collective != rows[len(rows)-1].Collective
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	if several {
		fmt.Fprint(tw, "COLLECTIVE\t")
	}
	fmt.Fprintf(tw, "SIZE\tNCCL DEFAULTS\t%s\t\n", other)
	for _, r := range rows {
		if several {
			fmt.Fprintf(tw, "%s\t", r.Collective)
		}
		mark := ""
		if r.Changed {
			mark = "changed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", nccl.FormatSize(r.Bytes), pickText(r.Default), pickText(r.Recommended), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads the last cells; the lines end without blanks.
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func pickText(p *Pick) string {
	if p == nil {
		return "—"
	}
	return p.String()
}
