package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Figure is the picture of curves against message size: bus bandwidth
// (linear) or time (µs, log), one line per config with its interval, the
// searched bands shaded, the guard sizes marked.
type Figure struct {
	// Subject opens the title ("s3-512K-4M: all_reduce"); the metric
	// completes it.
	Subject string
	// Subtitle lines say what the curves are drawn from and, for a
	// study's decision, the speedup with its interval.
	Subtitle []string
	// Simulated, when not empty, is shown as a line in red.
	Simulated string
	// Metric is MetricBusBW (the default) or MetricTime.
	Metric string
	Curves []Curve
	Bands  []Band
	Guards []int64
	// StudyInLegend prefixes each legend entry with its study.
	StudyInLegend bool
	// Op, when set, names the collective on the value axis.
	Op nccl.Op
}

// Band is a searched band of message sizes, shaded in the plot.
type Band struct {
	Min, Max int64
	Label    string
}

// NewFigure builds the figure of curves drawn from the given studies,
// with the bands their searches scored and their guard sizes marked.
func NewFigure(curves []Curve, studies ...*Study) Figure {
	f := Figure{Curves: curves, StudyInLegend: len(studies) > 1}
	var names, sims, simNames, collectives []string
	for _, s := range studies {
		st := s.Study
		names = append(names, st.Name)
		if op := string(st.Op()); !slices.Contains(collectives, op) {
			collectives = append(collectives, op) // the title names every op plotted
		}
		if st.Simulated {
			sims = append(sims, st.Launch.SimProfile)
			simNames = append(simNames, st.Name)
		}
		if lo, hi := searchedBand(st); hi > 0 && !slices.ContainsFunc(f.Bands, func(b Band) bool { return b.Min == lo && b.Max == hi }) {
			f.Bands = append(f.Bands, Band{Min: lo, Max: hi, Label: "searched band " + bandText(lo, hi)})
		}
		for _, g := range st.GuardSizes {
			if !slices.Contains(f.Guards, g) {
				f.Guards = append(f.Guards, g)
			}
		}
	}
	if len(collectives) == 0 {
		collectives = []string{string(nccl.AllReduce)}
	}
	f.Subject = fmt.Sprintf("%s: %s", strings.Join(names, ", "), strings.Join(collectives, ", "))
	f.Simulated = simulatedLine(sims, simNames, len(names))
	return f
}

func (s *Study) simulatedLine() string {
	if !s.Study.Simulated {
		return ""
	}
	return simulatedLine([]string{s.Study.Launch.SimProfile}, []string{s.Name()}, 1)
}

// simulatedLine is the red header line of a figure with simulated data.
func simulatedLine(sims, simNames []string, studies int) string {
	if len(sims) == 0 {
		return ""
	}
	s := "SIMULATED fabric"
	var profiles []string
	for _, p := range sims {
		if p != "" && !slices.Contains(profiles, p) {
			profiles = append(profiles, p)
		}
	}
	if len(profiles) > 0 {
		s += " (" + strings.Join(profiles, ", ") + ")"
	}
	if len(simNames) < studies { // mixed with real studies: say which
		s += " for " + strings.Join(simNames, ", ")
	}
	return s + ": not a measurement of real hardware"
}

// studiedText names what a study measured: a timed workload's calls
// (store.WorkloadText), never the band around them; otherwise its band.
func studiedText(st *store.Study) string {
	if w := store.WorkloadText(st); w != "" {
		return w
	}
	return bandText(st.BandMin, st.BandMax)
}

// opHeading is one op's heading in the report: "all_reduce 8K–2M", or a
// timed op's calls, which name their op.
func opHeading(op nccl.Op, st *store.Study) string {
	if store.WorkloadText(st) != "" {
		return studiedText(st)
	}
	return string(op) + " " + studiedText(st)
}

