package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestDecisionCurvesAreTheTables holds the study figure to the tables:
// the same launches (the confirmation's, however many each arm had) and
// the same medians and intervals at every size the tables list.
func TestDecisionCurvesAreTheTables(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          *Study
		base, cand int
	}{
		{"6+6", recommendStudy(), 6, 6},
		{"sequential 4+7", sequentialStudy(), 4, 7},
		{"keep defaults 5+5", keepStudy(), 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmp := tc.s.Compare()
			curves, err := tc.s.DecisionCurves(false)
			if err != nil {
				t.Fatal(err)
			}
			if len(curves) != 2 {
				t.Fatalf("%d curves, want NCCL defaults and the confirmed config", len(curves))
			}
			for i, arm := range []struct {
				c    Curve
				a    Arm
				n    int
				cell func(ComparisonRow) Point
			}{
				{curves[0], cmp.Baseline, tc.base, func(r ComparisonRow) Point {
					return Point{TimeUS: r.BaselineUS, TimeLoUS: r.BaselineLo, TimeHiUS: r.BaselineHi, Launches: r.BaselineLaunches}
				}},
				{curves[1], cmp.Candidate, tc.cand, func(r ComparisonRow) Point {
					return Point{TimeUS: r.CandidateUS, TimeLoUS: r.CandidateLo, TimeHiUS: r.CandidateHi, Launches: r.CandidateLaunches}
				}},
			} {
				c := arm.c
				if c.Launches != arm.n || arm.a.Launches != arm.n || c.Phase != PhaseConfirmation || c.Label != arm.a.Label {
					t.Errorf("curve %d: %s, %d %s launches; table: %s, %d launches; want %d confirmation launches each",
						i, c.Label, c.Launches, c.Phase, arm.a.Label, arm.a.Launches, arm.n)
				}
				if want := fmt.Sprintf("(%d confirmation launches, ", arm.n); !strings.Contains(c.LegendText(false), want) {
					t.Errorf("legend %q does not say %q", c.LegendText(false), want)
				}
				for _, r := range cmp.Rows {
					cell := arm.cell(r)
					i := slices.IndexFunc(c.Points, func(p Point) bool { return p.Bytes == r.Bytes })
					if i < 0 {
						t.Errorf("%s: the curve has no point at %s, the table has", c.Label, nccl.FormatSize(r.Bytes))
						continue
					}
					p := c.Points[i]
					if p.TimeUS != cell.TimeUS || p.Launches != cell.Launches {
						t.Errorf("%s at %s: plotted %v µs over %d launches, table %v µs over %d", c.Label, nccl.FormatSize(r.Bytes), p.TimeUS, p.Launches, cell.TimeUS, cell.Launches)
					}
					if !math.IsNaN(cell.TimeLoUS) && (p.TimeLoUS != cell.TimeLoUS || p.TimeHiUS != cell.TimeHiUS) {
						t.Errorf("%s at %s: plotted interval [%v, %v], table [%v, %v]", c.Label, nccl.FormatSize(r.Bytes), p.TimeLoUS, p.TimeHiUS, cell.TimeLoUS, cell.TimeHiUS)
					}
					if want := busBW(cmp.BusBWFactor, r.Bytes, cell.TimeUS); math.Abs(p.BusBW-want) > 1e-12*want {
						t.Errorf("%s at %s: plotted %v GB/s, the table's busbw %v", c.Label, nccl.FormatSize(r.Bytes), p.BusBW, want)
					}
				}
			}
			// The subtitle carries the band speedup the table's last row shows.
			fig, err := tc.s.DecisionFigure(MetricBusBW, false)
			if err != nil {
				t.Fatal(err)
			}
			sub := strings.Join(fig.Subtitle, "\n")
			want := stored.SpeedupText(cmp.Band.Speedup, [2]float64{cmp.Band.Lo, cmp.Band.Hi})
			if !strings.Contains(sub, want) || !strings.Contains(sub, fmt.Sprintf("%d + %d interleaved confirmation launches", tc.base, tc.cand)) {
				t.Errorf("subtitle %q, want the band speedup %s and the launch counts", sub, want)
			}
			if row := cmp.Table(MetricTime).Rows[len(cmp.Rows)]; !row.Summary || !strings.Contains(row.Change, want) {
				t.Errorf("the table's band row %q does not show %s", row.Change, want)
			}
		})
	}
}

