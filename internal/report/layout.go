package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Drawing is any figure of this package: it renders itself as PNG (at
// the resolution asked, PNGDPI when 0) or SVG.
type Drawing interface {
	WriteAt(w io.Writer, format string, dpi int) error
}

// sheet is one figure laid out, top to bottom: the header (title,
// subtitle lines, the SIMULATED line), the plot, the legend and the
// caption. The header is drawn line by line: gonum's multi-line title sets
// its lines so close that a descender strikes into the next.
type sheet struct {
	width, plotHeight vg.Length
	title             string
	subtitle          []string
	simulated         string
	plot              *plot.Plot
	// yLabel and xLabel are drawn by the sheet, centred on the data area:
	// gonum centres its own at the middle of the range, far off on a log
	// axis.
	yLabel, xLabel string
	// leftPad is room left of the plot (gonum measures the landscape's
	// long tick labels a few points short).
	leftPad vg.Length
	legend  *legendRows
	caption []string
}

// Sizes of the sheet's texts, in points.
const (
	titleFont    = 13
	subtitleFont = 10.5
	captionFont  = 8.5
)

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Font: font.From(sans, size), Color: c, Handler: plot.DefaultTextHandler}
}

// lineHeight is the distance between two lines of text of that size.
func lineHeight(size vg.Length) vg.Length {
	e := textStyle(size, color.Black).FontExtents()
	return (e.Ascent + e.Descent) * 1.3
}

// margin is the space left of the legend and the caption, and above the title.
const margin = 0.3 * vg.Inch

func (s *sheet) headerLines() []styledLine {
	var out []styledLine
	add := func(txt string, size vg.Length, c color.Color) {
		for _, l := range wrap(txt, textStyle(size, c), s.width-2*margin) {
			out = append(out, styledLine{l, size, c})
		}
	}
	add(s.title, titleFont, color.Black)
	for _, l := range s.subtitle {
		add(l, subtitleFont, color.Gray{Y: 0x33})
	}
	if s.simulated != "" {
		add(s.simulated, subtitleFont, titleRed)
	}
	return out
}

func (s *sheet) captionLines() []string {
	var out []string
	for _, c := range s.caption {
		out = append(out, wrap(c, textStyle(captionFont, color.Black), s.width-2*margin)...)
	}
	return out
}

type styledLine struct {
	text  string
	size  vg.Length
	color color.Color
}

func (s *sheet) headerHeight() vg.Length {
	h := 0.12 * vg.Inch
	for _, l := range s.headerLines() {
		h += lineHeight(l.size)
	}
	return h + 0.06*vg.Inch
}

func (s *sheet) legendHeight() vg.Length {
	if s.legend == nil || len(s.legend.texts) == 0 {
		return 0
	}
	return vg.Length(len(s.legend.texts))*s.legendPitch() + 0.1*vg.Inch
}

func (s *sheet) captionHeight() vg.Length {
	n := len(s.captionLines())
	if n == 0 {
		return 0.1 * vg.Inch
	}
	return vg.Length(n)*lineHeight(captionFont) + 0.2*vg.Inch
}

func (s *sheet) size() (vg.Length, vg.Length) {
	return s.width, s.headerHeight() + s.plotHeight + s.legendHeight() + s.captionHeight()
}

// areas are the parts of the canvas the plot takes: all of it (area),
// without the axis labels the sheet draws (inner), and the data's (data).
func (s *sheet) areas(c draw.Canvas) (area, inner, data draw.Canvas) {
	top := c.Max.Y - s.headerHeight()
	area = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: c.Min.X, Y: top - s.plotHeight}, Max: vg.Point{X: c.Max.X, Y: top}}}
	axisStyle := textStyle(11, color.Black)
	var yw, xh vg.Length
	if s.yLabel != "" {
		yw = axisStyle.Height(s.yLabel) + vg.Points(5)
	}
	if s.xLabel != "" {
		xh = axisStyle.Height(s.xLabel) + vg.Points(3)
	}
	inner = draw.Crop(area, yw+s.leftPad, 0, xh, 0)
	return area, inner, s.plot.DataCanvas(inner)
}

func (s *sheet) draw(vc vg.CanvasSizer) { s.drawIn(draw.New(vc)) }

