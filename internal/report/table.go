package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// Comparison is the benchstat-style comparison of a study's baseline
// with the config it confirmed, size by size.
type Comparison struct {
	Study string `json:"study"`
	// Simulated is "SIMULATED (profile)" for a simulated study, else "".
	Simulated string `json:"simulated,omitempty"`
	Baseline  Arm    `json:"baseline"`
	Candidate Arm    `json:"candidate"`
	// Launches is "confirmation" (the interleaved launches the decision
	// used) or "all" (no confirmation was run).
	Launches string `json:"launches"`
	// Confidence is the intervals' coverage (0.95); Alpha the per-size
	// tests' significance level.
	Confidence float64 `json:"confidence"`
	Alpha      float64 `json:"alpha"`
	// BusBWFactor converts times to bus bandwidth (see Study.BusBWFactor).
	BusBWFactor float64         `json:"busbw_factor"`
	Rows        []ComparisonRow `json:"rows"`
	// Band is each arm's band score and the study's band verdict; nil when
	// a band size was not measured by both or the study decided no band
	// score (summarised).
	Band *stored.BandComparison `json:"band"`
	// Notes are the footnotes, numbered from 1.
	Notes []string `json:"notes"`
}

// Arm is one side of a Comparison.
type Arm struct {
	Label    string      `json:"label"`
	Env      nccl.Config `json:"env"`
	Trial    int         `json:"trial"`
	Launches int         `json:"launches"`
	// Notes are footnote numbers about the arm as a whole (outliers).
	Notes []int `json:"notes,omitempty"`
}

// ComparisonRow is one message size: the row compared (the one-part
// study's stored row, else the launches' own) and what the table adds. A
// change that is not significant is shown as "~".
type ComparisonRow struct {
	store.SizeComparison
	// Guard is true for a guard size: compared for regressions, not scored.
	Guard bool
	// BaselineNotes and CandidateNotes are footnote numbers on each arm's
	// cell.
	BaselineNotes, CandidateNotes []int
}

// Compare builds the study's comparison table, or returns nil when the
// study has no baseline, or no confirmed or recommended config, with
// launches to compare.
func (s *Study) Compare() *Comparison {
	base, cand := s.Baseline(), s.Candidate()
	if base == nil || cand == nil || base.ID == cand.ID {
		return nil
	}
	bl, cl, which := s.comparedLaunches(base, cand)
	if len(bl) == 0 || len(cl) == 0 {
		return nil
	}
	opt := stored.StatsOf(s.Study)
	label, measuredAs := s.labelOf(cand)
	c := &Comparison{Study: s.Name(), Simulated: simulatedLabel(s.Study), Launches: which,
		Confidence: opt.Confidence, Alpha: opt.Alpha, BusBWFactor: s.BusBWFactor(),
		Baseline:  Arm{Label: ConfigLabel(base.Config), Env: base.Config.Clone(), Trial: base.Number, Launches: len(bl)},
		Candidate: Arm{Label: label, Env: cand.Config.Clone(), Trial: cand.Number, Launches: len(cl)}}
	band := s.bandSizes(bl, cl)
	notes := &footnotes{}
	if measuredAs != "" {
		c.Candidate.Notes = appendNote(c.Candidate.Notes, notes.add(fmt.Sprintf(
			"%s was measured as %s: the exports leave the rest out (nccltune show says why)", label, measuredAs)))
	}
	rows := s.decidedRows(cand, which)
	if rows == nil {
		rows = s.LaunchStats.CompareSizes(s.Study, bl, cl, append(slices.Clone(band), s.Study.GuardSizes...))
	}
	bandMeasured := c.addRows(rows, band)
	if len(bandMeasured) == len(band) && len(band) > 0 && s.summarised(cand, which) {
		b, caveats := s.LaunchStats.CompareBand(s.Study, bl, cl, band)
		c.Band = &b
		for _, n := range caveats {
			notes.add(n)
		}
		if d := s.decidedBand(cand, which); d != nil {
			// As stored: the confirmation may have judged at a sequential
			// look's level, which the launches alone do not tell. Scores
			// it did not record stay the launches' own.
			if !(d.BaselineUS > 0 && d.CandidateUS > 0) {
				d.BaselineUS, d.CandidateUS = c.Band.BaselineUS, c.Band.CandidateUS
			}
			c.Band = d
		}
	}
	var rowSizes []int64
	for _, r := range c.Rows {
		rowSizes = append(rowSizes, r.Bytes)
	}
	c.noteWarnings(0, &c.Baseline, s.LaunchStats.ArmNotes(s.Study, c.Baseline.Label, bl, rowSizes), notes)
	c.noteWarnings(1, &c.Candidate, s.LaunchStats.ArmNotes(s.Study, c.Candidate.Label, cl, rowSizes), notes)
	c.Notes = notes.texts
	return c
}

