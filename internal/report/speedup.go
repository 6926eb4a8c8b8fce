package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
)

// SpeedupFigure is benchstat's table as a picture: per message size, the
// speedup of the confirmed config over NCCL's defaults with its interval,
// "~" where not significant, and the band's speedup across the band.
type SpeedupFigure struct {
	Subject    string
	Simulated  string
	Comparison *Comparison
	// BandMin and BandMax are the searched band (0 when none was).
	BandMin, BandMax int64
	// MinEffect is the smallest gain the study acts on (0.03).
	MinEffect float64
	// Op, when set, names the collective on the value axis.
	Op nccl.Op
}

// Speedup colours: a significant gain, a significant loss, no difference.
var (
	gainColor = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
	lossColor = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	sameColor = color.RGBA{R: 0x77, G: 0x77, B: 0x77, A: 0xff}
)

// SpeedupFigure builds the study's speedup figure from its comparison.
func (s *Study) SpeedupFigure() (SpeedupFigure, error) { return s.compared().speedupFigure() }

func (v compared) speedupFigure() (SpeedupFigure, error) {
	s, c := v.s, v.c
	if c == nil {
		return SpeedupFigure{}, fmt.Errorf("study %s has no confirmed config to compare with NCCL's defaults: no speedup to draw (nccltune plot %s draws its curves)", s.Name(), s.Name())
	}
	f := SpeedupFigure{Subject: s.Name() + ": " + string(s.Study.Op()), Comparison: c, MinEffect: stored.StatsOf(s.Study).MinEffect,
		Simulated: s.simulatedLine()}
	f.BandMin, f.BandMax = searchedBand(s.Study)
	return f, nil
}

// WriteAt renders the figure as PNG at dpi dots per inch, or as SVG.
func (f SpeedupFigure) WriteAt(w io.Writer, format string, dpi int) error {
	return writeSheet(f.sheet, w, format, dpi)
}

// launchesText is "6 + 6 interleaved confirmation launches" or "9 and 3
// launches (no confirmation was run)".
func (c *Comparison) launchesText() string {
	if c.Launches == PhaseConfirmation {
		return fmt.Sprintf("%d + %d interleaved confirmation launches", c.Baseline.Launches, c.Candidate.Launches)
	}
	return fmt.Sprintf("%d and %d launches, all pooled (no confirmation was run)", c.Baseline.Launches, c.Candidate.Launches)
}

func (f SpeedupFigure) sheet() (*sheet, error) {
	c := f.Comparison
	if c == nil || len(c.Rows) == 0 {
		return nil, fmt.Errorf("nothing to plot: the comparison has no size measured by both configs")
	}
	cv := newCanvas()
	xLabel := "message size (log scale)"
	yLabel := "speedup over NCCL defaults (log scale)"
	f.axes(cv)
	f.drawReferences(cv)
	marks, err := f.drawRows(cv)
	if err != nil {
		return nil, err
	}
	sub := []string{fmt.Sprintf("%s against NCCL defaults, %s", c.Candidate.Label, c.launchesText())}
	caption := []string{
		"Dots: per size, NCCL defaults' median time ÷ the config's (above ×1 the config is faster); the same medians as the per-size tables.",
		fmt.Sprintf("Bars: the %.0f%% rank interval of that ratio over the launches (the band speedup's method, per size); none where the launches are too few for one.", 100*c.Confidence),
	}
	if marks > 0 {
		caption = append(caption, fmt.Sprintf("“~”: no significant difference at that size (Mann–Whitney p ≥ %g), as benchstat prints it.", c.Alpha))
	}
	return &sheet{width: figureWidth, plotHeight: plotHeight, title: f.Subject + " speedup over NCCL defaults by message size",
		subtitle: sub, simulated: f.Simulated, plot: cv.p, yLabel: opLabel(f.Op, yLabel), xLabel: xLabel, legend: cv.legend, caption: caption}, nil
}

// axes puts sizes on x and the speedups, with ×1 and the minimum effect
// in view, on a log y axis.
func (f SpeedupFigure) axes(cv *canvas) {
	c, p := f.Comparison, cv.p
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{Prefix: "×"}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ys := positiveRange{min: 1, max: 1}
	for _, r := range c.Rows {
		xmin, xmax = math.Min(xmin, float64(r.Bytes)), math.Max(xmax, float64(r.Bytes))
		ys.add(r.Speedup, r.SpeedupLo, r.SpeedupHi)
	}
	if c.Band != nil {
		ys.add(c.Band.Speedup, c.Band.Lo, c.Band.Hi)
	}
	if f.MinEffect > 0 {
		ys.add(1 + f.MinEffect)
	}
	cv.sizeAxis(xmin, xmax)
	pad := math.Pow(ys.max/ys.min, 0.08) * 1.02
	p.Y.Min, p.Y.Max = ys.min/pad, ys.max*pad*1.05 // room above for the "~"
}

