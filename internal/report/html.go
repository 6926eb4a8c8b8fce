package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"size":     nccl.FormatSize,
	"mul100":   func(x float64) float64 { return 100 * x },
	"fmtTime":  func(x float64) string { return formatValue(MetricTime, x) },
	"fmtBW":    func(x float64) string { return formatValue(MetricBusBW, x) },
	"fmtRange": interval2,
}).Parse(pageTemplate))

// HTMLOptions shape a report page.
type HTMLOptions struct {
	// Now is when the report is made (zero: time.Now()).
	Now time.Time
	// Location is the time zone of the dates shown (nil: UTC).
	Location *time.Location
	// Exports are the recommendation in every export format, as the
	// caller rendered them; ExportError says why there are none.
	Exports     []ExportText
	ExportError string
}

// pageData is what the template fills in.
type pageData struct {
	Title     string
	Name      string
	Simulated string // banner text, empty for a real fabric
	Verdict   stored.Verdict
	Env       []string // the recommended env, one K=V a line
	Generated string

	// Figures are the study's pictures, inline SVG, in reading order.
	Figures []figureHTML
	// Chosen and Preferences say why the confirmed config was chosen over
	// configs that scored better.
	Chosen      *ScoredConfig
	Preferences []Preference

	// Compared are the per-size tables: one per op for a workload.
	Compared []comparisonHTML
	Curves   []Curve
	// Workload is nil for a one-part study that guarded no op.
	Workload *workloadHTML

	Choices []benchfmt.ChoiceRow

	Exports     []ExportText
	ExportError string

	Fabric   []stored.Field
	Settings []stored.Field
	Trials   []trialRow
	// TrialsScore is what the trials' scores are medians of.
	TrialsScore string
}

type note struct {
	Mark, Text string
}

// comparisonHTML is one comparison's per-size tables and their notes;
// Op names a workload's op (empty for a study of one part).
type comparisonHTML struct {
	Op         nccl.Op
	Heading    string
	Comparison *Comparison
	Tables     []Table
	Notes      []note
}

func comparisonOf(c *Comparison) comparisonHTML {
	h := comparisonHTML{Comparison: c, Tables: []Table{c.Table(MetricTime), c.Table(MetricBusBW)}}
	for i, n := range c.Notes {
		h.Notes = append(h.Notes, note{Mark: strings.TrimSpace(superscripts([]int{i + 1})), Text: n})
	}
	return h
}

// figureHTML is one figure of the page, or why it could not be drawn.
type figureHTML struct {
	ID, Title, Caption string
	SVG                template.HTML
	Error              string
}

// ExportText is the recommendation in one export format, or why that
// format could not be written.
type ExportText struct {
	Format, File, Text, Error string
}

type trialRow struct {
	// Trials are the trial numbers, several when configs were merged.
	Trials, Role, State string
	Launches            int
	// Score is the median launch score and Interval its interval, as the
	// landscape draws them.
	Score, Interval, Env, Reason string
	// Mark is "recommended", "baseline" or "confirmed".
	Mark string
}