// TestExplorationIsMarked: exploration launches are drawn only when asked,
// as their own curves, named as such.
func TestExplorationIsMarked(t *testing.T) {
	s := recommendStudy()
	plain, _ := s.DecisionCurves(false)
	with, err := s.DecisionCurves(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 2 || len(with) != 4 {
		t.Fatalf("%d curves without exploration, %d with: want 2 and 4", len(plain), len(with))
	}
	for _, c := range with[2:] {
		if !c.Exploration() || !strings.Contains(c.LegendText(false), "exploration launch") || !strings.Contains(c.LegendText(false), "not used for the verdict") {
			t.Errorf("exploration curve %q (phase %s) is not marked as such", c.LegendText(false), c.Phase)
		}
	}
	// NCCL defaults explored once (the warm-up is not scored), the fix
	// explored and refined once each.
	if with[2].Launches != 1 || with[3].Launches != 2 {
		t.Errorf("exploration launches %d and %d, want 1 and 2", with[2].Launches, with[3].Launches)
	}
	f := NewFigure(with, s)
	sh, err := f.sheet()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(sh.caption, " "), "exploration launches, drawn for context only") {
		t.Errorf("caption %q does not explain the exploration curves", sh.caption)
	}
}

// svgText is one text an SVG draws, at its baseline (points from the
// bottom of the picture).
type svgText struct {
	text     string
	x, y     float64
	fontSize float64
}

var fontSizeRE = regexp.MustCompile(`font-size:([0-9.]+)px`)

func svgTextsAt(t *testing.T, svg []byte) []svgText {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []svgText
	var cur *svgText
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "text" {
				continue
			}
			cur = &svgText{}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "x":
					cur.x, _ = strconv.ParseFloat(a.Value, 64)
				case "y":
					cur.y, _ = strconv.ParseFloat(a.Value, 64)
					cur.y = -cur.y // drawn under scale(1, -1)
				case "style":
					if m := fontSizeRE.FindStringSubmatch(a.Value); m != nil {
						cur.fontSize, _ = strconv.ParseFloat(m[1], 64)
					}
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
	return out
}

// svgBandPath is the x extent of the widest path filled with the band's
// colour.
func svgBandPath(t *testing.T, svg []byte) (x0, x1 float64) {
	t.Helper()
	hex := fmt.Sprintf("fill:#%02X%02X%02X", bandColor.R, bandColor.G, bandColor.B)
	re := regexp.MustCompile(`<path d="([^"]*)" style="` + hex)
	num := regexp.MustCompile(`[ML]([0-9.]+),`)
	best := -1.0
	for _, m := range re.FindAllSubmatch(svg, -1) {
		var xs []float64
		for _, n := range num.FindAllSubmatch(m[1], -1) {
			x, _ := strconv.ParseFloat(string(n[1]), 64)
			xs = append(xs, x)
		}
		if len(xs) > 0 && slices.Max(xs)-slices.Min(xs) > best {
			best, x0, x1 = slices.Max(xs)-slices.Min(xs), slices.Min(xs), slices.Max(xs)
		}
	}
	if best < 0 {
		t.Fatal("the SVG has no path in the band's colour")
	}
	return x0, x1
}

