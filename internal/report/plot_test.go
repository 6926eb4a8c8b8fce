package report

import (
	"bytes"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/model"
)

// figureOf is what `nccltune plot STUDY` draws: the baseline and the
// confirmed config.
func figureOf(t *testing.T, s *Study) Figure {
	t.Helper()
	f, err := s.DecisionFigure(MetricBusBW, false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestWritePNG(t *testing.T) {
	fig := figureOf(t, recommendStudy())
	var buf bytes.Buffer
	if err := fig.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	w, h := fig.Size()
	wantW, wantH := int(math.Round(float64(w/vg.Inch)*PNGDPI)), int(math.Round(float64(h/vg.Inch)*PNGDPI))
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH || b.Dx() != 1200 {
		t.Errorf("PNG is %dx%d, want %dx%d (1200 wide)", b.Dx(), b.Dy(), wantW, wantH)
	}

	// Not blank: a good share of ink, the shaded band, and both curves in
	// their colours, the fixed config above the defaults (more bandwidth).
	b := img.Bounds()
	var ink, band int
	var grey, blue []int // y of each pixel of the curve colours
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				ink++
			}
			switch {
			case near(c, bandColor, 2):
				band++
			case near(c, defaultsColor, 6):
				grey = append(grey, y)
			case near(c, palette[0], 6):
				blue = append(blue, y)
			}
		}
	}
	total := b.Dx() * b.Dy()
	if ink < total/50 {
		t.Errorf("only %d of %d pixels are not white: the plot looks blank", ink, total)
	}
	if band < total/20 {
		t.Errorf("%d pixels of the band's shading, want the searched band shaded", band)
	}
	if len(grey) < 300 || len(blue) < 300 {
		t.Fatalf("%d pixels of the defaults' grey and %d of the recommendation's blue: curves missing", len(grey), len(blue))
	}
	if mean(blue) >= mean(grey) {
		t.Errorf("the recommendation's curve (mean y %.0f) is not above the defaults' (mean y %.0f): bandwidth drawn upside down?", mean(blue), mean(grey))
	}
}

func near(c color.RGBA, want color.RGBA, tol int) bool {
	d := func(a, b uint8) bool { return int(a)-int(b) <= tol && int(b)-int(a) <= tol }
	return d(c.R, want.R) && d(c.G, want.G) && d(c.B, want.B)
}

func mean(ys []int) float64 {
	s := 0
	for _, y := range ys {
		s += y
	}
	return float64(s) / float64(len(ys))
}

// svgTexts parses an SVG document and returns every text it draws,
// trimmed, without where.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	var texts []string
	for _, x := range svgTextsAt(t, svg) {
		texts = append(texts, strings.TrimSpace(x.text))
	}
	return texts
}

func TestWriteSVG(t *testing.T) {
	fig := figureOf(t, recommendStudy())
	var buf bytes.Buffer
	if err := fig.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"s3-512K-4M: all_reduce bus bandwidth by message size",
		"SIMULATED fabric (spark4): not a measurement of real hardware",
		"NCCL defaults  (6 confirmation launches, 95% CI)",
		"NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128 — recommended  (6 confirmation launches, 95% CI)",
		"searched band 512K–4M (scored)",
		"guard size 8M (checked for regressions, not scored)",
		"bus bandwidth (GB/s)",
		"512K", "1M", "2M", "4M", "8M",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("the SVG does not draw %q; it draws:\n%s", want, all)
		}
	}
	if strings.Contains(strings.ToLower(all), "trial") {
		t.Errorf("the plot names trials; legends name configs:\n%s", all)
	}
	if !strings.Contains(buf.String(), "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;") {
		t.Error("the SVG's text has no fallback for machines without Liberation Sans")
	}
}

func TestFigureSweepAndMixedStudies(t *testing.T) {
	sw := sweepStudy()
	c, err := sw.TrialCurve(sw.Trials[0])
	if err != nil {
		t.Fatal(err)
	}
	rec := recommendStudy()
	base, err := rec.TrialCurve(rec.Baseline())
	if err != nil {
		t.Fatal(err)
	}
	fig := NewFigure([]Curve{c, base}, sw, rec)
	if fig.Simulated != "SIMULATED fabric (spark4) for s3-512K-4M: not a measurement of real hardware" || !fig.StudyInLegend || len(fig.Bands) != 1 || len(fig.Guards) != 1 {
		t.Errorf("mixed figure %+v: want SIMULATED (one study is), study names in the legend, the search's band and guard only", fig)
	}
	if !strings.HasPrefix(fig.Subject, "s5-sweep, s3-512K-4M: ") {
		t.Errorf("title %q", fig.Subject)
	}
	var buf bytes.Buffer
	if err := fig.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	for _, want := range []string{"s5-sweep: NCCL defaults  (3 launches, min–max)", "s3-512K-4M: NCCL defaults  (7 launches, 95% CI)", "32K", "256M"} {
		if !slices.Contains(texts, want) {
			t.Errorf("the SVG does not draw %q; it draws %q", want, texts)
		}
	}
	// A real sweep alone is not labelled simulated.
	if f := NewFigure([]Curve{c}, sw); f.Simulated != "" {
		t.Errorf("a real study's figure says %q", f.Simulated)
	}
}