// compared is a study, or op's view of it (OpStudy), with its comparison
// (nil when none) built once: Compare reruns every test, and one render
// shows it in several figures and a table.
type compared struct {
	s *Study
	// op is the workload's op s is the view of; "" for the whole study.
	op nccl.Op
	// c is s.Compare(): nil when s has nothing to compare.
	c *Comparison
}

func (s *Study) compared() compared { return compared{s: s, c: s.Compare()} }

func (s *Study) opCompared(op nccl.Op) compared {
	v := s.OpStudy(op)
	return compared{s: v, op: op, c: v.Compare()}
}

// bandSizes are the table's band sizes: the study's band or, for a study
// that named none (an import), every size both arms measured.
func (s *Study) bandSizes(bl, cl []*store.Launch) []int64 {
	band := slices.Clone(s.Study.Sizes)
	if s.Study.Parts().ScoredByRounds() {
		// A workload's table is its first op's (TrialLaunches).
		band = s.Study.Parts().Sizes(s.Study.Op())
	}
	if len(band) == 0 {
		cs := stored.MeasuredSizes(cl)
		for _, b := range stored.MeasuredSizes(bl) {
			if slices.Contains(cs, b) {
				band = append(band, b)
			}
		}
	}
	return band
}

// addRows adds one row per size the rows compare, the band's then the
// guards'; it returns the band sizes that got a row.
func (c *Comparison) addRows(rows []store.SizeComparison, band []int64) (bandMeasured []int64) {
	for _, r := range rows {
		row := ComparisonRow{SizeComparison: r, Guard: !slices.Contains(band, r.Bytes)}
		c.Rows = append(c.Rows, row)
		if !row.Guard {
			bandMeasured = append(bandMeasured, r.Bytes)
		}
	}
	return bandMeasured
}

// decided is the study's stored decision when the comparison shows its
// confirmation launches, else nil.
func (s *Study) decided(cand *store.Trial, which string) *store.Recommendation {
	r := s.Study.Recommendation
	if r == nil || which != PhaseConfirmation || r.BaselineLaunches == 0 || r.CandidateLaunches == 0 ||
		(r.CandidateTrialID != 0 && r.CandidateTrialID != cand.ID) {
		return nil
	}
	return r
}

// decidedRows are a one-part study's per-size rows as stored (band, then
// guards), when the comparison shows that decision. Nil otherwise, and for
// rows stored before they held each arm's launches, whose missing
// intervals hold the median: the table then compares the launches itself.
func (s *Study) decidedRows(cand *store.Trial, which string) []store.SizeComparison {
	r := s.decided(cand, which)
	if r == nil || len(r.Parts) > 0 || len(r.PerSize) == 0 {
		return nil
	}
	rows := append(slices.Clone(r.PerSize), r.Guards...)
	for _, row := range rows {
		if row.BaselineLaunches == 0 || row.CandidateLaunches == 0 {
			return nil
		}
	}
	return rows
}

// summarised reports whether the table has a band row: only a score the
// study decided on. A timed workload of several calls is judged per call
// and by its time per step; an op (OpStudy) of a workload has one only
// where the study decided that op's one part. A geomean over several
// calls or parts is a score no decision used.
func (s *Study) summarised(cand *store.Trial, which string) bool {
	w, r := s.Study.Parts(), s.Study.Recommendation
	switch {
	// A decision with parts: the study was a workload, whatever this view.
	case w.Timed() && (w.ScoredByRounds() || r != nil && len(r.Parts) > 0):
		return false
	case w.ScoredByRounds():
		return s.decidedBand(cand, which) != nil
	}
	return true
}

