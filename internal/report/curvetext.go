package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
)

// WriteText prints a curve as a table: per size, the median time and bus
// bandwidth with their interval, and how many launches measured it.
func (c Curve) WriteText(w io.Writer) error {
	n := texttable.Plural(c.Launches, "launch")
	interval := fmt.Sprintf("[lo, hi] = %.0f%% confidence interval of the median", 100*c.Confidence)
	if c.MinMax {
		interval = "[lo, hi] = min–max of the launches (too few for a confidence interval)"
	}
	head := fmt.Sprintf("%s: %s, %s; median over launches, %s", c.Study, c.Label, n, interval)
	if c.Simulated {
		head += "; SIMULATED"
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "size\ttime µs [lo, hi]\tbusbw GB/s [lo, hi]\tlaunches")
	for _, p := range c.Points {
		fmt.Fprintf(tw, "%s\t%s %s\t%s %s\t%d\n", nccl.FormatSize(p.Bytes),
			formatValue(MetricTime, p.TimeUS), interval2(MetricTime, p.TimeLoUS, p.TimeHiUS),
			formatValue(MetricBusBW, p.BusBW), interval2(MetricBusBW, p.BusBWLo, p.BusBWHi), p.Launches)
	}
	return tw.Flush()
}

func interval2(metric string, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "[?]"
	}
	return "[" + formatValue(metric, lo) + ", " + formatValue(metric, hi) + "]"
}