func TestLog2Ticks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi   float64
		labelled []string
		ticks    int
	}{
		{32 * 1024 / 1.4, 256 * (1 << 20) * 1.4, []string{"32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M", "32M", "64M", "128M", "256M"}, 14},
		{512 * 1024 / 1.4, 8 * (1 << 20) * 1.4, []string{"512K", "1M", "2M", "4M", "8M"}, 5},
		{8 / 1.4, 16 * float64(1<<30) * 1.4, nil, 32},
	} {
		ticks := log2Ticks{}.Ticks(tc.lo, tc.hi)
		var labels []string
		for _, tk := range ticks {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if e := math.Log2(tk.Value); e != math.Trunc(e) {
				t.Errorf("tick at %v is not a power of two", tk.Value)
			}
		}
		if len(ticks) != tc.ticks {
			t.Errorf("[%v, %v]: %d ticks, want %d", tc.lo, tc.hi, len(ticks), tc.ticks)
		}
		if tc.labelled != nil && !slices.Equal(labels, tc.labelled) {
			t.Errorf("[%v, %v]: labels %v, want %v", tc.lo, tc.hi, labels, tc.labelled)
		}
		if tc.labelled == nil && (len(labels) > 16 || len(labels) < 8) {
			t.Errorf("[%v, %v]: %d labels, want a readable 8 to 16", tc.lo, tc.hi, len(labels))
		}
	}
}

func TestTrialCurve(t *testing.T) {
	sw := sweepStudy()
	c, err := sw.TrialCurve(sw.Trials[0])
	if err != nil {
		t.Fatal(err)
	}
	if !c.MinMax || c.Launches != 3 || len(c.Points) != 14 || c.Label != "NCCL defaults" {
		t.Fatalf("sweep curve: min-max %v, %d launches, %d points, label %q", c.MinMax, c.Launches, len(c.Points), c.Label)
	}
	factor := sw.BusBWFactor()
	if math.Abs(factor-1) > 0.01 {
		t.Errorf("busbw factor on 2 ranks %v, want 1", factor)
	}
	for i, p := range c.Points {
		// The interval is the min–max of the per-launch medians.
		var meds []float64
		for _, l := range sw.Launches {
			meds = append(meds, model.Median(l.Sizes[i].Samples))
		}
		if p.TimeLoUS != slices.Min(meds) || p.TimeHiUS != slices.Max(meds) || p.TimeUS != model.Median(meds) {
			t.Errorf("%s: time %v [%v, %v], want %v [%v, %v]", nccl.FormatSize(p.Bytes), p.TimeUS, p.TimeLoUS, p.TimeHiUS, model.Median(meds), slices.Min(meds), slices.Max(meds))
		}
		if want := factor * float64(p.Bytes) / p.TimeUS / 1e3; math.Abs(p.BusBW-want) > 1e-9 {
			t.Errorf("%s: busbw %v, want %v", nccl.FormatSize(p.Bytes), p.BusBW, want)
		}
		if !(p.BusBWLo <= p.BusBW && p.BusBW <= p.BusBWHi) {
			t.Errorf("%s: busbw %v outside [%v, %v]", nccl.FormatSize(p.Bytes), p.BusBW, p.BusBWLo, p.BusBWHi)
		}
	}

	rec := recommendStudy()
	cand, err := rec.TrialCurve(rec.Candidate())
	if err != nil {
		t.Fatal(err)
	}
	if cand.MinMax || cand.Launches != 8 || cand.Note != "recommended" {
		t.Errorf("candidate curve: min-max %v, %d launches (explore, refine, 6 confirm), note %q", cand.MinMax, cand.Launches, cand.Note)
	}
	base, _ := rec.TrialCurve(rec.Baseline())
	if base.Launches != 7 {
		t.Errorf("baseline curve from %d launches, want 7 (the warm-up and explain launches are not measurements)", base.Launches)
	}
	if _, err := rec.TrialCurve(rec.TrialByNumber(2)); err == nil || !strings.Contains(err.Error(), "s3-512K-4M/2") || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("failed trial: %v, want an error naming the trial and why", err)
	}
	keep := keepStudy()
	if c, _ := keep.TrialCurve(keep.Candidate()); c.Note != "confirmed, not recommended" {
		t.Errorf("challenger of a keep-defaults study noted %q", c.Note)
	}
}

func TestFormatOf(t *testing.T) {
	for _, tc := range []struct{ path, want, err string }{
		{"a.png", FormatPNG, ""},
		{"dir/b.SVG", FormatSVG, ""},
		{"c.pdf", "", "cannot write a .pdf plot"},
		{"noext", "", "has no extension"},
	} {
		got, err := FormatOf(tc.path)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, %q", tc.path, got, err, tc.want, tc.err)
		}
	}
}

func TestDrawNothing(t *testing.T) {
	if err := (Figure{}).WritePNG(io.Discard); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
		t.Errorf("empty figure: %v", err)
	}
}

// TestFigureTitleNamesTheOps: a figure's title names the op of every
// study drawn (an all-gather import is not titled "all_reduce").
func TestFigureTitleNamesTheOps(t *testing.T) {
	sw := sweepStudy()
	st := *sw.Study
	st.Collective = "all_gather"
	ag := *sw
	ag.Study = &st
	c, err := ag.TrialCurve(ag.Trials[0])
	if err != nil {
		t.Fatal(err)
	}
	if fig := NewFigure([]Curve{c}, &ag); !strings.HasSuffix(fig.Subject, ": all_gather") {
		t.Errorf("all-gather study titled %q", fig.Subject)
	}
	rec := recommendStudy()
	if fig := NewFigure([]Curve{c}, &ag, rec); !strings.HasSuffix(fig.Subject, ": all_gather, all_reduce") {
		t.Errorf("two ops titled %q", fig.Subject)
	}
}
