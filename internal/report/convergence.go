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
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Convergence is the search seen in time: after each launch, the score of
// the leading config other than NCCL's defaults with its interval, the
// defaults' score, every launch's own score, and the confirmation phase.
// A study of several parts is followed by its rounds' objective instead,
// a round's dot at the launch that completed it.
type Convergence struct {
	Subject   string
	Simulated string
	Band      string
	// Score names what the dots and lines are (stored.ScoreName).
	Score string
	// Rounds: the dots and lines are a workload's rounds, not launches.
	Rounds bool
	// Launches counts every launch the study made.
	Launches int
	// Steps holds one entry per launch, in order.
	Steps []ConvergenceStep
	// Dots are the scored launches' own scores, or a workload's complete
	// rounds' objective.
	Dots []LaunchDot
	// ConfirmFrom and ConfirmTo are the first and last confirmation
	// launches (1-based; 0 when there was no confirmation).
	ConfirmFrom, ConfirmTo int
	// Final is the confirmed config's label, "" when none.
	Final string
}

// ConvergenceStep is the state of the search after launch Launch: the
// leader's, the defaults' and the confirmed config's scores (NaN before
// they have one).
type ConvergenceStep struct {
	Launch                                int
	Leader                                string
	LeaderUS, LeaderLo, LeaderHi          float64
	LeaderLaunches                        int
	BaselineUS, BaselineLo, BaselineHi    float64
	ConfirmedUS, ConfirmedLo, ConfirmedHi float64
	ConfirmedLaunches                     int
}

// LaunchDot is one scored launch, or a workload's round.
type LaunchDot struct {
	Launch   int
	ScoreUS  float64
	Phase    string
	Baseline bool
}

// Convergence builds the study's convergence figure.
func (s *Study) Convergence() (Convergence, error) {
	sizes := s.Study.Sizes
	if len(sizes) == 0 || s.Study.Kind != vocab.KindSearch {
		return Convergence{}, fmt.Errorf("study %s is not a search (a %s): it has no search to follow", s.Name(), s.Study.Kind)
	}
	subject := string(s.Study.Op())
	if ops := s.WorkloadOps(); ops != nil {
		// The steps pool every op's launches: the title names them all.
		subject = "workload of " + nccl.JoinOps(ops)
	}
	c := Convergence{Subject: s.Name() + ": " + subject, Band: studiedText(s.Study), Score: stored.ScoreName(s.Study),
		Launches: len(s.Launches), Simulated: s.simulatedLine()}
	base, cand := s.Baseline(), s.Candidate()
	if cand != nil {
		c.Final, _ = s.labelOf(cand)
	}
	scores := map[uint64][]float64{}
	// A study of several parts scores a round at the launch that
	// completed it.
	var roundAt map[*store.Launch]stored.Round
	for _, t := range s.Trials {
		rs, ok := s.LaunchStats.Rounds(s.Study, t.ID, s.Launches)
		if !ok {
			break
		}
		if roundAt == nil {
			roundAt = map[*store.Launch]stored.Round{}
		}
		for _, r := range rs {
			roundAt[r.Last] = r
		}
	}
	c.Rounds = roundAt != nil
	for i, l := range s.Launches {
		n := i + 1
		if l.Phase == vocab.PhaseConfirm {
			if c.ConfirmFrom == 0 {
				c.ConfirmFrom = n
			}
			c.ConfirmTo = n
		}
		sc, phase := math.NaN(), l.Phase
		if r, ok := roundAt[l]; ok {
			sc, phase = r.ScoreUS, r.Phase
		} else if roundAt == nil && usable(l) {
			sc = s.LaunchStats.LaunchScore(l, sizes)
		}
		if sc > 0 {
			scores[l.TrialID] = append(scores[l.TrialID], sc)
			c.Dots = append(c.Dots, LaunchDot{Launch: n, ScoreUS: sc, Phase: phase, Baseline: base != nil && l.TrialID == base.ID})
		}
		st := ConvergenceStep{Launch: n, LeaderUS: math.NaN(), LeaderLo: math.NaN(), LeaderHi: math.NaN(),
			BaselineUS: math.NaN(), BaselineLo: math.NaN(), BaselineHi: math.NaN(),
			ConfirmedUS: math.NaN(), ConfirmedLo: math.NaN(), ConfirmedHi: math.NaN()}
		for _, t := range s.Trials {
			xs := scores[t.ID]
			if len(xs) == 0 {
				continue
			}
			med, lo, hi, _ := s.LaunchStats.MedianWithInterval(s.Study, xs)
			if cand != nil && t.ID == cand.ID {
				st.ConfirmedUS, st.ConfirmedLo, st.ConfirmedHi, st.ConfirmedLaunches = med, lo, hi, len(xs)
			}
			if base != nil && t.ID == base.ID {
				st.BaselineUS, st.BaselineLo, st.BaselineHi = med, lo, hi
				continue
			}
			if math.IsNaN(st.LeaderUS) || med < st.LeaderUS {
				label, _ := s.labelOf(t)
				st.Leader, st.LeaderUS, st.LeaderLo, st.LeaderHi, st.LeaderLaunches = label, med, lo, hi, len(xs)
			}
		}
		c.Steps = append(c.Steps, st)
	}
	if len(c.Dots) == 0 {
		return c, fmt.Errorf("study %s has no scored launch yet: nothing to follow", s.Name())
	}
	return c, nil
}

