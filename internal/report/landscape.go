package report

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// ScoredConfig is one config of a search as the landscape and the trials
// table show it: the median of its launches' band scores with an interval,
// every usable launch pooled.
type ScoredConfig struct {
	Label  string      `json:"label"`
	Config nccl.Config `json:"env"`
	// MeasuredAs names the config as launched when the exports write it
	// shorter (the recommended config), else "".
	MeasuredAs string `json:"measured_as,omitempty"`
	// Trials are the trial numbers merged into this entry, the first named;
	// Equivalent lists the other configs' labels.
	Trials     []int    `json:"trials"`
	Equivalent []string `json:"equivalent,omitempty"`
	State      string   `json:"state"`
	Reason     string   `json:"reason,omitempty"`
	// Role is "baseline", "recommended", "confirmed" or "".
	Role string `json:"role,omitempty"`
	// Knobs counts the knobs the config sets.
	Knobs int `json:"knobs"`
	// ScoreUS is the median of the launch band scores (µs); LoUS and HiUS
	// bound it: the order-statistic interval from 6 launches, the min–max
	// below that, NaN for one launch or none.
	ScoreUS  float64 `json:"score_us"`
	LoUS     float64 `json:"lo_us"`
	HiUS     float64 `json:"hi_us"`
	Interval string  `json:"interval"`
	Launches int     `json:"launches"`
	// Exploration counts the launches before confirmation, PlanLaunches
	// the unscored debug launches (vocab.PhasePlan).
	Exploration  int `json:"exploration_launches"`
	PlanLaunches int `json:"plan_launches,omitempty"`
}

// Scored reports whether the config has a band score.
func (c ScoredConfig) Scored() bool { return c.Launches > 0 && finite(c.ScoreUS) }

// Why a config has no band score (ScoredConfig.NoScore): it failed (never
// recommended); its debug launch showed NCCL runs it like a config already
// tried, measured instead; it was never launched.
const (
	NoScoreFailed     = "failed"
	NoScoreMerged     = "merged"
	NoScoreUnmeasured = "not measured"
)

// NoScore says why the config has no band score, "" when it has one: the
// one rule the marks and row labels read, so that a merged config is
// never drawn as a failure.
func (c ScoredConfig) NoScore() string {
	switch {
	case c.Scored():
		return ""
	case !vocab.TrialState(c.State).Usable():
		return NoScoreFailed
	case c.PlanLaunches > 0:
		return NoScoreMerged
	}
	return NoScoreUnmeasured
}

// ScoredConfigs scores every config of a search, best first; configs
// without a score follow in trial order. It fails for a study that scored
// no band.
func (s *Study) ScoredConfigs() ([]ScoredConfig, error) {
	sizes := s.Study.Sizes
	if len(sizes) == 0 {
		return nil, fmt.Errorf("study %s scored no band (a %s): there is no band score to rank configs by", s.Name(), s.Study.Kind)
	}
	base, cand := s.Baseline(), s.Candidate()
	groups := map[string]*ScoredConfig{}
	scores := map[string][]float64{}
	var order []string
	for _, t := range s.Trials {
		key := equivalenceKey(t)
		g, ok := groups[key]
		if !ok {
			label, measuredAs := s.labelOf(t)
			g = &ScoredConfig{Label: label, MeasuredAs: measuredAs, Config: t.Config.Clone(), State: string(t.State), Reason: t.Reason, Knobs: len(t.Config.Clone())}
			groups[key] = g
			order = append(order, key)
		} else {
			g.Equivalent = append(g.Equivalent, ConfigLabel(t.Config))
		}
		g.Trials = append(g.Trials, t.Number)
		switch {
		case base != nil && t.ID == base.ID:
			g.Role = vocab.RoleBaseline
		case cand != nil && t.ID == cand.ID && s.Recommended():
			g.Role = "recommended"
		case cand != nil && t.ID == cand.ID:
			g.Role = "confirmed"
		}
		for _, l := range s.Launches {
			// Debug launches are not among TrialLaunches' usable ones.
			if l.TrialID == t.ID && l.Phase == vocab.PhasePlan {
				g.PlanLaunches++
			}
		}
		if explore, confirm, ok := s.LaunchStats.RoundScores(s.Study, t.ID, s.Launches); ok {
			// A study of several parts is scored by rounds (one launch of
			// every op), as the search ranked them.
			scores[key] = append(append(scores[key], explore...), confirm...)
			g.Launches += len(explore) + len(confirm)
			g.Exploration += len(explore)
			continue
		}
		for _, l := range s.TrialLaunches(t, "") {
			sc := s.LaunchStats.LaunchScore(l, sizes)
			if !(sc > 0) {
				continue
			}
			scores[key] = append(scores[key], sc)
			g.Launches++
			if l.Phase != vocab.PhaseConfirm {
				g.Exploration++
			}
		}
	}
	var out []ScoredConfig
	for _, key := range order {
		g := groups[key]
		g.ScoreUS, g.LoUS, g.HiUS, g.Interval = s.LaunchStats.MedianWithInterval(s.Study, scores[key])
		s.verdictScore(g)
		out = append(out, *g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Scored() != b.Scored() {
			return a.Scored()
		}
		return a.Scored() && a.ScoreUS < b.ScoreUS
	})
	return out, nil
}

