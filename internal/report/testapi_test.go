package report

import (
	"io"

	"gonum.org/v1/plot/vg"
)

// What only tests ask of a figure: nccltune writes figures with Write or
// WriteAt.

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