// TestBandDrawnWhereItIs: the searched band's shading starts at its first
// size and ends at its last, on the axis as drawn (the tick labels of
// those sizes are centred on the shading's edges), in the SVG and in the
// PNG, for the busbw, time and speedup figures.
func TestBandDrawnWhereItIs(t *testing.T) {
	s := recommendStudy()
	bw, _ := s.DecisionFigure(MetricBusBW, false)
	tm, _ := s.DecisionFigure(MetricTime, false)
	sp, err := s.SpeedupFigure()
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]Drawing{"busbw": bw, "time": tm, "speedup": sp} {
		var buf bytes.Buffer
		if err := d.WriteAt(&buf, FormatSVG, PNGDPI); err != nil {
			t.Fatal(err)
		}
		x0, x1 := svgBandPath(t, buf.Bytes())
		centre := map[string]float64{}
		tick := textStyle(10, color.Black)
		for _, tx := range svgTextsAt(t, buf.Bytes()) {
			if tx.fontSize == 10 {
				centre[tx.text] = tx.x + float64(tick.Width(tx.text)/vg.Points(1))/2
			}
		}
		for size, x := range map[string]float64{"512K": x0, "4M": x1} {
			c, ok := centre[size]
			if !ok {
				t.Errorf("%s: no tick label %s", name, size)
				continue
			}
			if math.Abs(c-x) > 0.5 {
				t.Errorf("%s: the band's edge is at x=%.2f pt, the %s tick at %.2f pt", name, x, size, c)
			}
		}
		// 8M, the guard, is outside the shading by a whole power of two.
		if c := centre["8M"]; c-x1 < (x1-x0)/3/2 {
			t.Errorf("%s: the 8M tick at %.2f is too close to the band's end %.2f", name, c, x1)
		}
	}

	// The PNG: on a row near the top of the data area, the band's colour
	// runs from x(512K) to x(4M), within a pixel or two, and the guard's
	// grey line is at x(8M).
	sh, err := bw.sheet()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bw.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w, h := sh.size()
	_, _, data := sh.areas(draw.New(vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))))
	trX, _ := sh.plot.Transforms(&data)
	px := func(l vg.Length) float64 { return float64(l/vg.Inch) * PNGDPI }
	row := int(math.Round(px(h - data.Max.Y + 4)))
	var band []int
	for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
		if near(color.RGBAModel.Convert(img.At(x, row)).(color.RGBA), bandColor, 2) {
			band = append(band, x)
		}
	}
	if len(band) == 0 {
		t.Fatalf("no band colour on row %d", row)
	}
	for _, tc := range []struct {
		name string
		got  int
		at   int64
	}{{"start", band[0], 512 * nccl.KiB}, {"end", band[len(band)-1], 4 * nccl.MiB}} {
		if want := px(trX(float64(tc.at))); math.Abs(float64(tc.got)-want) > 2 {
			t.Errorf("PNG: the band's %s is at pixel %d, %s at %.1f", tc.name, tc.got, nccl.FormatSize(tc.at), want)
		}
	}
	gx := int(math.Round(px(trX(float64(8 * nccl.MiB)))))
	grey := 0
	for x := gx - 2; x <= gx+2; x++ {
		for y := row; y < row+40; y++ {
			if near(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA), guardColor, 8) {
				grey++
			}
		}
	}
	if grey < 10 {
		t.Errorf("PNG: no guard line at x(8M) = %d", gx)
	}
}

// TestShadingOnlyForSearches: an imported log or a sweep has no searched
// band to shade.
func TestShadingOnlyForSearches(t *testing.T) {
	for _, s := range []*Study{importStudy(), sweepStudy()} {
		f, err := s.DecisionFigure(MetricBusBW, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Bands) != 0 {
			t.Errorf("%s (%s): bands %+v, want none", s.Name(), s.Study.Kind, f.Bands)
		}
		var buf bytes.Buffer
		if err := f.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "searched band") || strings.Contains(strings.ToUpper(buf.String()), fmt.Sprintf("FILL:#%02X%02X%02X", bandColor.R, bandColor.G, bandColor.B)) {
			t.Errorf("%s (%s): the figure shades a searched band", s.Name(), s.Study.Kind)
		}
	}
}

