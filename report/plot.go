package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nccltune/nccltune/nccl"
)

// Figure is what one plot shows: curves of bus bandwidth against message
// size, the searched bands shaded, the guard sizes marked.
type Figure struct {
	// Title is the first title line, e.g. "s3-512K-4M: all_reduce bus
	// bandwidth by message size".
	Title string
	// Simulated, when not empty, is shown as a second title line in red
	// ("SIMULATED fabric (spark4): not a measurement").
	Simulated string
	Curves    []Curve
	Bands     []Band
	Guards    []int64
	// StudyInLegend prefixes each legend entry with its study, for
	// figures that mix studies.
	StudyInLegend bool
}

// Band is a searched band of message sizes, shaded in the plot.
type Band struct {
	Min, Max int64
	Label    string
}

// NewFigure builds the figure of curves drawn from the given studies: the
// title names the studies, and their bands and guard sizes are marked.
func NewFigure(curves []Curve, studies ...*Study) Figure {
	f := Figure{Curves: curves, StudyInLegend: len(studies) > 1}
	var names, sims, simNames []string
	collective := ""
	seenBand := map[[2]int64]bool{}
	seenGuard := map[int64]bool{}
	for _, s := range studies {
		st := s.Study
		names = append(names, st.Name)
		if collective == "" {
			collective = st.Collective
		}
		if st.Simulated {
			sims = append(sims, st.Launch.SimProfile)
			simNames = append(simNames, st.Name)
		}
		if st.Kind != "sweep" && st.BandMin > 0 && st.BandMax >= st.BandMin && !seenBand[[2]int64{st.BandMin, st.BandMax}] {
			seenBand[[2]int64{st.BandMin, st.BandMax}] = true
			f.Bands = append(f.Bands, Band{Min: st.BandMin, Max: st.BandMax, Label: "searched band " + bandText(st.BandMin, st.BandMax)})
		}
		for _, g := range st.GuardSizes {
			if !seenGuard[g] {
				seenGuard[g] = true
				f.Guards = append(f.Guards, g)
			}
		}
	}
	if collective == "" {
		collective = "all_reduce"
	}
	f.Title = fmt.Sprintf("%s: %s bus bandwidth by message size", strings.Join(names, ", "), collective)
	if len(sims) > 0 {
		profiles := strings.Join(compactStrings(sims), ", ")
		f.Simulated = "SIMULATED fabric"
		if profiles != "" {
			f.Simulated += " (" + profiles + ")"
		}
		if len(simNames) < len(names) { // mixed with real studies: say which
			f.Simulated += " for " + strings.Join(simNames, ", ")
		}
		f.Simulated += ": not a measurement of real hardware"
	}
	return f
}

func bandText(lo, hi int64) string {
	if lo == hi {
		return nccl.FormatSize(lo)
	}
	return nccl.FormatSize(lo) + "–" + nccl.FormatSize(hi)
}

func compactStrings(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Image formats a Figure can be written in.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// FormatOf returns the image format named by a file's extension.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case FormatPNG, FormatSVG:
		return ext, nil
	case "":
		return "", fmt.Errorf("%q has no extension: name the file .png or .svg", path)
	default:
		return "", fmt.Errorf("cannot write a .%s plot: name the file .png or .svg", ext)
	}
}

// Geometry of the picture. At PNGDPI the PNG is 1200 pixels wide.
const (
	figureWidth   = 8 * vg.Inch
	plotHeight    = 4.6 * vg.Inch
	legendFont    = 10
	legendPadding = 5
	// PNGDPI is the resolution of PNG output.
	PNGDPI = 150
)

// Size returns the figure's width and height: the plot, then one legend
// row per entry and the caption below it.
func (f Figure) Size() (w, h vg.Length) {
	rows := len(f.Curves) + len(f.Bands) + min(len(f.Guards), 1)
	return figureWidth, plotHeight + vg.Length(rows)*legendPitch() + 0.7*vg.Inch // caption: two lines
}

// Write renders the figure as PNG or SVG.
func (f Figure) Write(w io.Writer, format string) error {
	switch format {
	case FormatPNG:
		return f.WritePNG(w)
	case FormatSVG:
		return f.WriteSVG(w)
	}
	return fmt.Errorf("unknown image format %q: use png or svg", format)
}