// searchedBand is the band a search scored; (0, 0) for a study that is
// no search or of a timed workload (measured at its calls' own sizes).
func searchedBand(st *store.Study) (lo, hi int64) {
	if st.Kind != vocab.KindSearch || store.WorkloadText(st) != "" || st.BandMin <= 0 || st.BandMax < st.BandMin {
		return 0, 0
	}
	return st.BandMin, st.BandMax
}

func bandText(lo, hi int64) string {
	if lo == hi {
		return nccl.FormatSize(lo)
	}
	return nccl.FormatSize(lo) + "–" + nccl.FormatSize(hi)
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

// WriteAt renders the figure as PNG at dpi dots per inch, or as SVG.
func (f Figure) WriteAt(w io.Writer, format string, dpi int) error {
	return writeSheet(f.sheet, w, format, dpi)
}

var (
	svgFontFamily = regexp.MustCompile(`font-family:Liberation Sans;`)
	svgTextRE     = regexp.MustCompile(`(?s)<text ([^>]*?style="[^"]*?font-size:([0-9.]+)px[^"]*")>([^<]*)</text>`)
)

// svgFontFallback names fonts metric-compatible with Liberation Sans after
// it, and gives every text the length it was laid out with: a browser
// without any of them (DejaVu Sans is a tenth wider) still fits each text
// where the layout put it.
func svgFontFallback(svg []byte) []byte {
	svg = svgFontFamily.ReplaceAll(svg, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
	return svgTextRE.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := svgTextRE.FindSubmatch(m)
		size, err := strconv.ParseFloat(string(sub[2]), 64)
		if err != nil || len(bytes.TrimSpace(sub[3])) == 0 {
			return m
		}
		txt := html.UnescapeString(string(sub[3]))
		w := textStyle(vg.Length(size), color.Black).Width(txt)
		return []byte(fmt.Sprintf(`<text %s textLength="%.2f" lengthAdjust="spacingAndGlyphs">%s</text>`, sub[1], float64(w/vg.Points(1)), sub[3]))
	})
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
	// bandColor shades the searched band; guardColor marks guard sizes;
	// otherColor draws the configs --all does not highlight.
	bandColor  = color.RGBA{R: 0xff, G: 0xf3, B: 0xcf, A: 0xff}
	guardColor = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
	otherColor = color.RGBA{R: 0xbb, G: 0xbb, B: 0xbb, A: 0xff}
	titleRed   = color.RGBA{R: 0xb0, G: 0x00, B: 0x20, A: 0xff}
)

func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

// curveStyle gives curve i its colour and dash pattern: the first curve of
// NCCL's defaults is grey, every other takes the palette by its place
// among the coloured curves; an exploration curve takes the colour of its
// config's decision curve.
func curveStyle(i int, curves []Curve) (color.RGBA, []vg.Length) {
	c := curves[i]
	if c.Exploration() {
		for j, d := range curves {
			if !d.Exploration() && d.Study == c.Study && d.Trial == c.Trial {
				col, _ := curveStyle(j, curves)
				return col, []vg.Length{vg.Points(1.5), vg.Points(2.5)}
			}
		}
	}
	isDefaults := func(c Curve) bool { return len(c.Config) == 0 && !c.Exploration() }
	if isDefaults(c) && !slices.ContainsFunc(curves[:i], isDefaults) {
		return defaultsColor, nil
	}
	k := 0 // place among the coloured curves before it
	for j := range i {
		if !curves[j].Exploration() && !curves[j].Background && !(isDefaults(curves[j]) && !slices.ContainsFunc(curves[:j], isDefaults)) {
			k++
		}
	}
	return palette[k%len(palette)], dashes[(k/len(palette))%len(dashes)]
}