// TestHeaderLinesDoNotTouch: every header line's descenders clear the next
// line's ascenders ("all_reduce" over the SIMULATED line), in the SVG.
func TestHeaderLinesDoNotTouch(t *testing.T) {
	s := recommendStudy()
	figs := map[string]Drawing{}
	figs["busbw"], _ = s.DecisionFigure(MetricBusBW, false)
	figs["speedup"], _ = s.SpeedupFigure()
	figs["landscape"], _ = s.Landscape()
	figs["convergence"], _ = s.Convergence()
	for name, d := range figs {
		var buf bytes.Buffer
		if err := d.WriteAt(&buf, FormatSVG, PNGDPI); err != nil {
			t.Fatal(err)
		}
		texts := svgTextsAt(t, buf.Bytes())
		var header []svgText
		for _, tx := range texts {
			if tx.fontSize == titleFont || tx.fontSize == subtitleFont {
				header = append(header, tx)
			}
		}
		if len(header) < 3 || !strings.Contains(header[0].text, "all_reduce") || !strings.Contains(header[len(header)-1].text, "SIMULATED") {
			t.Fatalf("%s: header %+v", name, header)
		}
		for i := 0; i+1 < len(header); i++ {
			a, b := header[i], header[i+1]
			ea, eb := textStyle(vg.Length(a.fontSize), color.Black).FontExtents(), textStyle(vg.Length(b.fontSize), color.Black).FontExtents()
			bottomOfA := a.y - float64(ea.Descent/vg.Points(1))
			topOfB := b.y + float64(eb.Ascent/vg.Points(1))
			if bottomOfA-topOfB < 1 {
				t.Errorf("%s: %q (descends to %.1f) and %q (rises to %.1f) touch", name, a.text, bottomOfA, b.text, topOfB)
			}
		}
	}
}

// TestNamesAsExported: the name a figure gives the recommended config is
// the export's env file, line for line.
func TestNamesAsExported(t *testing.T) {
	s := recommendStudy()
	band, err := export.NewRecommendation(s.Study, s.Trials, s.Launches)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, export.FormatEnv, []*export.Recommendation{band}, export.Options{Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	curves, _ := s.DecisionCurves(false)
	if want := strings.Join(lines, " "); curves[1].Label != want {
		t.Errorf("the figure names the config %q, the env export %q", curves[1].Label, want)
	}
}

// TestEveryFigureRenders draws every figure of every kind of study as PNG
// and SVG, and names the studies that cannot have one.
func TestEveryFigureRenders(t *testing.T) {
	studies := []*Study{recommendStudy(), keepStudy(), sequentialStudy(), sweepStudy(), importStudy()}
	for _, s := range studies {
		figs := map[string]func() (Drawing, error){
			"busbw":       func() (Drawing, error) { return s.DecisionFigure(MetricBusBW, false) },
			"time":        func() (Drawing, error) { return s.DecisionFigure(MetricTime, false) },
			"explore":     func() (Drawing, error) { return s.DecisionFigure(MetricBusBW, true) },
			"speedup":     func() (Drawing, error) { return s.SpeedupFigure() },
			"landscape":   func() (Drawing, error) { return s.Landscape() },
			"convergence": func() (Drawing, error) { return s.Convergence() },
		}
		search := s.Study.Kind == vocab.KindSearch
		for name, make := range figs {
			d, err := make()
			if !search && (name == "speedup" || name == "landscape" || name == "convergence") {
				if err == nil {
					t.Errorf("%s (%s): a %s figure was made", s.Name(), s.Study.Kind, name)
				} else if !strings.Contains(err.Error(), s.Name()) {
					t.Errorf("%s: the error %q does not name the study", s.Name(), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", s.Name(), name, err)
				continue
			}
			formats := []string{FormatSVG}
			if s == studies[0] { // PNG is slow to draw: one study's worth
				formats = append(formats, FormatPNG)
			}
			for _, format := range formats {
				var buf bytes.Buffer
				if err := d.WriteAt(&buf, format, PNGDPI); err != nil {
					t.Errorf("%s %s %s: %v", s.Name(), name, format, err)
					continue
				}
				if format == FormatPNG {
					img, err := png.Decode(&buf)
					if err != nil {
						t.Errorf("%s %s: the PNG does not decode: %v", s.Name(), name, err)
						continue
					}
					if inked(img) < 0.02 {
						t.Errorf("%s %s: the PNG is nearly blank", s.Name(), name)
					}
					continue
				}
				texts := svgTexts(t, buf.Bytes())
				if s.Study.Simulated != slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, "SIMULATED") }) {
					t.Errorf("%s %s: SIMULATED label is wrong (simulated %v)", s.Name(), name, s.Study.Simulated)
				}
			}
		}
	}
}

func inked(img image.Image) float64 {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy()/4)
}