// verdictScore gives the baseline and the confirmed config the score the
// verdict states, so that a config shows one score in a report. Their
// interval is the verdict's speedup interval, not drawn as a score's.
func (s *Study) verdictScore(g *ScoredConfig) {
	r := s.Study.Recommendation
	if r == nil || !(r.BaselineScoreUS > 0) || !(r.ScoreUS > 0) || g.Launches == 0 {
		return
	}
	n := r.BaselineLaunches
	switch g.Role {
	case vocab.RoleBaseline:
		g.ScoreUS = r.BaselineScoreUS
	case "recommended", "confirmed":
		g.ScoreUS, n = r.ScoreUS, r.CandidateLaunches
	default:
		return
	}
	g.LoUS, g.HiUS = math.NaN(), math.NaN()
	g.Interval = fmt.Sprintf("the verdict's, %s", texttable.Plural(n, "confirmation launch"))
}

// equivalenceKey groups trials into one landscape entry: trials with the
// same key are one config to NCCL.
func equivalenceKey(t *store.Trial) string {
	return t.Config.Canonical().Key()
}

// Landscape is the search seen whole: every explored config's band score
// with its interval, ranked, coloured by the value of the knob that
// explains most of the spread of the scores.
type Landscape struct {
	Subject   string
	Simulated string
	Band      string
	// Score names what the configs are ranked by (stored.ScoreName).
	Score   string
	Configs []ScoredConfig
	// Knob is the knob whose values explain the largest share (Share, η²)
	// of the ranking.
	Knob  string
	Share float64
	// BaselineUS is NCCL defaults' score (NaN when not measured).
	BaselineUS float64
	// Plans is what the search did with NCCL's own plan (nil when it
	// recorded nothing): configs merged into another are that one entry.
	Plans *store.PlanSummary
}

// Landscape builds the study's landscape figure.
func (s *Study) Landscape() (Landscape, error) {
	cs, err := s.ScoredConfigs()
	if err != nil {
		return Landscape{}, err
	}
	l := Landscape{Subject: s.Name() + ": " + string(s.Study.Op()), Configs: cs, Band: studiedText(s.Study),
		Score: stored.ScoreName(s.Study), BaselineUS: math.NaN(), Simulated: s.simulatedLine(), Plans: s.Study.Plans}
	for _, c := range cs {
		if c.Role == vocab.RoleBaseline && c.Scored() {
			l.BaselineUS = c.ScoreUS
		}
	}
	l.Knob, l.Share = mostImportantKnob(cs)
	return l, nil
}

