package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/nccltune/nccltune/export"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"size":     nccl.FormatSize,
	"mul100":   func(x float64) float64 { return 100 * x },
	"fmtTime":  func(x float64) string { return formatValue(MetricTime, x) },
	"fmtBW":    func(x float64) string { return formatValue(MetricBusBW, x) },
	"fmtRange": func(metric string, lo, hi float64) string { return interval2(metric, lo, hi) },
}).Parse(pageTemplate))

// HTMLOptions shape a report page.
type HTMLOptions struct {
	// Now is when the report is made: shown in its footer and in the
	// export headers (zero: time.Now()).
	Now time.Time
	// Location is the time zone of the dates shown (nil: UTC).
	Location *time.Location
}

// pageData is what the template fills in.
type pageData struct {
	Title     string
	Name      string
	Simulated string // banner text, empty for a real fabric
	Verdict   Verdict
	Env       []string // the recommended env, one K=V a line
	Generated string

	Plot      template.HTML // inline SVG
	PlotError string

	Comparison *Comparison
	Tables     []Table
	Notes      []note
	Curves     []Curve

	Choices     []export.ChoiceRow
	ChoicesText string

	Exports     []exportText
	ExportError string

	Fabric   []Field
	Settings []Field
	Trials   []trialRow
}

type note struct {
	Mark, Text string
}

// exportText is the recommendation in one export format, or why that
// format could not be written.
type exportText struct {
	Format, File, Text, Error string
}

type trialRow struct {
	Number   int
	Role     string
	State    string
	Launches int
	Score    string
	Env      string
	Reason   string
	// Mark is "recommended", "baseline" or "confirmed" for the rows the
	// reader looks for first.
	Mark string
}

