package report

import (
	"io"
	"math"

	"github.com/nccltune/nccltune/internal/nccl"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// canvas is a figure's plot with its legend. Every figure draws the same
// kinds of marks (a shaded band, guard rules, reference lines, dot sets)
// and lists most of them in the legend; doing both in one call keeps the
// legend's order the drawing order and never lists what was not drawn.
type canvas struct {
	p      *plot.Plot
	legend *legendRows
}

func newCanvas() *canvas {
	return &canvas{p: newPlot(), legend: &legendRows{Legend: newLegend()}}
}

// legendMark is something drawn on the plot that also shows itself in
// the legend: a span, a rule, a scatter.
type legendMark interface {
	plot.Plotter
	plot.Thumbnailer
}

// mark draws m and gives it a legend row.
func (c *canvas) mark(label string, m legendMark) {
	c.p.Add(m)
	c.legend.add(label, m)
}

// shadeBand shades a searched band of sizes, [lo, hi] bytes.
func (c *canvas) shadeBand(lo, hi int64, label string) {
	c.mark(label+" (scored)", &xSpan{X0: float64(lo), X1: float64(hi), Color: bandColor})
}

// markGuards draws a dashed rule at each guard size, with one legend row
// for them all.
func (c *canvas) markGuards(guards []int64) {
	for i, g := range guards {
		rule := &vRule{X: float64(g), Style: draw.LineStyle{Color: guardColor, Width: vg.Points(1.5),
			Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}
		c.p.Add(rule)
		if i == 0 {
			c.legend.add("guard size "+nccl.FormatSizes(guards, ", ")+" (checked for regressions, not scored)", rule)
		}
	}
}

// dots draws a set of points in one glyph style with one legend row.
func (c *canvas) dots(xys plotter.XYs, style draw.GlyphStyle, label string) error {
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle = style
	c.mark(label, sc)
	return nil
}

// sizeAxis makes x the message size axis: log scale, power-of-two ticks,
// and half a power of two either side of the outermost sizes, so their
// points are not cut by the frame.
func (c *canvas) sizeAxis(xmin, xmax float64) {
	c.p.X.Scale = plot.LogScale{}
	c.p.X.Min, c.p.X.Max = xmin/math.Sqrt2, xmax*math.Sqrt2
	c.p.X.Tick.Marker = log2Ticks{}
}

// positiveRange is the extent of the finite, positive values seen: what a
// log axis can show.
type positiveRange struct{ min, max float64 }

// emptyRange is a range nothing has been added to yet.
func emptyRange() positiveRange { return positiveRange{min: math.Inf(1), max: math.Inf(-1)} }

func (r *positiveRange) add(xs ...float64) {
	for _, x := range xs {
		if finite(x) && x > 0 {
			r.min, r.max = math.Min(r.min, x), math.Max(r.max, x)
		}
	}
}

// writeSheet lays a figure out and renders it as PNG at dpi, or as SVG:
// what every figure's WriteAt does.
func writeSheet(layout func() (*sheet, error), w io.Writer, format string, dpi int) error {
	s, err := layout()
	if err != nil {
		return err
	}
	return render(s, w, format, dpi)
}
