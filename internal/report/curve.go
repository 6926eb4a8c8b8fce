package report

import (
	"fmt"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Curve is one config's bus bandwidth against message size over its
// launches.
type Curve struct {
	// Label names the config (ConfigLabel).
	Study  string      `json:"study"`
	Label  string      `json:"label"`
	Config nccl.Config `json:"env"`
	// Trial is the trial's number in its study (for tables, not legends).
	Trial int `json:"trial"`
	// Note is "recommended", "confirmed, not recommended" for a challenger
	// the study kept the defaults over, or empty.
	Note string `json:"note,omitempty"`
	// Phase says which launches are drawn: PhaseConfirmation,
	// PhaseExploration (for context only) or PhaseAll.
	Launches int    `json:"launches"`
	Phase    string `json:"phase"`
	// MinMax is true when the interval is the launches' min–max, too few
	// for a confidence interval of the median.
	MinMax bool `json:"min_max"`
	// Confidence is the intervals' coverage when MinMax is false (0.95).
	Confidence float64 `json:"confidence"`
	Simulated  bool    `json:"simulated"`
	// Background curves are drawn thin and grey, without intervals, under
	// one legend entry: the configs --all does not highlight.
	Background bool    `json:"background,omitempty"`
	Points     []Point `json:"points"`
}

// Point is one message size of a Curve.
type Point struct {
	Bytes int64 `json:"bytes"`
	// TimeUS is the median over launches of each launch's median time;
	// TimeLoUS and TimeHiUS bound it (confidence interval, or min–max).
	TimeUS   float64 `json:"time_us"`
	TimeLoUS float64 `json:"time_lo_us"`
	TimeHiUS float64 `json:"time_hi_us"`
	// BusBW is the bus bandwidth (GB/s) at TimeUS; BusBWLo and BusBWHi at
	// TimeHiUS and TimeLoUS.
	BusBW   float64 `json:"busbw"`
	BusBWLo float64 `json:"busbw_lo"`
	BusBWHi float64 `json:"busbw_hi"`
	// Launches counts the launches that measured this size.
	Launches int `json:"launches"`
}

// Which launches a curve is drawn from.
const (
	PhaseConfirmation = "confirmation"
	PhaseExploration  = "exploration"
	PhaseAll          = "all"
)

// TrialCurve summarises all of a trial's usable launches, pooled, size by
// size. It fails when the trial has no usable launch.
func (s *Study) TrialCurve(t *store.Trial) (Curve, error) {
	return s.curveOf(t, s.TrialLaunches(t, ""), PhaseAll)
}

// DecisionCurves are the curves of NCCL's defaults and the confirmed
// config over exactly the launches Compare uses. With exploration, each
// is followed by the curve of its launches before confirmation.
func (s *Study) DecisionCurves(exploration bool) ([]Curve, error) {
	base, cand := s.Baseline(), s.Candidate()
	if base == nil || cand == nil || base.ID == cand.ID {
		return nil, fmt.Errorf("study %s has no confirmed config to compare with NCCL's defaults", s.Name())
	}
	bl, cl, which := s.comparedLaunches(base, cand)
	if len(bl) == 0 || len(cl) == 0 {
		return nil, fmt.Errorf("study %s has no successful launch of both NCCL's defaults and the confirmed config", s.Name())
	}
	bc, err := s.curveOf(base, bl, which)
	if err != nil {
		return nil, err
	}
	cc, err := s.curveOf(cand, cl, which)
	if err != nil {
		return nil, err
	}
	out := []Curve{bc, cc}
	if exploration && which == PhaseConfirmation {
		for _, t := range []*store.Trial{base, cand} {
			ls := slices.DeleteFunc(s.TrialLaunches(t, ""), func(l *store.Launch) bool { return l.Phase == vocab.PhaseConfirm })
			if c, err := s.curveOf(t, ls, PhaseExploration); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// comparedLaunches are the confirmation launches of base and cand, or
// every usable launch of each when either has none.
func (s *Study) comparedLaunches(base, cand *store.Trial) (bl, cl []*store.Launch, which string) {
	bl, cl = s.TrialLaunches(base, vocab.PhaseConfirm), s.TrialLaunches(cand, vocab.PhaseConfirm)
	if len(cl) > 0 {
		// The baseline's launches of the candidate's own confirmation
		// (after a refusal another one began).
		from, to := stored.ConfirmationSpan(s.Study, cl[0].Seq)
		bl = slices.DeleteFunc(bl, func(l *store.Launch) bool { return l.Seq < from || to >= 0 && l.Seq >= to })
	}
	if len(bl) > 0 && len(cl) > 0 {
		return bl, cl, PhaseConfirmation
	}
	return s.TrialLaunches(base, ""), s.TrialLaunches(cand, ""), PhaseAll
}

// curveOf summarises the given launches of a trial size by size.
func (s *Study) curveOf(t *store.Trial, ls []*store.Launch, phase string) (Curve, error) {
	label, measuredAs := s.labelOf(t)
	c := Curve{Study: s.Name(), Label: label, Config: t.Config.Clone(), Trial: t.Number,
		Launches: len(ls), Phase: phase, Simulated: s.Study.Simulated}
	if cand := s.Candidate(); cand != nil && cand.ID == t.ID && len(c.Config) > 0 {
		c.Note = "confirmed, not recommended"
		if s.Recommended() {
			c.Note = "recommended"
		}
		if measuredAs != "" {
			c.Note += "; measured as " + measuredAs
		}
	}
	if len(ls) == 0 {
		why := string(t.State)
		if t.Reason != "" {
			why += ": " + t.Reason
		}
		if phase != PhaseAll {
			why = "no " + phase + " launch"
		}
		return c, fmt.Errorf("trial %s/%d (%s) has no successful launch to draw (%s)", s.Name(), t.Number, c.Label, why)
	}
	var sizes []stored.SizeTimes
	sizes, c.MinMax = s.LaunchStats.CurveTimes(s.Study, ls)
	c.Confidence = stored.StatsOf(s.Study).Confidence
	factor := s.BusBWFactor()
	for _, z := range sizes {
		c.Points = append(c.Points, Point{Bytes: z.Bytes, TimeUS: z.TimeUS, TimeLoUS: z.LoUS, TimeHiUS: z.HiUS, Launches: z.Launches,
			BusBW: busBW(factor, z.Bytes, z.TimeUS), BusBWLo: busBW(factor, z.Bytes, z.HiUS), BusBWHi: busBW(factor, z.Bytes, z.LoUS)})
	}
	if len(c.Points) == 0 {
		return c, fmt.Errorf("trial %s/%d (%s): its launches hold no valid time to draw", s.Name(), t.Number, c.Label)
	}
	return c, nil
}

// Exploration reports whether the curve is of exploration launches.
func (c Curve) Exploration() bool { return c.Phase == PhaseExploration }

// IntervalText says what a curve's shaded interval is ("95% CI").
func (c Curve) IntervalText() string {
	if c.Launches == 1 {
		return "no interval"
	}
	if c.MinMax {
		return "min–max"
	}
	return store.CILevel(c.Confidence).Label()
}

// LegendText is the curve's legend entry.
func (c Curve) LegendText(withStudy bool) string {
	name := c.Label
	if withStudy {
		name = c.Study + ": " + name
	}
	if c.Exploration() {
		return fmt.Sprintf("%s: %s, median (not used for the verdict)", name, texttable.Plural(c.Launches, "exploration launch"))
	}
	if c.Note != "" {
		name += " — " + c.Note
	}
	n := texttable.Plural(c.Launches, "launch")
	if c.Phase == PhaseConfirmation {
		n = texttable.Plural(c.Launches, "confirmation launch")
	}
	return fmt.Sprintf("%s  (%s, %s)", name, n, c.IntervalText())
}