// WritePNG renders the figure as a PNG image (PNGDPI).
func (f Figure) WritePNG(w io.Writer) error {
	width, height := f.Size()
	c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
	if err := f.draw(c); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// WriteSVG renders the figure as an SVG document. Text names the
// Liberation fonts the layout was measured with, falling back to their
// metric-compatible Arial and Helvetica, so it lines up where Liberation is
// not installed.
func (f Figure) WriteSVG(w io.Writer) error {
	width, height := f.Size()
	c := vgsvg.New(width, height)
	if err := f.draw(c); err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(svgFontFallback(buf.Bytes()))
	return err
}

var svgFontFamily = regexp.MustCompile(`font-family:Liberation Sans;`)

func svgFontFallback(svg []byte) []byte {
	return svgFontFamily.ReplaceAll(svg, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
}

// Colours: a colour-blind-safe palette (Okabe and Ito) for configs; NCCL's
// defaults are always dark grey, so the baseline reads the same in every
// picture.
var (
	defaultsColor = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
	palette       = []color.RGBA{
		{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
		{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
		{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
		{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
		{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
		{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
		{R: 0x00, G: 0x00, B: 0x00, A: 0xff}, // black
	}
	dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}
	// bandColor shades the searched band; guardColor marks guard sizes.
	bandColor  = color.RGBA{R: 0xff, G: 0xf3, B: 0xcf, A: 0xff}
	guardColor = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	titleRed   = color.RGBA{R: 0xb0, G: 0x00, B: 0x20, A: 0xff}
)

func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

// curveStyle gives curve i its colour and dash pattern: the first curve of
// NCCL's defaults is grey, every other curve (another study's defaults
// included) takes the palette by its place.
func curveStyle(i int, curves []Curve) (color.RGBA, []vg.Length) {
	if len(curves[i].Config) == 0 && !slices.ContainsFunc(curves[:i], func(c Curve) bool { return len(c.Config) == 0 }) {
		return defaultsColor, nil
	}
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
}

// legendPitch is the height of one legend entry with its padding.
func legendPitch() vg.Length {
	sty := draw.TextStyle{Font: font.From(sans, legendFont), Handler: plot.DefaultTextHandler}
	return sty.Rectangle("Xg").Max.Y + vg.Points(legendPadding)
}

// draw lays the figure out on a canvas: the plot on top, the legend and
// the caption below it, so the legend never hides a curve however many
// there are.
func (f Figure) draw(c vg.CanvasSizer) error {
	if len(f.Curves) == 0 {
		return fmt.Errorf("nothing to plot: no curve has a measured point")
	}
	p, legend, err := f.plot()
	if err != nil {
		return err
	}
	dc := draw.New(c)
	_, h := f.Size()
	below := h - plotHeight
	p.Draw(draw.Crop(dc, 0, 0, below, 0))

	area := draw.Crop(dc, 0.35*vg.Inch, -0.2*vg.Inch, 0, -(plotHeight + 0.05*vg.Inch))
	legend.Draw(area)

	caption := legend.TextStyle
	caption.Font = font.From(sans, 8.5)
	caption.Color = color.Gray{Y: 0x55}
	lines := []string{
		"Lines: per size, the median over launches of each launch's median time, as bus bandwidth (nccl-tests' busbw).",
		"Shading around a line: the 95% confidence interval of that median, or the min–max of the launches when there are fewer than 6.",
	}
	y := area.Max.Y - legend.Rectangle(area).Size().Y - 0.28*vg.Inch
	for _, line := range lines {
		dc.FillText(caption, vg.Point{X: area.Min.X, Y: y}, line)
		y -= 0.16 * vg.Inch
	}
	return nil
}

// plot builds the gonum plot and the legend drawn below it.
// sans is the typeface of every text: Liberation Sans, metric-compatible
// with Arial (see WriteSVG).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func (f Figure) plot() (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	setFont := func(sty *draw.TextStyle, size vg.Length) {
		sty.Font = font.From(sans, size)
	}
	title := f.Title
	if f.Simulated != "" {
		title += "\n" + f.Simulated
		p.Title.TextStyle.Color = titleRed
	}
	p.Title.Text = title
	setFont(&p.Title.TextStyle, 13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = "message size (log scale)"
	p.Y.Label.Text = "bus bandwidth (GB/s)"
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		setFont(&ax.Label.TextStyle, 11)
		setFont(&ax.Tick.Label, 10)
	}

	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, c := range f.Curves {
		for _, pt := range c.Points {
			xmin, xmax = math.Min(xmin, float64(pt.Bytes)), math.Max(xmax, float64(pt.Bytes))
			for _, y := range []float64{pt.BusBW, pt.BusBWHi} {
				if !math.IsNaN(y) && !math.IsInf(y, 0) {
					ymax = math.Max(ymax, y)
				}
			}
		}
	}
	if math.IsInf(xmin, 0) {
		return nil, plot.Legend{}, fmt.Errorf("nothing to plot: no curve has a measured point")
	}
	if ymax <= 0 {
		ymax = 1
	}
	// A little room either side of the outermost sizes, so their points
	// and the band's shading are not cut by the frame.
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = xmin/math.Pow(2, 0.45), xmax*math.Pow(2, 0.45)
	p.X.Tick.Marker = log2Ticks{}
	p.Y.Min, p.Y.Max = 0, ymax*1.08

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = 0.45 * vg.Inch
	legend.TextStyle.Font = font.From(sans, legendFont)
	legend.Padding = vg.Points(legendPadding)

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	grid.Horizontal.Color = color.Gray{Y: 0xe4}
	p.Add(grid)

	for _, b := range f.Bands {
		lo, hi := float64(b.Min)/math.Pow(2, 0.4), float64(b.Max)*math.Pow(2, 0.4)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: p.Y.Min}, {X: hi, Y: p.Y.Min}, {X: hi, Y: p.Y.Max}, {X: lo, Y: p.Y.Max}})
		if err != nil {
			return nil, legend, err
		}
		poly.Color = bandColor
		poly.LineStyle.Width = 0
		p.Add(poly)
		legend.Add(b.Label+" (scored)", poly)
	}
	for i, g := range f.Guards {
		line, err := plotter.NewLine(plotter.XYs{{X: float64(g), Y: p.Y.Min}, {X: float64(g), Y: p.Y.Max}})
		if err != nil {
			return nil, legend, err
		}
		line.Color = guardColor
		line.Width = vg.Points(1.5)
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(line)
		if i == 0 {
			legend.Add("guard size "+guardsText(f.Guards)+" (checked for regressions, not scored)", line)
		}
	}

	// Intervals first, so every line is drawn over every shading.
	type drawn struct {
		line    *plotter.Line
		points  *plotter.Scatter
		shading *plotter.Polygon
		label   string
	}
	var ds []drawn
	for i, c := range f.Curves {
		col, dash := curveStyle(i, f.Curves)
		var xys, lo, hi plotter.XYs
		for _, pt := range c.Points {
			if math.IsNaN(pt.BusBW) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(pt.Bytes), Y: pt.BusBW})
			if !math.IsNaN(pt.BusBWLo) && !math.IsNaN(pt.BusBWHi) {
				lo = append(lo, plotter.XY{X: float64(pt.Bytes), Y: pt.BusBWLo})
				hi = append(hi, plotter.XY{X: float64(pt.Bytes), Y: pt.BusBWHi})
			}
		}
		if len(xys) == 0 {
			continue
		}
		d := drawn{label: c.LegendText(f.StudyInLegend)}
		if len(lo) > 0 {
			ring := append(plotter.XYs{}, lo...)
			for j := len(hi) - 1; j >= 0; j-- {
				ring = append(ring, hi[j])
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, legend, err
			}
			poly.Color = withAlpha(col, 0x38)
			poly.LineStyle.Width = 0
			if len(lo) == 1 { // one size: the band is an error bar
				poly.LineStyle = draw.LineStyle{Color: withAlpha(col, 0x90), Width: vg.Points(4)}
			}
			p.Add(poly)
			d.shading = poly
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, legend, err
		}
		line.Color = col
		line.Width = vg.Points(2)
		line.Dashes = dash
		pts, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, legend, err
		}
		pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
		d.line, d.points = line, pts
		ds = append(ds, d)
	}
	for _, d := range ds {
		p.Add(d.line, d.points)
		thumbs := []plot.Thumbnailer{d.line, d.points}
		if d.shading != nil {
			thumbs = append([]plot.Thumbnailer{d.shading}, thumbs...)
		}
		legend.Add(d.label, thumbs...)
	}
	return p, legend, nil
}

func guardsText(gs []int64) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = nccl.FormatSize(g)
	}
	return strings.Join(parts, ", ")
}

// log2Ticks puts a tick at every power of two and labels them as
// nccl-tests writes sizes (32K, 1M, 256M), every other one when there are
// too many to read.
type log2Ticks struct{}

func (log2Ticks) Ticks(min, max float64) []plot.Tick {
	lo, hi := int(math.Ceil(math.Log2(min))), int(math.Floor(math.Log2(max)))
	if hi < lo {
		return nil
	}
	step := 1
	for (hi-lo)/step+1 > 16 {
		step++
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		t := plot.Tick{Value: math.Exp2(float64(e))}
		if e%step == 0 {
			t.Label = formatTickSize(e)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func formatTickSize(exp int) string {
	if exp < 0 {
		return ""
	}
	return nccl.FormatSize(int64(1) << exp)
}
