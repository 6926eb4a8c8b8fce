package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/workload"
)

// WorkloadFigure is what a real process called: per collective the share
// of the calls (or of the time) at each power of two, over the
// communicators the proposal covers, with the sizes measured shaded.
type WorkloadFigure struct {
	Summary *workload.Summary
}

// NewWorkloadFigure draws s.
func NewWorkloadFigure(s *workload.Summary) WorkloadFigure { return WorkloadFigure{Summary: s} }

// Write renders the figure as PNG or SVG.
func (f WorkloadFigure) Write(w io.Writer, format string) error { return f.WriteAt(w, format, PNGDPI) }

// WriteAt renders it as PNG at dpi dots per inch, or as SVG.
func (f WorkloadFigure) WriteAt(w io.Writer, format string, dpi int) error {
	return writeSheet(f.sheet, w, format, dpi)
}

type workloadBar struct {
	size  int64
	share float64
}

// bars pools the covered communicators' histograms per op, as shares,
// and counts each op's calls.
func (f WorkloadFigure) bars() (map[nccl.Op][]workloadBar, []nccl.Op, map[nccl.Op]int64) {
	s := f.Summary
	p := s.Proposal
	weight := map[nccl.Op]map[int64]float64{}
	calls := map[nccl.Op]int64{}
	var total float64
	for _, c := range s.Communicators {
		if !slices.Contains(p.Communicators, c.ID) {
			continue
		}
		for _, o := range c.Ops {
			if weight[o.Op] == nil {
				weight[o.Op] = map[int64]float64{}
			}
			calls[o.Op] += o.Calls
			for _, b := range o.Histogram {
				w := float64(b.Calls)
				if p.By == "time" {
					w = b.TimeUS
				}
				weight[o.Op][b.Size] += w
				total += w
			}
		}
	}
	out := map[nccl.Op][]workloadBar{}
	var ops []nccl.Op
	for _, op := range nccl.Ops {
		if weight[op] == nil {
			continue
		}
		ops = append(ops, op)
		for size, w := range weight[op] {
			out[op] = append(out[op], workloadBar{size: size, share: w / total})
		}
		slices.SortFunc(out[op], func(a, b workloadBar) int { return cmp.Compare(a.size, b.size) })
	}
	return out, ops, calls
}

func (f WorkloadFigure) sheet() (*sheet, error) {
	s := f.Summary
	p := s.Proposal
	bars, ops, calls := f.bars()
	if len(ops) == 0 {
		return nil, fmt.Errorf("nothing to plot: the proposal covers no call")
	}
	cv := newCanvas()
	colour := map[nccl.Op]int{}
	for i, op := range ops {
		colour[op] = i % len(palette)
	}
	// The measured powers of two first, under the bars.
	for _, pt := range p.Parts {
		lo, hi := float64(pt.Part.Band.Min)/math.Sqrt2, float64(pt.Part.Band.Max)*math.Sqrt2
		cv.mark(fmt.Sprintf("measured at %s: %s, %.0f %% of the %s", pt.Band, pt.Spec, 100*pt.Share, p.By),
			&xSpan{X0: lo, X1: hi, Color: withAlpha(palette[colour[pt.Op]], 0x30)})
	}
	// Bars side by side within each power of two, one colour per op.
	xs, ys := emptyRange(), 0.0
	width := 0.8 / float64(len(ops)) // in powers of two
	for i, op := range ops {
		var thumb *yBox
		for _, b := range bars[op] {
			x0 := float64(b.size) * math.Exp2(-0.4+float64(i)*width)
			box := &yBox{X0: x0, X1: x0 * math.Exp2(width), Y0: 0, Y1: 100 * b.share, Color: palette[colour[op]]}
			cv.p.Add(box)
			thumb = box
			xs.add(float64(b.size))
			ys = math.Max(ys, 100*b.share)
		}
		if thumb != nil {
			cv.legend.add(fmt.Sprintf("%s (%s)", op, texttable.Plural(int(calls[op]), "call")), thumb)
		}
	}
	// Room for the bars and the shading around the outermost sizes.
	cv.sizeAxis(xs.min/math.Sqrt2, xs.max*math.Sqrt2)
	cv.p.Y.Min, cv.p.Y.Max = 0, ys*1.08
	by := "calls"
	if p.By == "time" {
		by = "execution time"
	}
	sub := []string{fmt.Sprintf("%s of %d ranks, %s; the proposal holds every call, as logged",
		texttable.Plural(len(p.Communicators), "communicator"), p.NRanks, texttable.Plural(int(s.CallsOf(p.Communicators)), "call"))}
	caption := []string{
		fmt.Sprintf("Bars: per collective, the share of the %s at each power of two (nccl-tests' sizes: a call counts at the power of two nearest its size), each call once however many ranks logged it.", by),
		"Shaded: the powers of two the search measures the calls at, in their collective's colour.",
	}
	title := "What the process called, by message size"
	if s.GraphCaptured {
		title += " — CUDA-graph captures: counts are not replays"
		caption = append(caption, "CUDA graphs: "+workload.GraphAdvice+".")
	}
	if len(p.Left) > 0 {
		caption = append(caption, fmt.Sprintf("Not drawn: %s of other rank counts.", texttable.Plural(len(p.Left), "communicator")))
	}
	return &sheet{width: figureWidth, plotHeight: plotHeight, title: title, subtitle: sub, plot: cv.p,
		yLabel: "share of the " + by + " (%)", xLabel: "message size (log scale)", legend: cv.legend, caption: caption}, nil
}