// WriteHTML writes the study's report: one self-contained HTML page (CSS
// inline, the plot inline as SVG, no scripts, nothing loaded from
// anywhere) with the verdict, the plot, the per-size tables, NCCL's
// choices, the recommendation in every export format, the fabric, the
// settings and every trial. A simulated study carries a SIMULATED banner.
func WriteHTML(w io.Writer, s *Study, opt HTMLOptions) error {
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	loc := opt.Location
	if loc == nil {
		loc = time.UTC
	}
	st := s.Study
	d := pageData{
		Title:     fmt.Sprintf("nccltune report: %s", st.Name),
		Name:      st.Name,
		Verdict:   VerdictOf(st),
		Generated: now.In(loc).Format("2006-01-02 15:04:05 MST"),
		Fabric:    FabricFacts(st.Fabric),
		Trials:    trialRows(s),
	}
	if st.Simulated {
		d.Title += " (SIMULATED)"
		d.Simulated = "SIMULATED fabric"
		if st.Launch.SimProfile != "" {
			d.Simulated += " (profile " + st.Launch.SimProfile + ")"
		}
		d.Simulated += ": every number here comes from nccltune's simulator, not from real hardware. It demonstrates the method; it measures nothing."
	}
	if d.Verdict.Change {
		d.Env = nccl.Config(st.Recommendation.Env).Env()
	}
	for _, f := range Settings(st, loc) {
		if f.Key != "fabric" && f.Key != "study" {
			d.Settings = append(d.Settings, f)
		}
	}

	svg, err := plotSVG(s)
	if err != nil {
		d.PlotError = err.Error()
	} else {
		d.Plot = template.HTML(svg) // generated here; vgsvg escapes every text it draws
	}

	if c := s.Compare(); c != nil {
		d.Comparison = c
		d.Tables = []Table{c.Table(MetricTime), c.Table(MetricBusBW)}
		for i, n := range c.Notes {
			d.Notes = append(d.Notes, note{Mark: strings.TrimSpace(superscripts([]int{i + 1})), Text: n})
		}
	} else {
		for _, t := range s.Trials {
			if c, err := s.TrialCurve(t); err == nil {
				d.Curves = append(d.Curves, c)
			}
		}
	}

	defaults, recommended := export.ExplainChoices(st, s.Trials, s.Launches)
	if len(defaults) > 0 || len(recommended) > 0 {
		d.Choices = export.CompareChoices(defaults, recommended)
	}

	d.Exports, d.ExportError = exports(s, now)

	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		return fmt.Errorf("rendering the report of %s: %w", st.Name, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// exports writes the recommendation in every export format. A study that
// cannot be exported (not a finished search) gets one explanation instead;
// a format that cannot be written (the tuner CSV needs NCCL's recorded
// choices) says why in its place.
func exports(s *Study, now time.Time) ([]exportText, string) {
	band, err := export.NewBand(s.Study, s.Trials, s.Launches)
	if err != nil {
		return nil, err.Error()
	}
	var out []exportText
	for _, f := range export.Formats {
		e := exportText{Format: string(f), File: export.FileName(f, band)}
		var buf bytes.Buffer
		if err := export.Write(&buf, f, []*export.Band{band}, export.Options{Now: now}); err != nil {
			e.Error = err.Error()
			if errors.Is(err, export.ErrNoChoices) {
				e.Error += " (run the search again to record NCCL's choices)"
			}
		} else {
			e.Text = buf.String()
		}
		out = append(out, e)
	}
	return out, ""
}

// plotSVG draws the study's figure (baseline and confirmed config, or
// every trial of a sweep or import) as SVG ready to sit inside HTML.
func plotSVG(s *Study) (string, error) {
	var trials []*store.Trial
	if s.Study.Kind == store.KindSearch {
		for _, t := range []*store.Trial{s.Baseline(), s.Candidate()} {
			if t != nil {
				trials = append(trials, t)
			}
		}
	} else {
		trials = s.Trials
	}
	var curves []Curve
	for _, t := range trials {
		if c, err := s.TrialCurve(t); err == nil {
			curves = append(curves, c)
		}
	}
	if len(curves) == 0 {
		return "", fmt.Errorf("no successful launch to plot yet")
	}
	var buf bytes.Buffer
	if err := NewFigure(curves, s).WriteSVG(&buf); err != nil {
		return "", err
	}
	return inlineSVG(buf.String()), nil
}

var (
	xmlProlog   = regexp.MustCompile(`(?s)<\?xml.*?\?>`)
	xmlComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	svgNSAttr   = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
	svgSizeAttr = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
)

// inlineSVG turns a standalone SVG document into an element for an HTML
// page: no XML prolog or comment, no namespace declarations (the HTML
// parser puts <svg> in its namespace itself, and the page then names no
// URL at all), and a width that follows the page.
func inlineSVG(svg string) string {
	svg = xmlProlog.ReplaceAllString(svg, "")
	svg = xmlComment.ReplaceAllString(svg, "")
	svg = svgNSAttr.ReplaceAllString(svg, "")
	svg = svgSizeAttr.ReplaceAllString(svg, `<svg class="plot" role="img" aria-label="bus bandwidth against message size"`)
	return strings.TrimSpace(svg)
}

func trialRows(s *Study) []trialRow {
	base, cand := s.Baseline(), s.Candidate()
	out := make([]trialRow, 0, len(s.Trials))
	for _, t := range s.Trials {
		r := trialRow{Number: t.Number, Role: t.Role, State: t.State, Launches: t.Launches,
			Score: "—", Env: t.Config.String(), Reason: t.Reason}
		if t.ScoreUS > 0 {
			r.Score = fmt.Sprintf("%.1f", t.ScoreUS)
		}
		switch {
		case cand != nil && t.ID == cand.ID && s.Recommended():
			r.Mark = "recommended"
		case cand != nil && t.ID == cand.ID:
			r.Mark = "confirmed"
		case base != nil && t.ID == base.ID:
			r.Mark = "baseline"
		}
		out = append(out, r)
	}
	return out
}