// decidedBand is the band row as the study decided it, when the
// comparison shows that decision over the study's (or this op's) one
// part; nil otherwise.
func (s *Study) decidedBand(cand *store.Trial, which string) *stored.BandComparison {
	r := s.decided(cand, which)
	if r == nil {
		return nil
	}
	if len(r.Parts) == 0 {
		return &stored.BandComparison{BaselineUS: r.BaselineScoreUS, CandidateUS: r.ScoreUS, Speedup: r.Speedup,
			Lo: r.SpeedupCI[0], Hi: r.SpeedupCI[1], CILevel: r.CILevel, P: r.PValue, Significant: r.Significant}
	}
	parts, _ := s.partsOf(s.Study.Op())
	if len(parts) != 1 {
		return nil
	}
	p := parts[0]
	return &stored.BandComparison{BaselineUS: p.BaselineScoreUS, CandidateUS: p.ScoreUS, Speedup: p.Speedup,
		Lo: p.SpeedupCI[0], Hi: p.SpeedupCI[1], CILevel: p.CILevel, P: p.PValue, Significant: p.Significant}
}

// noteWarnings footnotes one arm's caveats (side 0 the baseline, 1 the
// candidate): on the cells a note names, else on the arm.
func (c *Comparison) noteWarnings(side int, arm *Arm, armNotes []stored.ArmNote, notes *footnotes) {
	for _, an := range armNotes {
		n := notes.add(an.Text)
		if an.OnArm {
			arm.Notes = appendNote(arm.Notes, n)
		} else {
			c.markCells(side, an.Cells, n)
		}
	}
}

func (c *Comparison) markCells(side int, sizes []int64, n int) {
	for i := range c.Rows {
		if !slices.Contains(sizes, c.Rows[i].Bytes) {
			continue
		}
		notes := &c.Rows[i].BaselineNotes
		if side == 1 {
			notes = &c.Rows[i].CandidateNotes
		}
		*notes = appendNote(*notes, n)
	}
}

func appendNote(ns []int, n int) []int {
	if slices.Contains(ns, n) {
		return ns
	}
	return append(ns, n)
}

// footnotes numbers distinct texts from 1.
type footnotes struct{ texts []string }

func (f *footnotes) add(text string) int {
	if i := slices.Index(f.texts, text); i >= 0 {
		return i + 1
	}
	f.texts = append(f.texts, text)
	return len(f.texts)
}

// Metrics a comparison table can show.
const (
	MetricTime  = "time"
	MetricBusBW = "busbw"
)

// Table is a comparison laid out for one metric as strings, for the text
// and the HTML.
type Table struct {
	Metric                      string
	Unit                        string // "time µs" or "busbw GB/s"
	BaselineHead, CandidateHead string // the arms' names, with their notes
	Rows                        []TableRow
}

// TableRow is one line of a Table.
type TableRow struct {
	Name                        string // "512K", "8M guard", "band geomean"
	Baseline                    string // "537.2 ± 42%", "1150 ± ∞"
	Candidate                   string
	BaselineNote, CandidateNote string // footnote marks (" ¹")
	Change                      string // "-73.70% (p=0.002 n=6)", "~ (p=0.394 n=6)"
	// Significant is false for a "~" row; Guard marks guard sizes;
	// Summary the band geomean row; Better a significant change that
	// favours the candidate.
	Significant, Guard, Summary, Better bool
}