// mostImportantKnob is the knob whose values (unset counting as one)
// explain the largest share of the spread of the configs' ranks by score:
// η² of the ranks. Ranks, so that one pathological config does not decide.
// "" when fewer than three configs are scored or no knob explains any.
func mostImportantKnob(cs []ScoredConfig) (string, float64) {
	var scored []ScoredConfig
	knobs := map[string]bool{}
	for _, c := range cs {
		if c.Scored() {
			scored = append(scored, c)
			for k := range c.Config {
				knobs[k] = true
			}
		}
	}
	if len(scored) < 3 {
		return "", 0
	}
	ranks := midRanks(scored)
	mean := float64(len(scored)+1) / 2
	total := 0.0
	for _, r := range ranks {
		total += (r - mean) * (r - mean)
	}
	if total == 0 {
		return "", 0
	}
	names := slices.Sorted(maps.Keys(knobs))
	best, share := "", 0.0
	for _, k := range names {
		sum, n := map[string]float64{}, map[string]int{}
		for i, c := range scored {
			v := c.Config[k]
			sum[v] += ranks[i]
			n[v]++
		}
		// In the values' order: a float sum in map order varies by run.
		between := 0.0
		for _, v := range slices.Sorted(maps.Keys(sum)) {
			m := sum[v] / float64(n[v])
			between += float64(n[v]) * (m - mean) * (m - mean)
		}
		if e := between / total; e > share+1e-12 {
			best, share = k, e
		}
	}
	return best, share
}