// WriteAt renders the figure as PNG at dpi dots per inch, or as SVG.
func (c Convergence) WriteAt(w io.Writer, format string, dpi int) error {
	return writeSheet(c.sheet, w, format, dpi)
}

var confirmColor = color.RGBA{R: 0xe3, G: 0xf0, B: 0xfa, A: 0xff}

func (c Convergence) sheet() (*sheet, error) {
	if len(c.Dots) == 0 {
		return nil, fmt.Errorf("nothing to plot: no scored launch")
	}
	cv := newCanvas()
	xLabel := "launches spent"
	yLabel := c.Score + " (µs, log scale; lower is faster)"
	c.axes(cv.p)
	if c.ConfirmFrom > 0 {
		span := &xSpan{X0: float64(c.ConfirmFrom) - 0.5, X1: float64(c.ConfirmTo) + 0.5, Color: confirmColor}
		cv.mark(fmt.Sprintf("confirmation (launches %d–%d): NCCL defaults and the confirmed config interleaved", c.ConfirmFrom, c.ConfirmTo), span)
	}
	for _, drawn := range []func(*canvas) error{c.drawDots, c.drawTracks, c.markLeaderChanges} {
		if err := drawn(cv); err != nil {
			return nil, err
		}
	}
	first := "A launch's band score is the geometric mean over the band of its per-size median times; a config's score is the median of its launches' scores."
	if c.Rounds {
		first = "A round is one launch of each op, scored together as the search ranked it (its " + c.Score + "); its dot sits at the launch that completed it; a config's score is the median of its rounds' scores."
	}
	caption := []string{
		first,
		"A leader measured once is often lucky (the winner's curse): the search confirms a config against NCCL defaults in interleaved launches before it recommends anything.",
	}
	return &sheet{width: figureWidth, plotHeight: plotHeight, title: c.Subject + ": how the search converged",
		subtitle: c.subtitle(), simulated: c.Simulated, plot: cv.p, yLabel: yLabel, xLabel: xLabel, legend: cv.legend, caption: caption}, nil
}

// axes puts the launches on x and the scores on a log y axis.
func (c Convergence) axes(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.X.Tick.Marker = linearTicks{}
	ys := emptyRange()
	for _, d := range c.Dots {
		ys.add(d.ScoreUS)
	}
	for _, st := range c.Steps {
		ys.add(st.LeaderLo, st.LeaderHi, st.BaselineLo, st.BaselineHi)
	}
	p.X.Min, p.X.Max = 0, float64(c.Launches)+1
	p.Y.Min, p.Y.Max = ys.min/1.15, ys.max*1.15
}

func (c Convergence) drawDots(cv *canvas) error {
	var explore, defaults, confirm plotter.XYs
	for _, d := range c.Dots {
		xy := plotter.XY{X: float64(d.Launch), Y: d.ScoreUS}
		switch {
		case d.Baseline:
			defaults = append(defaults, xy)
		case d.Phase == vocab.PhaseConfirm:
			confirm = append(confirm, xy)
		default:
			explore = append(explore, xy)
		}
	}
	dotSets := []struct {
		xys   plotter.XYs
		col   color.Color
		label string
	}{
		{explore, otherColor, fmt.Sprintf("one exploration %s (its %s)", c.unit(), c.Score)},
		{defaults, defaultsColor, fmt.Sprintf("one %s of NCCL defaults", c.unit())},
		{confirm, palette[1], fmt.Sprintf("one confirmation %s of the confirmed config", c.unit())},
	}
	for _, ds := range dotSets {
		if len(ds.xys) == 0 {
			continue
		}
		if err := cv.dots(ds.xys, draw.GlyphStyle{Color: ds.col, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}, ds.label); err != nil {
			return err
		}
	}
	return nil
}