// sans is the typeface of every text: Liberation Sans, metric-compatible
// with Arial.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func (f Figure) value(pt Point) (v, lo, hi float64) {
	if f.Metric == MetricTime {
		return pt.TimeUS, pt.TimeLoUS, pt.TimeHiUS
	}
	return pt.BusBW, pt.BusBWLo, pt.BusBWHi
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// sheet lays the figure out, the legend below the plot so that it never
// hides a curve.
func (f Figure) sheet() (*sheet, error) {
	if len(f.Curves) == 0 {
		return nil, fmt.Errorf("nothing to plot: no curve has a measured point")
	}
	timeAxis := f.Metric == MetricTime
	xLabel := "message size (log scale)"
	yLabel := "bus bandwidth (GB/s)"
	what := "bus bandwidth"
	if timeAxis {
		yLabel = "time per operation (µs, log scale)"
		what = "time"
	}
	title := fmt.Sprintf("%s %s by message size", f.Subject, what)
	cv := newCanvas()
	if err := f.axes(cv, timeAxis); err != nil {
		return nil, err
	}
	f.markSizes(cv, timeAxis)
	if err := f.drawCurves(cv); err != nil {
		return nil, err
	}
	return &sheet{width: figureWidth, plotHeight: plotHeight, title: title, subtitle: f.Subtitle, simulated: f.Simulated,
		plot: cv.p, yLabel: opLabel(f.Op, yLabel), xLabel: xLabel, legend: cv.legend, caption: f.caption(timeAxis)}, nil
}

// axes fits the axes to every measured point and its interval.
func (f Figure) axes(cv *canvas, timeAxis bool) error {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ys := positiveRange{min: math.Inf(1), max: 0}
	for _, c := range f.Curves {
		for _, pt := range c.Points {
			v, lo, hi := f.value(pt)
			if !finite(v) || !(v > 0) {
				continue
			}
			xmin, xmax = math.Min(xmin, float64(pt.Bytes)), math.Max(xmax, float64(pt.Bytes))
			ys.add(v, lo, hi)
		}
	}
	if math.IsInf(xmin, 0) {
		return fmt.Errorf("nothing to plot: no curve has a measured point")
	}
	p := cv.p
	cv.sizeAxis(xmin, xmax)
	if timeAxis {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = ys.min/1.3, ys.max*1.3
	} else {
		p.Y.Tick.Marker = linearTicks{}
		p.Y.Min, p.Y.Max = 0, ys.max*1.08
	}
	return nil
}

// markSizes marks the searched bands, the guard sizes and, on a time
// axis, the latency floor.
func (f Figure) markSizes(cv *canvas, timeAxis bool) {
	for _, b := range f.Bands {
		cv.shadeBand(b.Min, b.Max, b.Label)
	}
	cv.markGuards(f.Guards)
	if timeAxis {
		if floor, at, ok := f.latencyFloor(); ok {
			rule := &hRule{Y: floor, Style: draw.LineStyle{Color: color.Gray{Y: 0x77}, Width: vg.Points(1),
				Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}}
			cv.mark(fmt.Sprintf("latency floor ≈ %s µs (the smallest median time, at %s)", formatValue(MetricTime, floor), sizeText(at)), rule)
		}
	}
}

type drawnCurve struct {
	line   *plotter.Line
	points *plotter.Scatter
	label  string
	thumbs []plot.Thumbnailer // the shading (if any), the line and the points
}

