package report

import (
	"io"

	"gonum.org/v1/plot/vg"
)

// What only tests ask of a figure: nccltune writes figures with WriteAt
// (and a workload's with Write).

// Write renders the figure as PNG (PNGDPI) or SVG.
func (f Figure) Write(w io.Writer, format string) error { return f.WriteAt(w, format, PNGDPI) }

// Write renders the figure as PNG (PNGDPI) or SVG.
func (f SpeedupFigure) Write(w io.Writer, format string) error { return f.WriteAt(w, format, PNGDPI) }

// Write renders the landscape as PNG (PNGDPI) or SVG.
func (l Landscape) Write(w io.Writer, format string) error { return l.WriteAt(w, format, PNGDPI) }

// Write renders the convergence figure as PNG (PNGDPI) or SVG.
func (c Convergence) Write(w io.Writer, format string) error { return c.WriteAt(w, format, PNGDPI) }

// Write renders the panels as PNG (PNGDPI) or SVG.
func (p Panels) Write(w io.Writer, format string) error { return p.WriteAt(w, format, PNGDPI) }

// Size returns the figure's width and height: the header, the plot, one
// legend row per entry and the caption.
func (f Figure) Size() (w, h vg.Length) {
	s, err := f.sheet()
	if err != nil {
		return figureWidth, plotHeight
	}
	return s.size()
}

// WritePNG renders the figure as a PNG image (PNGDPI).
func (f Figure) WritePNG(w io.Writer) error { return f.Write(w, FormatPNG) }

// WriteSVG renders the figure as an SVG document. Text names the
// Liberation fonts the layout was measured with, falling back to their
// metric-compatible Arial and Helvetica, so it lines up where Liberation is
// not installed.
func (f Figure) WriteSVG(w io.Writer) error { return f.Write(w, FormatSVG) }