// WriteHTML writes the study's report: one self-contained HTML page (no
// scripts, nothing loaded from anywhere) with the verdict, the figures,
// the per-size tables, NCCL's choices, the exports, the fabric, the
// settings and every trial.
func WriteHTML(w io.Writer, s *Study, opt HTMLOptions) error {
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	loc := cmp.Or(opt.Location, time.UTC)
	st := s.Study
	d := pageData{
		Title:       fmt.Sprintf("nccltune report: %s", st.Name),
		Name:        st.Name,
		Verdict:     stored.VerdictOf(st),
		Generated:   now.In(loc).Format("2006-01-02 15:04:05 MST"),
		Fabric:      s.FabricFacts(),
		Trials:      trialRows(s),
		TrialsScore: trialsScore(st),
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
	d.Settings = slices.DeleteFunc(stored.Settings(st, loc), func(f stored.Field) bool { return f.Key == "fabric" || f.Key == "study" })

	// Every comparison the page shows is built once (see compared).
	var whole compared
	var parts []compared
	for _, op := range s.WorkloadOps() {
		parts = append(parts, s.opCompared(op))
	}
	if parts == nil {
		whole = s.compared()
	}
	d.Figures = figures(s, whole, parts)
	d.Chosen, d.Preferences = s.WhyChosen()

	d.Workload = workloadSection(s)
	for _, v := range parts {
		if v.c != nil {
			h := comparisonOf(v.c)
			h.Op, h.Heading = v.op, opHeading(v.op, v.s.Study)
			d.Compared = append(d.Compared, h)
		}
	}
	if len(d.Compared) == 0 && parts != nil {
		// A workload none of whose ops compares: the study as a whole.
		whole = s.compared()
	}
	switch {
	case len(d.Compared) > 0:
		// Tabulated per op above.
	case whole.c != nil:
		d.Compared = []comparisonHTML{comparisonOf(whole.c)}
	default:
		for _, t := range s.Trials {
			if c, err := s.TrialCurve(t); err == nil {
				d.Curves = append(d.Curves, c)
			}
		}
	}

	defaults, recommended := stored.ExplainChoices(st, s.Trials, s.Launches)
	if len(defaults) > 0 || len(recommended) > 0 {
		d.Choices = benchfmt.CompareChoices(defaults, recommended)
	}

	d.Exports, d.ExportError = opt.Exports, opt.ExportError

	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		return fmt.Errorf("rendering the report of %s: %w", st.Name, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// trialsScore is what a trial's score in the trials table is the median
// of.
func trialsScore(st *store.Study) string {
	if !st.Parts().ScoredByRounds() {
		return "launch band scores (all its launches pooled)"
	}
	return stored.ScoreName(st) + " over its rounds (one launch of every op, scored together as the search ranked them; all its rounds pooled)"
}

// figures draws the study's figures for the page: what decided (bus
// bandwidth and time), the per-size speedup, and for a search its
// landscape and convergence; one that cannot be drawn says why. parts are
// a workload's ops (whole is then unused).
func figures(s *Study, whole compared, parts []compared) []figureHTML {
	type fig struct {
		id, title, caption string
		make               func() (Drawing, error)
	}
	var list []fig
	if parts != nil {
		for _, v := range parts {
			op := v.op
			title := opHeading(op, v.s.Study) + ": "
			list = append(list,
				fig{"fig-busbw-" + string(op), title + "bus bandwidth by message size", fmt.Sprintf("What decided for %s: its launches the part's verdict and its table use.", op),
					func() (Drawing, error) { return s.opFigure(v, MetricBusBW, false) }},
				fig{"fig-time-" + string(op), title + "time by message size", "The same launches as time per operation, on a log axis, where small messages and latency show.",
					func() (Drawing, error) { return s.opFigure(v, MetricTime, false) }})
			if v.c != nil {
				list = append(list, fig{"fig-speedup-" + string(op), title + "speedup by message size", "The part's per-size table as a picture: the speedup at each size with its interval, “~” where not significant.",
					func() (Drawing, error) { return v.opSpeedupFigure() }})
			}
		}
	} else {
		list = []fig{
			{"fig-busbw", "Bus bandwidth by message size", "What decided: the launches the verdict and the tables use.",
				func() (Drawing, error) { return whole.decisionFigure(MetricBusBW, false) }},
			{"fig-time", "Time by message size", "The same launches as time per operation, on a log axis, where small messages and latency show.",
				func() (Drawing, error) { return whole.decisionFigure(MetricTime, false) }},
		}
		if whole.c != nil {
			list = append(list, fig{"fig-speedup", "Speedup by message size", "The per-size table as a picture: the speedup at each size with its interval, “~” where not significant.",
				func() (Drawing, error) { return whole.speedupFigure() }})
		}
	}
	if s.Study.Kind == vocab.KindSearch && len(s.Study.Sizes) > 0 {
		landscape, convergence := "The search's landscape", "How the search converged"
		if ops := s.WorkloadOps(); ops != nil {
			landscape += " (each config's rounds, one launch of every op scored together)"
			convergence += " (each round at the launch that completed it, one launch of every op scored together)"
		}
		list = append(list,
			fig{"fig-landscape", landscape, "Every config the search measured, ranked by " + stored.ScoreName(s.Study) + " with its interval.",
				func() (Drawing, error) { return s.Landscape() }},
			fig{"fig-convergence", convergence, "The best config so far and NCCL defaults, launch by launch, and the confirmation that decided.",
				func() (Drawing, error) { return s.Convergence() }})
	}
	var out []figureHTML
	for _, f := range list {
		h := figureHTML{ID: f.id, Title: f.title, Caption: f.caption}
		d, err := f.make()
		if err == nil {
			var buf bytes.Buffer
			if err = d.WriteAt(&buf, FormatSVG, PNGDPI); err == nil {
				// Generated here; vgsvg escapes every text it draws.
				h.SVG = template.HTML(inlineSVG(buf.String(), f.title))
			}
		}
		if err != nil {
			h.Error = err.Error()
		}
		out = append(out, h)
	}
	return out
}

var (
	xmlProlog   = regexp.MustCompile(`(?s)<\?xml.*?\?>`)
	xmlComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	svgNSAttr   = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
	svgSizeAttr = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
)

// inlineSVG turns a standalone SVG document into an element for an HTML
// page: no XML prolog, comment or namespace declarations (the HTML parser
// adds the namespace), and a width that follows the page.
func inlineSVG(svg, label string) string {
	svg = xmlProlog.ReplaceAllString(svg, "")
	svg = xmlComment.ReplaceAllString(svg, "")
	svg = svgNSAttr.ReplaceAllString(svg, "")
	svg = svgSizeAttr.ReplaceAllString(svg, `<svg class="plot" role="img" aria-label="`+template.HTMLEscapeString(label)+`"`)
	return strings.TrimSpace(svg)
}

// trialRows lists the study's configs in the landscape's order; for a
// study with no band, its trials in order.
func trialRows(s *Study) []trialRow {
	cs, err := s.ScoredConfigs()
	if err != nil {
		var out []trialRow
		for _, t := range s.Trials {
			out = append(out, trialRow{Trials: strconv.Itoa(t.Number), Role: t.Role, State: string(t.State), Launches: t.Launches,
				Score: "—", Env: t.Config.String(), Reason: t.Reason})
		}
		return out
	}
	out := make([]trialRow, 0, len(cs))
	for _, c := range cs {
		nums := make([]string, len(c.Trials))
		for i, n := range c.Trials {
			nums[i] = strconv.Itoa(n)
		}
		r := trialRow{Trials: strings.Join(nums, ", "), Role: s.TrialByNumber(c.Trials[0]).Role, State: c.State,
			Launches: c.Launches, Score: "—", Env: c.Config.String(), Reason: c.Reason, Mark: c.Role}
		if r.Mark == r.Role {
			r.Mark = "" // "baseline (baseline)" says it twice
		}
		if c.Role == vocab.RoleBaseline {
			r.Mark = "baseline"
			r.Role = ""
		}
		if len(c.Equivalent) > 0 {
			r.Env += " (same plan as " + strings.Join(c.Equivalent, "; ") + ")"
		}
		if c.Scored() {
			r.Score = formatValue(MetricTime, c.ScoreUS)
			r.Interval = c.Interval
			if finite(c.LoUS) && finite(c.HiUS) {
				r.Interval = interval2(MetricTime, c.LoUS, c.HiUS) + " " + c.Interval
			}
		}
		out = append(out, r)
	}
	return out
}