func TestSpeedupFigure(t *testing.T) {
	k, err := keepStudy().SpeedupFigure()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := k.Write(&buf, FormatSVG); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	tildes := 0
	for _, x := range texts {
		if x == "~" {
			tildes++
		}
	}
	// Every size of the keep-defaults study is "~" in its table.
	if tildes != len(k.Comparison.Rows) {
		t.Errorf("%d \"~\" drawn, want one per size (%d)", tildes, len(k.Comparison.Rows))
	}
	r, _ := recommendStudy().SpeedupFigure()
	for _, row := range r.Comparison.Rows {
		// The row's speedup is the comparison's ratio of the arms' scores,
		// at one size their medians' (equal but for rounding).
		if want := row.BaselineUS / row.CandidateUS; math.Abs(row.Speedup/want-1) > 1e-12 {
			t.Errorf("%s: speedup %v, the table's medians give %v", nccl.FormatSize(row.Bytes), row.Speedup, want)
		}
		if !(row.SpeedupLo <= row.Speedup && row.Speedup <= row.SpeedupHi) {
			t.Errorf("%s: speedup %v outside its interval [%v, %v]", nccl.FormatSize(row.Bytes), row.Speedup, row.SpeedupLo, row.SpeedupHi)
		}
	}
}

// A page builds each comparison once (compared) and its figures draw
// that one: handed a comparison whose candidate is relabelled, every
// figure of it shows the new label, so none compared again. (Compare has
// no seam to count its calls by; BenchmarkReport's allocations show the
// comparisons saved.)
func TestFiguresDrawTheComparisonHanded(t *testing.T) {
	s := recommendStudy()
	whole := s.compared()
	whole.c.Candidate.Label = "handed"
	figs := figures(s, whole, nil)
	w := workloadStudy()
	var parts []compared
	for _, op := range w.WorkloadOps() {
		v := w.opCompared(op)
		v.c.Candidate.Label = "handed"
		parts = append(parts, v)
	}
	figs = append(figs, figures(w, compared{}, parts)...)
	drawn := 0
	for _, f := range figs {
		if f.ID == "fig-landscape" || f.ID == "fig-convergence" {
			continue // drawn from every launch's score, not the comparison
		}
		drawn++
		if f.Error != "" || !strings.Contains(string(f.SVG), "handed") {
			t.Errorf("%s (%s) does not draw the comparison it was handed", f.ID, f.Error)
		}
	}
	if drawn != 3+3*len(parts) {
		t.Errorf("%d figures drawn from the comparison, want 3 of the study's and 3 per op of the workload's", drawn)
	}
	for _, v := range append(parts, whole) {
		if f, err := v.speedupFigure(); err != nil || f.Comparison != v.c {
			t.Errorf("%q: the speedup figure draws another comparison than the one handed (%v)", v.op, err)
		}
	}
}

func TestLandscape(t *testing.T) {
	s := sequentialStudy()
	l, err := s.Landscape()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Configs) != len(s.Trials) {
		t.Fatalf("%d configs, want every trial (%d)", len(l.Configs), len(s.Trials))
	}
	for i := 1; i < len(l.Configs); i++ {
		if l.Configs[i-1].ScoreUS > l.Configs[i].ScoreUS {
			t.Errorf("not ranked: %v before %v", l.Configs[i-1].ScoreUS, l.Configs[i].ScoreUS)
		}
	}
	// The one-launch config leads with no interval; the confirmed one has
	// a 95% CI over its 9 launches; NCCL defaults a CI over 5.
	first := l.Configs[0]
	if first.Launches != 1 || first.Interval != "1 launch" || !math.IsNaN(first.LoUS) || first.Knobs != 3 {
		t.Errorf("leader %+v", first)
	}
	var fix, base ScoredConfig
	for _, c := range l.Configs {
		switch c.Role {
		case "recommended":
			fix = c
		case vocab.RoleBaseline:
			base = c
		}
	}
	if fix.Launches != 9 || fix.Exploration != 2 || fix.Interval != "95% CI" || !(fix.LoUS <= fix.ScoreUS && fix.ScoreUS <= fix.HiUS) {
		t.Errorf("recommended %+v", fix)
	}
	if base.Launches != 5 || base.Interval != "min–max" || l.BaselineUS != base.ScoreUS {
		t.Errorf("baseline %+v (landscape's baseline score %v)", base, l.BaselineUS)
	}
	// Ranks 1 (the lucky config), 2 (the fix), 3 (NCCL defaults):
	// NCCL_ALGO (set on 1 only) and NCCL_MAX_NCHANNELS (set on 1 and 2)
	// explain 0.75 each; the first in name order wins the tie.
	if l.Knob != "NCCL_ALGO" || math.Abs(l.Share-0.75) > 1e-9 {
		t.Errorf("knob %s (η² %.2f), want NCCL_ALGO, 0.75", l.Knob, l.Share)
	}
	// A failed config is listed last, without a score.
	r, _ := recommendStudy().Landscape()
	if last := r.Configs[len(r.Configs)-1]; last.Scored() || last.State != string(vocab.TrialFailed) {
		t.Errorf("last config %+v, want the failed one", last)
	}
}