// midRanks ranks the configs by score from 1, ties sharing their mean rank.
func midRanks(cs []ScoredConfig) []float64 {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return cs[idx[a]].ScoreUS < cs[idx[b]].ScoreUS })
	ranks := make([]float64, len(cs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && cs[idx[j+1]].ScoreUS == cs[idx[i]].ScoreUS {
			j++
		}
		for k := i; k <= j; k++ {
			ranks[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return ranks
}

// WriteAt renders the figure as PNG at dpi dots per inch, or as SVG.
func (l Landscape) WriteAt(w io.Writer, format string, dpi int) error {
	return writeSheet(l.sheet, w, format, dpi)
}

// landscapeWidth is wider than the curves' figure: the configs' names
// are the y axis.
const landscapeWidth = 10 * vg.Inch

// rowLabel is a config's name on the y axis.
func (c ScoredConfig) rowLabel() string {
	s := c.Label
	if len(c.Equivalent) > 0 {
		s += fmt.Sprintf(" (+%d equivalent)", len(c.Equivalent))
	}
	switch {
	case c.MeasuredAs != "":
		s += "  (" + c.Role + "; measured as " + c.MeasuredAs + ")"
	case c.Role == "recommended" || c.Role == "confirmed":
		s += "  (" + c.Role + ")"
	case c.NoScore() == NoScoreFailed:
		s += "  (" + c.State + ")"
	case c.NoScore() != "":
		s += "  (" + c.NoScore() + ")"
	}
	return s
}

// valueColors gives each value of the knob a colour, unset first.
func (l Landscape) valueColors() (map[string]color.RGBA, []string) {
	var values []string
	for _, c := range l.Configs {
		if v := c.Config[l.Knob]; c.Scored() && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	sort.Slice(values, func(i, j int) bool { return valueLess(values[i], values[j]) })
	// Numbers (caps, counts) get an ordered ramp, so a small cap and a
	// large one read as the two ends; words get the categorical palette.
	set := slices.DeleteFunc(slices.Clone(values), func(v string) bool { return v == "" })
	numeric := !slices.ContainsFunc(set, func(v string) bool {
		_, err := strconv.Atoi(v)
		return err != nil
	})
	cols := map[string]color.RGBA{"": defaultsColor}
	for i, v := range set {
		if numeric && len(set) > 1 {
			cols[v] = ramp(float64(i) / float64(len(set)-1))
		} else {
			cols[v] = palette[i%(len(palette)-1)] // not black: the defaults are near-black
		}
	}
	return cols, values
}

func (l Landscape) sheet() (*sheet, error) {
	if len(l.Configs) == 0 {
		return nil, fmt.Errorf("nothing to plot: the study has no config")
	}
	n := len(l.Configs)
	cv := newCanvas()
	xLabel := l.Score + " (µs, log scale; lower is faster)"
	failedAt, err := l.axes(cv.p)
	if err != nil {
		return nil, err
	}
	if finite(l.BaselineUS) {
		rule := &vRule{X: l.BaselineUS, Style: draw.LineStyle{Color: defaultsColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}
		cv.mark(fmt.Sprintf("NCCL defaults' score, %s µs", formatValue(MetricTime, l.BaselineUS)), rule)
	}
	if err := l.drawConfigs(cv, failedAt); err != nil {
		return nil, err
	}
	legend := cv.legend
	if l.Knob == "" {
		legend = &legendRows{Legend: newLegend()}
	}
	dot := "Dot: the median of the config's launch band scores (each launch's geometric mean over the band of its per-size median times), all its launches pooled; NCCL defaults' and the confirmed config's are the verdict's score, from their confirmation launches."
	if l.Score != "band score" {
		dot = "Dot: the median of the config's " + l.Score + " over its rounds (one launch of each op, scored together as the search ranked them), all its rounds pooled; NCCL defaults' and the confirmed config's are the verdict's score, from their confirmation rounds."
	}
	caption := []string{
		dot,
		"Bar: the 95% confidence interval of that median from 6 launches, the min–max of the launches below that; a ring is a single launch (no interval: the winner's curse applies).",
		"The verdict does not come from this ranking but from the interleaved confirmation of one config against NCCL defaults (the speedup figure).",
	}
	height := vg.Length(n)*0.19*vg.Inch + 0.9*vg.Inch
	return &sheet{width: landscapeWidth, plotHeight: max(height, 2.5*vg.Inch), title: l.Subject + ": the search's landscape",
		subtitle: l.subtitle(), simulated: l.Simulated, plot: cv.p, xLabel: xLabel, leftPad: 0.15 * vg.Inch, legend: legend, caption: caption}, nil
}

// axes puts the scores on a log x axis and one row per config on y,
// best first (row i at y = n-1-i). It returns the x where configs without
// a score are marked.
func (l Landscape) axes(p *plot.Plot) (failedAt float64, err error) {
	n := len(l.Configs)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Tick.Label.Font = font.From(sans, 8.5)
	p.Y.Padding = vg.Points(4)
	xs := emptyRange()
	for _, c := range l.Configs {
		xs.add(c.ScoreUS, c.LoUS, c.HiUS)
	}
	if math.IsInf(xs.min, 0) {
		return 0, fmt.Errorf("nothing to plot: no config has a scored launch")
	}
	pad := math.Max(math.Pow(xs.max/xs.min, 0.05), 1.1)
	// Room at the right for the unscored configs' marks and the texts.
	p.X.Min, p.X.Max = xs.min/pad, xs.max*pad*3.2
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	var ticks []plot.Tick
	for i, c := range l.Configs {
		ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: c.rowLabel()})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	return xs.max * pad, nil
}

// valueSeries are the scored configs of one value of the knob: with an
// interval (filled, whiskers) and without (hollow).
type valueSeries struct {
	filled, hollow plotter.XYs
	wh             *whiskers
}

// drawConfigs draws each scored config in its knob value's colour with
// its score beside it, and the configs without a score at failedAt.
func (l Landscape) drawConfigs(cv *canvas, failedAt float64) error {
	n := len(l.Configs)
	cols, values := l.valueColors()
	unscored := map[string]plotter.XYs{}
	byValue := map[string]*valueSeries{}
	for _, v := range values {
		byValue[v] = &valueSeries{wh: &whiskers{Style: draw.LineStyle{Color: cols[v], Width: vg.Points(1.4)}, Cap: vg.Points(4)}}
	}
	var roles annotations
	for i, c := range l.Configs {
		y := float64(n - 1 - i)
		if why := c.NoScore(); why != "" {
			unscored[why] = append(unscored[why], plotter.XY{X: failedAt, Y: y})
			continue
		}
		sr := byValue[c.Config[l.Knob]]
		pt := plotter.XY{X: c.ScoreUS, Y: y}
		if finite(c.LoUS) && finite(c.HiUS) {
			sr.wh.Segs = append(sr.wh.Segs, [4]float64{c.LoUS, y, c.HiUS, y})
			sr.filled = append(sr.filled, pt)
		} else {
			sr.hollow = append(sr.hollow, pt)
		}
		sty := textStyle(8, color.Gray{Y: 0x44})
		sty.YAlign = draw.YCenter
		right := c.ScoreUS
		if finite(c.HiUS) {
			right = c.HiUS
		}
		roles = append(roles, annotation{X: right, Y: y, DX: vg.Points(6), Text: fmt.Sprintf("%s µs, %s", formatValue(MetricTime, c.ScoreUS), texttable.Plural(c.Launches, "launch")), Style: sty})
	}
	for _, v := range values {
		if err := l.drawValue(cv, v, byValue[v], cols[v]); err != nil {
			return err
		}
	}
	cv.p.Add(roles)
	for _, m := range noScoreMarks {
		if xys := unscored[m.why]; len(xys) > 0 {
			if err := cv.dots(xys, m.style, m.label); err != nil {
				return err
			}
		}
	}
	return nil
}

// noScoreMarks are the marks of the configs without a score, by why
// (ScoredConfig.NoScore): only a failure is red.
var noScoreMarks = []struct {
	why   string
	style draw.GlyphStyle
	label string
}{
	{NoScoreFailed, draw.GlyphStyle{Color: titleRed, Radius: vg.Points(4), Shape: draw.CrossGlyph{}},
		"failed, invalid or timed out: no score (never recommended)"},
	{NoScoreMerged, draw.GlyphStyle{Color: defaultsColor, Radius: vg.Points(3.5), Shape: draw.PyramidGlyph{}},
		"merged: its debug launch showed NCCL runs it like a config already tried, measured there"},
	{NoScoreUnmeasured, draw.GlyphStyle{Color: defaultsColor, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}},
		"not measured: proposed, never launched"},
}

// drawValue draws one knob value's configs, whiskers under dots.
func (l Landscape) drawValue(cv *canvas, v string, sr *valueSeries, col color.RGBA) error {
	name := l.Knob + "=" + v
	if v == "" {
		name = l.Knob + " unset (NCCL's choice)"
	}
	var thumbs []plot.Thumbnailer
	if len(sr.wh.Segs) > 0 {
		cv.p.Add(sr.wh)
		thumbs = append(thumbs, sr.wh)
	}
	for _, pts := range []struct {
		xys   plotter.XYs
		shape draw.GlyphDrawer
	}{{sr.filled, draw.CircleGlyph{}}, {sr.hollow, draw.RingGlyph{}}} {
		if len(pts.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: pts.shape}
		cv.p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	cv.legend.add(name, thumbs...)
	return nil
}

// subtitle says what is ranked, what the colour means and how much of
// the space the search explored.
func (l Landscape) subtitle() []string {
	colour := "one (no knob explains the spread)"
	if l.Knob != "" {
		colour = fmt.Sprintf("%s, the knob whose values explain most of the ranking (η² of ranks %.2f)", l.Knob, l.Share)
	}
	sub := []string{fmt.Sprintf("every config the search measured over %s, ranked by %s; colour: %s", l.Band, l.Score, colour)}
	if pl := l.Plans; pl != nil && pl.Read {
		line := fmt.Sprintf("the space holds %d configs; %d explored, %s", pl.SpaceConfigs, pl.ConfigsExplored, texttable.Plural(pl.PlansExplored, "distinct plan"))
		if pl.MergedConfigs > 0 {
			line += fmt.Sprintf("; %d more that NCCL runs like a config already tried are counted as that config, not drawn apart", pl.MergedConfigs)
		}
		sub = append(sub, line)
	}
	return sub
}

// valueLess orders a knob's values: unset first, numbers by value, then
// words as text.
func valueLess(a, b string) bool {
	if (a == "") != (b == "") {
		return a == ""
	}
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case (errA == nil) != (errB == nil):
		return errA == nil
	}
	return a < b
}

// rampStops are viridis' colours short of its yellow end, hard to see
// on white.
var rampStops = []color.RGBA{
	{R: 0x44, G: 0x01, B: 0x54, A: 0xff},
	{R: 0x3b, G: 0x52, B: 0x8b, A: 0xff},
	{R: 0x21, G: 0x91, B: 0x8c, A: 0xff},
	{R: 0x5e, G: 0xc9, B: 0x62, A: 0xff},
}

// ramp is the colour at t in [0, 1] along rampStops.
func ramp(t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t)) * float64(len(rampStops)-1)
	i := min(int(t), len(rampStops)-2)
	f := t - float64(i)
	a, b := rampStops[i], rampStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + f*(float64(y)-float64(x)))) }
	return color.RGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xff}
}