// Table lays the comparison out for a metric: time (lower is better) or
// busbw (higher is better).
func (c *Comparison) Table(metric string) Table {
	t := Table{Metric: metric, Unit: "time µs",
		BaselineHead:  c.Baseline.Label + superscripts(c.Baseline.Notes),
		CandidateHead: c.Candidate.Label + superscripts(c.Candidate.Notes)}
	if metric == MetricBusBW {
		t.Unit = "busbw GB/s"
	}
	for _, r := range c.Rows {
		name := nccl.FormatSize(r.Bytes)
		if r.Guard {
			name += " guard"
		}
		tr := TableRow{Name: name, Significant: r.Significant, Guard: r.Guard,
			Baseline:     c.cell(metric, r.Bytes, r.BaselineUS, r.BaselineLo, r.BaselineHi),
			Candidate:    c.cell(metric, r.Bytes, r.CandidateUS, r.CandidateLo, r.CandidateHi),
			BaselineNote: superscripts(r.BaselineNotes), CandidateNote: superscripts(r.CandidateNotes),
			Better: r.Significant && r.Change() < 0}
		tr.Change = changeText(metric, r.Change(), r.Significant, r.PValue, r.BaselineLaunches, r.CandidateLaunches)
		t.Rows = append(t.Rows, tr)
	}
	if c.Band != nil {
		br := TableRow{Name: "band geomean", Summary: true, Significant: c.Band.Significant,
			Better: c.Band.Significant && c.Band.Speedup > 1}
		change := c.Band.CandidateUS/c.Band.BaselineUS - 1
		if metric == MetricBusBW {
			// The band's geometric-mean size moved in the band score's
			// time, so its change is exactly the time row's, inverted.
			var logs float64
			n := 0
			for _, r := range c.Rows {
				if !r.Guard {
					logs += math.Log(float64(r.Bytes))
					n++
				}
			}
			size := math.Exp(logs / float64(n))
			bw := func(us float64) float64 { return busBW(c.BusBWFactor, 1, us) * size }
			br.Baseline, br.Candidate = formatValue(metric, bw(c.Band.BaselineUS)), formatValue(metric, bw(c.Band.CandidateUS))
			br.Change = percent(1/(1+change) - 1)
		} else {
			br.Baseline, br.Candidate = formatValue(metric, c.Band.BaselineUS), formatValue(metric, c.Band.CandidateUS)
			br.Change = percent(change)
		}
		if !math.IsNaN(c.Band.Lo) && !math.IsNaN(c.Band.Hi) {
			br.Change += " (speedup " + stored.SpeedupText(c.Band.Speedup, [2]float64{c.Band.Lo, c.Band.Hi}) + ")"
		}
		t.Rows = append(t.Rows, br)
	}
	return t
}

// cell is "median ± x%", or "median ± ∞" without an interval.
func (c *Comparison) cell(metric string, b int64, center, lo, hi float64) string {
	if metric == MetricBusBW {
		center, lo, hi = busBW(c.BusBWFactor, b, center), busBW(c.BusBWFactor, b, hi), busBW(c.BusBWFactor, b, lo)
	}
	s := formatValue(metric, center) + " ± "
	if math.IsNaN(lo) || math.IsNaN(hi) {
		s += "∞"
	} else {
		// As benchstat: the larger distance from the center to an end of
		// the interval, relative to the center.
		s += fmt.Sprintf("%.0f%%", 100*math.Max(hi-center, center-lo)/center)
	}
	return s
}

// changeText is benchstat's "vs base" column.
func changeText(metric string, change float64, significant bool, p float64, nb, nc int) string {
	n := strconv.Itoa(nb)
	if nb != nc {
		n += "+" + strconv.Itoa(nc)
	}
	pn := fmt.Sprintf("(p=%.3f n=%s)", p, n)
	if !significant {
		return "~ " + pn
	}
	if metric == MetricBusBW {
		change = 1/(1+change) - 1
	}
	return percent(change) + " " + pn
}

func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*x)
}

func formatValue(metric string, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?"
	case metric == MetricBusBW && v < 10:
		return fmt.Sprintf("%.3f", v)
	case metric == MetricBusBW:
		return fmt.Sprintf("%.2f", v)
	case v >= 10000:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

var superDigits = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")

// superscripts writes footnote numbers as " ¹ ²".
func superscripts(ns []int) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteByte(' ')
		for _, d := range strconv.Itoa(n) {
			b.WriteRune(superDigits[d-'0'])
		}
	}
	return b.String()
}

// WriteText prints the comparison as benchstat does: one table per
// metric (time, then bus bandwidth), then the footnotes.
func (c *Comparison) WriteText(w io.Writer) error {
	what := "interleaved confirmation launches"
	if c.Launches != "confirmation" {
		what = "all successful launches (no confirmation was run)"
	}
	head := fmt.Sprintf("%s: %s", c.Study, what)
	if c.Simulated != "" {
		head += ", " + c.Simulated
	}
	head += fmt.Sprintf("\nmedian over launches ± %.0f%% confidence interval; ~ = no significant difference (p ≥ %g)\n", 100*c.Confidence, c.Alpha)
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	for i, metric := range []string{MetricTime, MetricBusBW} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeTableText(w, c.Table(metric)); err != nil {
			return err
		}
	}
	if len(c.Notes) > 0 {
		fmt.Fprintln(w)
	}
	for i, n := range c.Notes {
		if _, err := fmt.Fprintf(w, "%s %s\n", strings.TrimSpace(superscripts([]int{i + 1})), n); err != nil {
			return err
		}
	}
	return nil
}