// drawIn draws the sheet in c's rectangle (the image, or its panel).
func (s *sheet) drawIn(c draw.Canvas) {
	y := c.Max.Y - 0.12*vg.Inch
	for _, l := range s.headerLines() {
		sty := textStyle(l.size, l.color)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y}, l.text)
		y -= lineHeight(l.size)
	}
	area, inner, data := s.areas(c)
	axisStyle := textStyle(11, color.Black)
	axisStyle.XAlign, axisStyle.YAlign = draw.XCenter, draw.YBottom
	yw := inner.Min.X - area.Min.X
	if s.yLabel != "" {
		sty := axisStyle
		sty.Rotation = math.Pi / 2
		descent := sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: area.Min.X + yw - vg.Points(5) - descent, Y: (data.Min.Y + data.Max.Y) / 2}, s.yLabel)
	}
	if s.xLabel != "" {
		c.FillText(axisStyle, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: area.Min.Y}, s.xLabel)
	}
	s.plot.Draw(inner)
	y = area.Min.Y - 0.05*vg.Inch
	if s.legend != nil && len(s.legend.texts) > 0 {
		lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Min.X + margin, Y: y - s.legendHeight()}, Max: vg.Point{X: c.Max.X - margin, Y: y}}}
		l := s.legend.Legend
		l.TextStyle.Font = font.From(sans, s.legendFont())
		l.Draw(lc)
		y -= s.legendHeight()
	}
	sty := textStyle(captionFont, color.Gray{Y: 0x55})
	sty.YAlign = draw.YTop
	y -= 0.08 * vg.Inch
	for _, l := range s.captionLines() {
		c.FillText(sty, vg.Point{X: c.Min.X + margin, Y: y}, l)
		y -= lineHeight(captionFont)
	}
}

// drawable is a laid-out image: a sheet, or a stack of them.
type drawable interface {
	size() (vg.Length, vg.Length)
	draw(vg.CanvasSizer)
}

// stack is sheets drawn one above the other in one image.
type stack []*sheet

func (st stack) size() (vg.Length, vg.Length) {
	var width, height vg.Length
	for _, s := range st {
		w, h := s.size()
		width, height = max(width, w), height+h
	}
	return width, height
}

func (st stack) draw(vc vg.CanvasSizer) {
	c := draw.New(vc)
	top := c.Max.Y
	for _, s := range st {
		_, h := s.size()
		s.drawIn(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Min.X, Y: top - h}, Max: vg.Point{X: c.Max.X, Y: top}}})
		top -= h
	}
}

// render renders d as PNG (dots per inch, PNGDPI when 0) or SVG.
func render(s drawable, w io.Writer, format string, dpi int) error {
	width, height := s.size()
	if dpi <= 0 {
		dpi = PNGDPI
	}
	switch format {
	case FormatPNG:
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		s.draw(c)
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	case FormatSVG:
		c := vgsvg.New(width, height)
		s.draw(c)
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		_, err := w.Write(svgFontFallback(buf.Bytes()))
		return err
	}
	return fmt.Errorf("unknown image format %q: use png or svg", format)
}

// wrap breaks a text into lines no wider than width, at spaces.
func wrap(txt string, sty text.Style, width vg.Length) []string {
	if txt == "" || sty.Width(txt) <= width {
		return []string{txt}
	}
	var lines []string
	cur := ""
	for _, w := range strings.Fields(txt) {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur != "" && sty.Width(next) > width {
			lines = append(lines, cur)
			next = w
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// newPlot is a plot in the house style: Liberation Sans, a light grid,
// no title (the sheet draws it).
func newPlot() *plot.Plot {
	p := plot.New()
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 11)
		ax.Tick.Label.Font = font.From(sans, 10)
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 0xe4}, color.Gray{Y: 0xe4}
	p.Add(g)
	return p
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 0.45 * vg.Inch
	l.TextStyle.Font = font.From(sans, legendFont)
	l.Padding = vg.Points(legendPadding)
	return l
}

// legendRows is a legend that remembers its texts, so that the sheet can
// count its rows and fit its widest entry.
type legendRows struct {
	plot.Legend
	texts []string
}

func (l *legendRows) add(text string, thumbs ...plot.Thumbnailer) {
	l.Legend.Add(text, thumbs...)
	l.texts = append(l.texts, text)
}

// legendFont is the legend's type size: legendFont points, down to 7
// when the widest entry would not fit otherwise.
func (s *sheet) legendFont() vg.Length {
	size := vg.Length(legendFont)
	if s.legend == nil {
		return size
	}
	avail := s.width - 2*margin - s.legend.ThumbnailWidth - vg.Points(legendPadding) - 0.1*vg.Inch
	widest := vg.Length(0)
	for _, t := range s.legend.texts {
		widest = max(widest, textStyle(size, color.Black).Width(t))
	}
	if widest > avail {
		size = max(7, size*avail/widest)
	}
	return size
}

func (s *sheet) legendPitch() vg.Length {
	sty := textStyle(s.legendFont(), color.Black)
	return sty.Rectangle("Xg").Max.Y + vg.Points(legendPadding)
}