func TestMostImportantKnob(t *testing.T) {
	mk := func(score float64, kv ...string) ScoredConfig {
		c := nccl.Config{}
		for i := 0; i+1 < len(kv); i += 2 {
			c[kv[i]] = kv[i+1]
		}
		return ScoredConfig{Config: c, ScoreUS: score, Launches: 1}
	}
	cs := []ScoredConfig{
		mk(100, "NCCL_PROTO", "Simple", "NCCL_ALGO", "Ring"),
		mk(105, "NCCL_PROTO", "Simple", "NCCL_ALGO", "Tree"),
		mk(400, "NCCL_PROTO", "LL", "NCCL_ALGO", "Ring"),
		mk(410, "NCCL_PROTO", "LL", "NCCL_ALGO", "Tree"),
		mk(800),
	}
	// A pathological config far slower than the rest weighs one rank, no
	// more: the knob that orders the others still wins.
	cs = append(cs, mk(1e6, "NCCL_MAX_CTAS", "1"))
	if k, _ := mostImportantKnob(cs); k != "NCCL_PROTO" {
		t.Errorf("with an outlier: knob %s, want NCCL_PROTO", k)
	}
	cs = cs[:5]
	if k, share := mostImportantKnob(cs); k != "NCCL_PROTO" || math.Abs(share-0.9) > 1e-9 {
		t.Errorf("knob %s (%.2f), want NCCL_PROTO", k, share)
	}
	if k, _ := mostImportantKnob(cs[:2]); k != "" {
		t.Errorf("two configs: knob %q, want none", k)
	}
}

func TestConvergence(t *testing.T) {
	s := sequentialStudy()
	c, err := s.Convergence()
	if err != nil {
		t.Fatal(err)
	}
	if c.Launches != len(s.Launches) || len(c.Steps) != len(s.Launches) {
		t.Fatalf("%d launches, %d steps; want %d", c.Launches, len(c.Steps), len(s.Launches))
	}
	// Confirmation: launches 5 to 15 (11 of them, 4 + 7).
	if c.ConfirmFrom != 5 || c.ConfirmTo != 15 {
		t.Errorf("confirmation %d–%d, want 5–15", c.ConfirmFrom, c.ConfirmTo)
	}
	last := c.Steps[len(c.Steps)-1]
	l, _ := s.Landscape()
	for _, sc := range l.Configs {
		switch {
		case sc.Role == vocab.RoleBaseline && last.BaselineUS != sc.ScoreUS:
			t.Errorf("defaults end at %v, the landscape says %v", last.BaselineUS, sc.ScoreUS)
		case sc.Role == "recommended" && (last.ConfirmedUS != sc.ScoreUS || last.ConfirmedLaunches != sc.Launches):
			t.Errorf("confirmed config ends at %v over %d, the landscape says %v over %d", last.ConfirmedUS, last.ConfirmedLaunches, sc.ScoreUS, sc.Launches)
		}
	}
	if last.Leader != l.Configs[0].Label || last.LeaderUS != l.Configs[0].ScoreUS {
		t.Errorf("leader at the end %s %v, the landscape's first %s %v", last.Leader, last.LeaderUS, l.Configs[0].Label, l.Configs[0].ScoreUS)
	}
	if _, err := sweepStudy().Convergence(); err == nil {
		t.Error("a sweep has a convergence figure")
	}
}