// writeTableText lays a Table out with benchstat's box-drawing header;
// not with tabwriter, which cannot right-align the medians inside
// left-aligned columns or centre each heading over its columns:
//
//	      │ NCCL defaults │   NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128   │
//	      │    time µs    │   time µs     vs base                      │
//	512K    537.2 ± 42%     141.3 ± 27%  -73.70% (p=0.002 n=6)
func writeTableText(w io.Writer, t Table) error {
	// A value cell: the median (right-aligned), "± x%" and the notes.
	type parts struct{ center, pm, note string }
	split := func(v, note string) parts {
		c, pm, _ := strings.Cut(v, " ± ")
		if pm != "" {
			pm = "± " + pm
		}
		return parts{c, pm, note}
	}
	var base, cand []parts
	nameW, chW := 0, texttable.Width("vs base")
	var bw, cw [3]int
	for _, r := range t.Rows {
		nameW = max(nameW, texttable.Width(r.Name))
		chW = max(chW, texttable.Width(r.Change))
		b, c := split(r.Baseline, r.BaselineNote), split(r.Candidate, r.CandidateNote)
		base, cand = append(base, b), append(cand, c)
		bw = [3]int{max(bw[0], texttable.Width(b.center)), max(bw[1], texttable.Width(b.pm)), max(bw[2], texttable.Width(b.note))}
		cw = [3]int{max(cw[0], texttable.Width(c.center)), max(cw[1], texttable.Width(c.pm)), max(cw[2], texttable.Width(c.note))}
	}
	cellW := func(w [3]int) int { return w[0] + 1 + w[1] + w[2] }
	// Widen the first part so the headings fit.
	if d := max(texttable.Width(t.Unit), texttable.Width(t.BaselineHead)) - cellW(bw); d > 0 {
		bw[0] += d
	}
	if d := texttable.Width(t.Unit) - cellW(cw); d > 0 {
		cw[0] += d
	}
	// The candidate's heading spans its value and change columns.
	span := cellW(cw) + 2 + chW
	if d := texttable.Width(t.CandidateHead) - span; d > 0 {
		chW += d
		span += d
	}
	cell := func(p parts, w [3]int) string {
		return texttable.PadLeft(p.center, w[0]) + " " + texttable.PadRight(p.pm, w[1]) + texttable.PadRight(p.note, w[2])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s │ %s │ %s │\n", texttable.PadRight("", nameW), texttable.Center(t.BaselineHead, cellW(bw)), texttable.Center(t.CandidateHead, span))
	fmt.Fprintf(&b, "%s │ %s │ %s  %s │\n", texttable.PadRight("", nameW), texttable.Center(t.Unit, cellW(bw)), texttable.Center(t.Unit, cellW(cw)), texttable.PadRight("vs base", chW))
	for i, r := range t.Rows {
		line := fmt.Sprintf("%s   %s   %s  %s", texttable.PadRight(r.Name, nameW), cell(base[i], bw), cell(cand[i], cw), r.Change)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MarshalJSON writes each arm's cell as an object, and an unknown
// number as null.
func (r ComparisonRow) MarshalJSON() ([]byte, error) {
	type f = store.JSONFloat
	type arm struct {
		TimeUS   f     `json:"time_us"`
		TimeLoUS f     `json:"time_lo_us"`
		TimeHiUS f     `json:"time_hi_us"`
		Launches int   `json:"launches"`
		Notes    []int `json:"notes,omitempty"`
	}
	return json.Marshal(struct {
		Bytes       int64 `json:"bytes"`
		Guard       bool  `json:"guard"`
		Baseline    arm   `json:"baseline"`
		Candidate   arm   `json:"candidate"`
		Change      f     `json:"change"`
		P           f     `json:"p"`
		Significant bool  `json:"significant"`
		Speedup     f     `json:"speedup"`
		SpeedupLo   f     `json:"speedup_lo"`
		SpeedupHi   f     `json:"speedup_hi"`
	}{r.Bytes, r.Guard, arm{f(r.BaselineUS), f(r.BaselineLo), f(r.BaselineHi), r.BaselineLaunches, r.BaselineNotes},
		arm{f(r.CandidateUS), f(r.CandidateLo), f(r.CandidateHi), r.CandidateLaunches, r.CandidateNotes},
		f(r.Change()), f(r.PValue), r.Significant, f(r.Speedup), f(r.SpeedupLo), f(r.SpeedupHi)})
}
