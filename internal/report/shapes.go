package report

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plotters below add nothing to the data range, so a band or a guard
// never widens the axes.

// xSpan shades X0 to X1 over the whole height of the plot; a span of one
// size is a narrow strip centred on it.
type xSpan struct {
	X0, X1 float64
	Color  color.Color
}

// minSpan is the width a one-size span is drawn with.
const minSpan = 6 * vg.Millimeter / 2

func (s *xSpan) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := trX(s.X0), trX(s.X1)
	if x1-x0 < minSpan {
		mid := (x0 + x1) / 2
		x0, x1 = mid-minSpan/2, mid+minSpan/2
	}
	c.FillPolygon(s.Color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

func (s *xSpan) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(s.Color, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// vRule is a vertical line at X over the whole height of the plot.
type vRule struct {
	X     float64
	Style draw.LineStyle
}

func (r *vRule) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(r.X)
	c.StrokeLine2(r.Style, x, c.Min.Y, x, c.Max.Y)
}

func (r *vRule) Thumbnail(c *draw.Canvas) { (&hRule{Style: r.Style}).Thumbnail(c) }

// hRule is a horizontal line at Y from X0 to X1 (the whole width when
// both are zero).
type hRule struct {
	Y      float64
	X0, X1 float64
	Style  draw.LineStyle
}

func (r *hRule) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	y := trY(r.Y)
	x0, x1 := c.Min.X, c.Max.X
	if r.X0 != 0 || r.X1 != 0 {
		x0, x1 = trX(r.X0), trX(r.X1)
	}
	c.StrokeLine2(r.Style, x0, y, x1, y)
}

func (r *hRule) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(r.Style, c.Min.X, y, c.Max.X, y)
}

// yBox shades Y0 to Y1 between X0 and X1: an interval drawn as a band.
type yBox struct {
	X0, X1, Y0, Y1 float64
	Color          color.Color
}

func (b *yBox) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1, y0, y1 := trX(b.X0), trX(b.X1), trY(b.Y0), trY(b.Y1)
	c.FillPolygon(b.Color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
}

func (b *yBox) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	h := (r.Max.Y - r.Min.Y) / 4
	c.FillPolygon(b.Color, []vg.Point{{X: r.Min.X, Y: r.Min.Y + h}, {X: r.Max.X, Y: r.Min.Y + h}, {X: r.Max.X, Y: r.Max.Y - h}, {X: r.Min.X, Y: r.Max.Y - h}})
}

// whiskers are intervals from (X0, Y0) to (X1, Y1), capped.
type whiskers struct {
	Segs  [][4]float64
	Style draw.LineStyle
	Cap   vg.Length
}

func (w *whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, s := range w.Segs {
		x0, y0, x1, y1 := trX(s[0]), trY(s[1]), trX(s[2]), trY(s[3])
		c.StrokeLine2(w.Style, x0, y0, x1, y1)
		if w.Cap == 0 {
			continue
		}
		if x0 == x1 { // vertical: horizontal caps
			c.StrokeLine2(w.Style, x0-w.Cap/2, y0, x0+w.Cap/2, y0)
			c.StrokeLine2(w.Style, x1-w.Cap/2, y1, x1+w.Cap/2, y1)
		} else {
			c.StrokeLine2(w.Style, x0, y0-w.Cap/2, x0, y0+w.Cap/2)
			c.StrokeLine2(w.Style, x1, y1-w.Cap/2, x1, y1+w.Cap/2)
		}
	}
}

func (w *whiskers) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	x0, x1 := c.Min.X+vg.Points(4), c.Max.X-vg.Points(4)
	c.StrokeLine2(w.Style, x0, y, x1, y)
	if w.Cap > 0 {
		c.StrokeLine2(w.Style, x0, y-w.Cap/2, x0, y+w.Cap/2)
		c.StrokeLine2(w.Style, x1, y-w.Cap/2, x1, y+w.Cap/2)
	}
}

// annotation is a text at a data point, moved by DX, DY.
type annotation struct {
	X, Y   float64
	DX, DY vg.Length
	Text   string
	Style  text.Style
}

type annotations []annotation

func (ns annotations) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, n := range ns {
		c.FillText(n.Style, vg.Point{X: trX(n.X) + n.DX, Y: trY(n.Y) + n.DY}, n.Text)
	}
}