func TestWhyChosen(t *testing.T) {
	chosen, prefs := sequentialStudy().WhyChosen()
	if chosen == nil || chosen.Label != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" {
		t.Fatalf("chosen %+v", chosen)
	}
	if len(prefs) != 1 || prefs[0].Config.Label != "NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" {
		t.Fatalf("preferences %+v", prefs)
	}
	why := strings.Join(prefs[0].Reasons, "\n")
	for _, want := range []string{"fewer launches: 1 launch against 9 launches", "below the 3 % minimum effect", "more knobs: 3 against 2", "the same plan"} {
		if !strings.Contains(why, want) {
			t.Errorf("reasons %q do not say %q", why, want)
		}
	}
	// Without both configs' plans on record, no claim of the same plan.
	s := sequentialStudy()
	s.Launches = slices.DeleteFunc(s.Launches, func(l *store.Launch) bool { return l.Phase == vocab.PhaseExplain && l.TrialID == 3 })
	if _, prefs := s.WhyChosen(); len(prefs) != 1 || strings.Contains(strings.Join(prefs[0].Reasons, " "), "same plan") {
		t.Errorf("without the lucky config's debug launch: %+v", prefs)
	}
	if _, prefs := recommendStudy().WhyChosen(); len(prefs) != 0 {
		t.Errorf("nothing scored better than the fix, yet %+v", prefs)
	}
	page := renderHTML(t, sequentialStudy())
	d := parseHTML(t, page)
	if !strings.Contains(d.text["why"], "fewer launches") {
		t.Errorf("the report's why section says %q", d.text["why"])
	}
}

func TestAllCurvesHighlightTheBest(t *testing.T) {
	s := sequentialStudy()
	cs, err := s.AllCurves(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || len(cs[0].Config) != 0 || cs[1].Note != "recommended" {
		t.Fatalf("order %v: want NCCL defaults, the recommended config, then the rest", cs)
	}
	if cs[0].Background || cs[1].Background || cs[2].Background {
		t.Errorf("with one highlighted other, nothing is grey: %v", cs)
	}
	cs, _ = s.AllCurves(0)
	f := NewFigure(cs, s)
	cs[2].Background = true
	f.Curves = cs
	var buf bytes.Buffer
	if err := f.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	if !slices.Contains(texts, "1 other config, in grey without intervals (the landscape figure ranks every config)") {
		t.Errorf("no legend entry for the grey curves: %q", texts)
	}
	if slices.ContainsFunc(texts, func(x string) bool { return strings.HasPrefix(x, "NCCL_ALGO=Ring") }) {
		t.Error("a grey curve has its own legend entry")
	}
}

func TestTicksReadable(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		log    bool
		want   []string
	}{
		{0, 25.9, false, []string{"0", "5", "10", "15", "20", "25"}},
		{0, 0.32, false, []string{"0.0", "0.1", "0.2", "0.3"}},
		{0, 1.4, false, []string{"0.00", "0.25", "0.50", "0.75", "1.00", "1.25"}},
		{0, 7300, false, []string{"0", "2000", "4000", "6000"}},
		{90, 1300, true, []string{"100", "200", "500", "1000"}},
		{1.5, 120, true, []string{"2", "5", "10", "20", "50", "100"}},
		{0.93, 1.12, true, []string{"0.95", "1.00", "1.05", "1.10"}},
	} {
		var got []string
		if tc.log {
			for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
		} else {
			for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
				if tk.Label != "" {
					got = append(got, tk.Label)
				}
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[%v, %v] log %v: labels %q, want %q", tc.lo, tc.hi, tc.log, got, tc.want)
		}
	}
}

