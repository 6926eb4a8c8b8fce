package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
)

// Curve is one config's bus bandwidth against message size over its
// launches.
type Curve struct {
	// Study names the study the trial belongs to; Label names the config
	// (ConfigLabel).
	Study  string      `json:"study"`
	Label  string      `json:"label"`
	Config nccl.Config `json:"env"`
	// Trial is the trial's number in its study (for tables, not legends).
	Trial int `json:"trial"`
	// Note says what the study made of the config: "recommended", or
	// "confirmed, not recommended" for a challenger the study measured
	// against the defaults and kept the defaults over; empty otherwise.
	Note string `json:"note,omitempty"`
	// Launches counts the launches drawn.
	Launches int `json:"launches"`
	// MinMax is true when the interval is the min–max range of the
	// launches, because they are too few for a confidence interval of
	// the median (model.MinLaunchesForInterval).
	MinMax bool `json:"min_max"`
	// Confidence is the coverage asked of the intervals when MinMax is
	// false (0.95).
	Confidence float64 `json:"confidence"`
	// Simulated is true when the study ran on the simulated fabric.
	Simulated bool    `json:"simulated"`
	Points    []Point `json:"points"`
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

// TrialCurve summarises a trial's usable launches size by size, over every
// size they measured. It fails when the trial has no usable launch.
func (s *Study) TrialCurve(t *store.Trial) (Curve, error) {
	ls := s.TrialLaunches(t, "")
	c := Curve{Study: s.Name(), Label: ConfigLabel(t.Config), Config: t.Config.Clone(), Trial: t.Number,
		Launches: len(ls), Simulated: s.Study.Simulated}
	if cand := s.Candidate(); cand != nil && cand.ID == t.ID && len(c.Config) > 0 {
		c.Note = "confirmed, not recommended"
		if s.Recommended() {
			c.Note = "recommended"
		}
	}
	if len(ls) == 0 {
		why := t.State
		if t.Reason != "" {
			why += ": " + t.Reason
		}
		return c, fmt.Errorf("trial %s/%d (%s) has no successful launch to draw (%s)", s.Name(), t.Number, c.Label, why)
	}
	opt := s.statOptions()
	c.Confidence = opt.Confidence
	c.MinMax = len(ls) < model.MinLaunchesForInterval(opt)
	factor := s.BusBWFactor()
	mls := modelLaunches(ls)
	for _, b := range measuredSizes(ls) {
		// One size at a time: a launch that missed another size still
		// counts at this one.
		sum := model.Summarize(mls, []int64{b}, opt)
		if len(sum.Sizes) != 1 || sum.Sizes[0].Launches == 0 || math.IsNaN(sum.Sizes[0].Median) {
			continue
		}
		ss := sum.Sizes[0]
		p := Point{Bytes: b, TimeUS: ss.Median, TimeLoUS: ss.Lo, TimeHiUS: ss.Hi, Launches: ss.Launches}
		if c.MinMax || math.IsNaN(p.TimeLoUS) || math.IsNaN(p.TimeHiUS) {
			p.TimeLoUS, p.TimeHiUS = launchRange(mls, b)
		}
		p.BusBW = busBW(factor, b, p.TimeUS)
		p.BusBWLo = busBW(factor, b, p.TimeHiUS)
		p.BusBWHi = busBW(factor, b, p.TimeLoUS)
		c.Points = append(c.Points, p)
	}
	if len(c.Points) == 0 {
		return c, fmt.Errorf("trial %s/%d (%s): its launches hold no valid time to draw", s.Name(), t.Number, c.Label)
	}
	return c, nil
}

// launchRange is the smallest and largest per-launch median time at a size.
func launchRange(ls []model.Launch, b int64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range ls {
		xs := slices.DeleteFunc(slices.Clone(l.Times[b]), func(x float64) bool { return !(x > 0) || math.IsInf(x, 0) })
		if len(xs) == 0 {
			continue
		}
		m := model.Median(xs)
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	if math.IsInf(lo, 0) {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// IntervalText says what a curve's shaded interval is: "95% CI" or
// "min–max".
func (c Curve) IntervalText() string {
	if c.MinMax {
		return "min–max"
	}
	return fmt.Sprintf("%.0f%% CI", 100*c.Confidence)
}

// LegendText is the curve's legend entry: its config, then how many
// launches and what the shaded interval is.
func (c Curve) LegendText(withStudy bool) string {
	name := c.Label
	if withStudy {
		name = c.Study + ": " + name
	}
	if c.Note != "" {
		name += " — " + c.Note
	}
	n := "1 launch"
	if c.Launches != 1 {
		n = fmt.Sprintf("%d launches", c.Launches)
	}
	return fmt.Sprintf("%s  (%s, %s)", name, n, c.IntervalText())
}
