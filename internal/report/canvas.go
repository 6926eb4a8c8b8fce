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

// canvas is a figure's plot with its legend: drawing a mark and listing
// it in one call keeps the legend in drawing order and never lists what
// was not drawn.
type canvas struct {
	p      *plot.Plot
	legend *legendRows
}

func newCanvas() *canvas {
	return &canvas{p: newPlot(), legend: &legendRows{Legend: newLegend()}}
}

type legendMark interface {
	plot.Plotter
	plot.Thumbnailer
}

func (c *canvas) mark(label string, m legendMark) {
	c.p.Add(m)
	c.legend.add(label, m)
}

// shadeBand shades a searched band of sizes, [lo, hi] bytes.
func (c *canvas) shadeBand(lo, hi int64, label string) {
	c.mark(label+" (scored)", &xSpan{X0: float64(lo), X1: float64(hi), Color: bandColor})
}

// markGuards draws a dashed rule at each guard size, one legend row for
// all.
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
// half a power of two of room either side.
func (c *canvas) sizeAxis(xmin, xmax float64) {
	c.p.X.Scale = plot.LogScale{}
	c.p.X.Min, c.p.X.Max = xmin/math.Sqrt2, xmax*math.Sqrt2
	c.p.X.Tick.Marker = log2Ticks{}
}

// positiveRange is the extent of the finite, positive values seen.
type positiveRange struct{ min, max float64 }

func emptyRange() positiveRange { return positiveRange{min: math.Inf(1), max: math.Inf(-1)} }

func (r *positiveRange) add(xs ...float64) {
	for _, x := range xs {
		if finite(x) && x > 0 {
			r.min, r.max = math.Min(r.min, x), math.Max(r.max, x)
		}
	}
}

// writeSheet is every figure's WriteAt.
func writeSheet(layout func() (*sheet, error), w io.Writer, format string, dpi int) error {
	s, err := layout()
	if err != nil {
		return err
	}
	return render(s, w, format, dpi)
}