// drawCurves draws the grey curves first, then every interval, then the
// coloured lines, so every highlighted line is drawn over every shading.
func (f Figure) drawCurves(cv *canvas) error {
	p := cv.p
	var ds []drawnCurve
	others := 0
	var greyLine *plotter.Line
	for i, c := range f.Curves {
		xys, lo, hi := f.curveXYs(c)
		if len(xys) == 0 {
			continue
		}
		if c.Background {
			line, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			line.Color, line.Width = otherColor, vg.Points(1)
			p.Add(line)
			greyLine = line
			others++
			continue
		}
		d, err := f.highlight(cv, i, xys, lo, hi)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	// Lines last to first, so the first curves (NCCL defaults, the
	// confirmed config) are drawn over the others; legend first to last.
	for i := len(ds) - 1; i >= 0; i-- {
		p.Add(ds[i].line, ds[i].points)
	}
	for _, d := range ds {
		cv.legend.add(d.label, d.thumbs...)
	}
	if greyLine != nil {
		cv.legend.add(fmt.Sprintf("%s, in grey without intervals (the landscape figure ranks every config)", texttable.Plural(others, "other config")), greyLine)
	}
	return nil
}

// curveXYs are a curve's measured points and their intervals' ends where
// both are known.
func (f Figure) curveXYs(c Curve) (xys, lo, hi plotter.XYs) {
	for _, pt := range c.Points {
		v, l, h := f.value(pt)
		if !finite(v) || !(v > 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: float64(pt.Bytes), Y: v})
		if finite(l) && finite(h) && l > 0 && h > 0 {
			lo = append(lo, plotter.XY{X: float64(pt.Bytes), Y: l})
			hi = append(hi, plotter.XY{X: float64(pt.Bytes), Y: h})
		}
	}
	return xys, lo, hi
}

// highlight styles curve i in its colour: its interval is shaded now
// (under every line), its line and points are returned to be drawn later.
func (f Figure) highlight(cv *canvas, i int, xys, lo, hi plotter.XYs) (drawnCurve, error) {
	c := f.Curves[i]
	col, dash := curveStyle(i, f.Curves)
	d := drawnCurve{label: c.LegendText(f.StudyInLegend)}
	if len(lo) > 0 && !c.Exploration() {
		ring := slices.Concat(lo, hi)
		slices.Reverse(ring[len(lo):])
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return d, err
		}
		poly.Color = withAlpha(col, 0x38)
		poly.LineStyle.Width = 0
		if len(lo) == 1 { // one size: the band is an error bar
			poly.LineStyle = draw.LineStyle{Color: withAlpha(col, 0x90), Width: vg.Points(4)}
		}
		cv.p.Add(poly)
		d.thumbs = append(d.thumbs, poly)
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return d, err
	}
	line.Color, line.Width, line.Dashes = col, vg.Points(2), dash
	pts, err := plotter.NewScatter(xys)
	if err != nil {
		return d, err
	}
	pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
	if c.Exploration() {
		line.Width = vg.Points(1.2)
		pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
	}
	d.line, d.points, d.thumbs = line, pts, append(d.thumbs, line, pts)
	return d, nil
}

func (f Figure) caption(timeAxis bool) []string {
	unit := ", as bus bandwidth (nccl-tests' busbw; higher is faster)."
	if timeAxis {
		unit = " (µs; lower is faster)."
	}
	caption := []string{"Lines: per size, the median over launches of each launch's median time" + unit}
	caption = append(caption, "Shading around a line: the 95% confidence interval of that median, or the min–max of the launches when there are fewer than 6 (each legend entry says which).")
	if slices.ContainsFunc(f.Curves, Curve.Exploration) {
		caption = append(caption, "Thin dotted lines with rings: exploration launches, drawn for context only; the verdict and the tables use the confirmation launches.")
	}
	return caption
}

// latencyFloor is the smallest median time of the non-exploration curves
// and its size, when they reach 64K or less, where time stops falling.
func (f Figure) latencyFloor() (float64, int64, bool) {
	best, at := math.Inf(1), int64(0)
	small := false
	for _, c := range f.Curves {
		if c.Exploration() {
			continue
		}
		for _, pt := range c.Points {
			if pt.Bytes <= 64*nccl.KiB {
				small = true
			}
			if finite(pt.TimeUS) && pt.TimeUS > 0 && pt.TimeUS < best {
				best, at = pt.TimeUS, pt.Bytes
			}
		}
	}
	return best, at, small && finite(best)
}

// sizeText is a size as nccl-tests writes it, with "B" on bytes below 1K
// so "512" does not read as a count.
func sizeText(b int64) string {
	if b < nccl.KiB {
		return nccl.FormatSize(b) + " B"
	}
	return nccl.FormatSize(b)
}