// drawTracks draws step lines of the defaults', the leader's and the
// confirmed config's median launch score, with their intervals shaded.
func (c Convergence) drawTracks(cv *canvas) error {
	many := "launches"
	if c.Rounds {
		many = "rounds"
	}
	if err := c.drawTrack(cv, func(st ConvergenceStep) (float64, float64, float64) {
		return st.BaselineUS, st.BaselineLo, st.BaselineHi
	},
		defaultsColor, fmt.Sprintf("NCCL defaults so far: %s, shaded min–max (2–5 %s) or 95%% CI (6 or more)", c.median(), many)); err != nil {
		return err
	}
	if err := c.drawTrack(cv, func(st ConvergenceStep) (float64, float64, float64) { return st.LeaderUS, st.LeaderLo, st.LeaderHi },
		palette[0], fmt.Sprintf("the leader so far (lowest %s of any other config), shaded likewise", c.median())); err != nil {
		return err
	}
	if c.Final != "" {
		if err := c.drawTrack(cv, func(st ConvergenceStep) (float64, float64, float64) {
			return st.ConfirmedUS, st.ConfirmedLo, st.ConfirmedHi
		},
			palette[1], "the confirmed config so far, shaded likewise"); err != nil {
			return err
		}
	}
	return nil
}

// drawTrack draws the value get reads from each step as a step line, its
// interval as boxes.
func (c Convergence) drawTrack(cv *canvas, get func(ConvergenceStep) (float64, float64, float64), col color.RGBA, label string) error {
	var line plotter.XYs
	var boxes []plot.Plotter
	for i, st := range c.Steps {
		v, lo, hi := get(st)
		if !finite(v) {
			continue
		}
		x0, x1 := float64(st.Launch), float64(st.Launch)+1
		if i == len(c.Steps)-1 {
			x1 = float64(st.Launch)
		}
		line = append(line, plotter.XY{X: x0, Y: v}, plotter.XY{X: x1, Y: v})
		if finite(lo) && finite(hi) {
			boxes = append(boxes, &yBox{X0: x0, X1: x1, Y0: lo, Y1: hi, Color: withAlpha(col, 0x30)})
		}
	}
	if len(line) == 0 {
		return nil
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return err
	}
	l.Color, l.Width = col, vg.Points(2)
	cv.p.Add(boxes...)
	cv.p.Add(l)
	if len(boxes) > 0 {
		cv.legend.add(label, &yBox{Color: withAlpha(col, 0x30)}, l)
	} else {
		cv.legend.add(label, l)
	}
	return nil
}

// markLeaderChanges rings the leader's line where the leader changes.
func (c Convergence) markLeaderChanges(cv *canvas) error {
	var changes plotter.XYs
	prev := ""
	for _, st := range c.Steps {
		if st.Leader != "" && st.Leader != prev {
			changes = append(changes, plotter.XY{X: float64(st.Launch), Y: st.LeaderUS})
			prev = st.Leader
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return cv.dots(changes, draw.GlyphStyle{Color: palette[0], Radius: vg.Points(4), Shape: draw.RingGlyph{}},
		fmt.Sprintf("a new leader (%s)", texttable.Plural(len(changes), "change")))
}

// subtitle says what the figure follows and how the search ended.
func (c Convergence) subtitle() []string {
	last := c.Steps[len(c.Steps)-1]
	sub := []string{fmt.Sprintf("%s over %s: the best config so far and NCCL defaults, launch by launch", texttable.Plural(c.Launches, "launch"), c.Band)}
	if c.Final != "" && finite(last.ConfirmedUS) {
		sub = append(sub, fmt.Sprintf("confirmed: %s, %s µs over %s", c.Final, formatValue(MetricTime, last.ConfirmedUS), texttable.Plural(last.ConfirmedLaunches, c.unit())))
	}
	if last.Leader != "" && last.Leader != c.Final {
		sub = append(sub, fmt.Sprintf("leader at the end: %s, %s µs over %s", last.Leader, formatValue(MetricTime, last.LeaderUS), texttable.Plural(last.LeaderLaunches, c.unit())))
	}
	return sub
}

func (c Convergence) unit() string {
	if c.Rounds {
		return "round"
	}
	return "launch"
}

func (c Convergence) median() string {
	if c.Rounds {
		return "median " + c.Score + " of its rounds"
	}
	return "median launch score"
}