// TestRecommendedNamedAsExported: when the recommendation leaves out a
// knob the confirmed trial was launched with, every figure and table
// names the config as the exports write it and says what was launched.
func TestRecommendedNamedAsExported(t *testing.T) {
	s := recommendStudy()
	s.Study.Recommendation.Env = map[string]string{"NCCL_MAX_NCHANNELS": "8"}
	s.Study.Recommendation.Dropped = []nccl.Drop{{Knob: "NCCL_PROTO", Value: "^LL128", Reason: "holds every protocol NCCL chooses here"}}
	const written, launched = "NCCL_MAX_NCHANNELS=8", "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128"
	curves, err := s.DecisionCurves(false)
	if err != nil {
		t.Fatal(err)
	}
	if c := curves[1]; c.Label != written || !strings.Contains(c.LegendText(false), "recommended; measured as "+launched) {
		t.Errorf("curve %q, legend %q", c.Label, c.LegendText(false))
	}
	cmp := s.Compare()
	if cmp.Candidate.Label != written || len(cmp.Candidate.Notes) == 0 || !strings.Contains(strings.Join(cmp.Notes, "\n"), "was measured as "+launched) {
		t.Errorf("table arm %+v, notes %q", cmp.Candidate, cmp.Notes)
	}
	l, _ := s.Landscape()
	if !slices.ContainsFunc(l.Configs, func(c ScoredConfig) bool {
		return c.Label == written && strings.Contains(c.rowLabel(), "measured as "+launched)
	}) {
		t.Errorf("the landscape does not name the recommended config %q as launched", written)
	}
	band, err := export.NewRecommendation(s.Study, s.Trials, s.Launches)
	if err != nil {
		t.Fatal(err)
	}
	if got := ConfigLabel(band.Env); got != written {
		t.Errorf("the export writes %q, the figures %q", got, written)
	}
}

// A config whose only launch was the debug launch that merged it into a
// config already tried is drawn as merged, in grey: only a failed config
// is a red cross in the landscape.
func TestLandscapeMergedIsNotFailed(t *testing.T) {
	b := newBuilder(searchStudy("s9-512K-4M"), 9)
	all := append(append([]int64{}, bandSizes...), guardSizes...)
	base := b.trial(vocab.RoleBaseline, vocab.TrialComplete, "", nccl.Config{})
	fix := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	ch := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_MAX_NCHANNELS": "2"})
	for range 2 {
		b.launch(base, vocab.PhaseExplore, true, defaultsUS, all, 0.05, 0.05, 1)
		b.launch(fix, vocab.PhaseExplore, true, fixedUS, all, 0.05, 0.05, 1)
		b.launch(ch, vocab.PhaseExplore, true, channelsUS, all, 0.05, 0.05, 1)
	}
	merged := b.trial(vocab.RoleExplore, vocab.TrialComplete, "", nccl.Config{"NCCL_CROSS_NIC": "1"})
	b.launch(merged, vocab.PhasePlan, false, defaultsUS, all, 0.05, 0.05, 1)
	bad := b.trial(vocab.RoleExplore, vocab.TrialInvalid, "wrong results", nccl.Config{"NCCL_PROTO": "LL128"})
	b.failed(bad, "wrong results")
	unmeasured := b.trial(vocab.RoleExplore, vocab.TrialRunning, "", nccl.Config{"NCCL_MAX_NCHANNELS": "4"})

	l, err := b.s.Landscape()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]struct{ noScore, label string }{
		base.Number:       {"", "NCCL defaults"},
		merged.Number:     {NoScoreMerged, "(merged)"},
		bad.Number:        {NoScoreFailed, "(invalid)"},
		unmeasured.Number: {NoScoreUnmeasured, "(not measured)"},
	}
	for _, c := range l.Configs {
		w, ok := want[c.Trials[0]]
		if !ok {
			continue
		}
		if c.NoScore() != w.noScore || !strings.Contains(c.rowLabel(), w.label) {
			t.Errorf("trial %d: NoScore %q, row %q; want %q and a row naming %q", c.Trials[0], c.NoScore(), c.rowLabel(), w.noScore, w.label)
		}
	}
	var buf bytes.Buffer
	if err := l.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, s := range []string{"merged: its debug launch showed NCCL runs it like a config already tried", "failed, invalid or timed out", "not measured: proposed"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the landscape's legend lacks %q", s)
		}
	}
	// One red cross, for the one failed config: the merged config is not
	// among the failures.
	if n := strings.Count(strings.ToUpper(svg), fmt.Sprintf("STROKE:#%02X%02X%02X", titleRed.R, titleRed.G, titleRed.B)); n == 0 {
		t.Errorf("no red mark for the failed config")
	}
	only := b.s
	only.Trials = only.Trials[:len(only.Trials)-2] // without the failed and the unmeasured configs
	l2, err := only.Landscape()
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := l2.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "failed, invalid or timed out") {
		t.Errorf("a landscape whose only unscored config was merged names failures")
	}
}