// drawReferences draws the searched band, the guard sizes, ×1, the
// minimum effect and the band's speedup.
func (f SpeedupFigure) drawReferences(cv *canvas) {
	c := f.Comparison
	if f.BandMax > 0 {
		cv.shadeBand(f.BandMin, f.BandMax, "searched band "+bandText(f.BandMin, f.BandMax))
	}
	var guards []int64
	for _, r := range c.Rows {
		if r.Guard {
			guards = append(guards, r.Bytes)
		}
	}
	cv.markGuards(guards)
	cv.mark("×1: no change", &hRule{Y: 1, Style: draw.LineStyle{Color: color.Gray{Y: 0x30}, Width: vg.Points(1)}})
	if f.MinEffect > 0 {
		me := &hRule{Y: 1 + f.MinEffect, Style: draw.LineStyle{Color: color.Gray{Y: 0x88}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}}
		cv.mark(fmt.Sprintf("×%.2f: the minimum effect the study acts on (%.0f %%)", 1+f.MinEffect, 100*f.MinEffect), me)
	}
	if b := c.Band; b != nil && f.BandMax > 0 {
		lo, hi := float64(f.BandMin), float64(f.BandMax)
		line := &hRule{Y: b.Speedup, X0: lo, X1: hi, Style: draw.LineStyle{Color: palette[0], Width: vg.Points(2)}}
		label := "band score speedup " + stored.SpeedupText(b.Speedup, [2]float64{b.Lo, b.Hi})
		if finite(b.Lo) && finite(b.Hi) {
			box := &yBox{X0: lo, X1: hi, Y0: b.Lo, Y1: b.Hi, Color: withAlpha(palette[0], 0x30)}
			cv.p.Add(box)
			cv.legend.add(label+" ("+b.CILevel.Label()+", shaded)", box, line)
		} else {
			cv.legend.add(label+" (no interval: too few launches)", line)
		}
		cv.p.Add(line)
	}
}

// drawRows draws each size's speedup with its interval, one scatter per
// kind of row, and a "~" over each size without a significant difference.
// It returns how many "~" it drew.
func (f SpeedupFigure) drawRows(cv *canvas) (int, error) {
	kinds := []struct {
		label string
		col   color.RGBA
		shape draw.GlyphDrawer
		match func(ComparisonRow) bool
	}{
		{"faster at that size (significant)", gainColor, draw.CircleGlyph{}, func(r ComparisonRow) bool { return r.Significant && r.Speedup > 1 }},
		{"slower at that size (significant)", lossColor, draw.TriangleGlyph{}, func(r ComparisonRow) bool { return r.Significant && r.Speedup <= 1 }},
		{"~ no significant difference at that size", sameColor, draw.RingGlyph{}, func(r ComparisonRow) bool { return !r.Significant }},
	}
	var marks annotations
	tilde := textStyle(13, sameColor)
	tilde.XAlign, tilde.YAlign = draw.XCenter, draw.YBottom
	for _, k := range kinds {
		var xys plotter.XYs
		wh := &whiskers{Style: draw.LineStyle{Color: k.col, Width: vg.Points(1.6)}, Cap: vg.Points(7)}
		for _, r := range f.Comparison.Rows {
			if !k.match(r) || !finite(r.Speedup) {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(r.Bytes), Y: r.Speedup})
			top := r.Speedup
			if finite(r.SpeedupLo) && finite(r.SpeedupHi) {
				wh.Segs = append(wh.Segs, [4]float64{float64(r.Bytes), r.SpeedupLo, float64(r.Bytes), r.SpeedupHi})
				top = r.SpeedupHi
			}
			if !r.Significant {
				marks = append(marks, annotation{X: float64(r.Bytes), Y: top, DY: vg.Points(4), Text: "~", Style: tilde})
			}
		}
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return 0, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: k.col, Radius: vg.Points(4), Shape: k.shape}
		cv.p.Add(wh, sc)
		cv.legend.add(k.label, wh, sc)
	}
	cv.p.Add(marks)
	return len(marks), nil
}
