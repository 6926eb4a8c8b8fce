package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/nccltune/nccltune/internal/launchstats"
	"github.com/nccltune/nccltune/internal/report"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// The figures plot draws.
const (
	figureCurves      = "curves"
	figureSpeedup     = "speedup"
	figureLandscape   = "landscape"
	figureConvergence = "convergence"
)

// figureKinds are the figures, in the order --figure lists them.
var figureKinds = []string{figureCurves, figureSpeedup, figureLandscape, figureConvergence}

// allHighlight is how many configs besides NCCL defaults and the
// confirmed one --all draws in colour; the rest are grey.
const allHighlight = 5

// plotTarget is one argument of plot: a study, or one trial of it.
type plotTarget struct {
	Study string // the study's name, number or sN
	Trial int    // -1 for the bare study
}

func parseTarget(arg string) (plotTarget, error) {
	t := plotTarget{Study: arg, Trial: -1}
	if i := strings.LastIndex(arg, "/"); i >= 0 {
		n, err := strconv.Atoi(arg[i+1:])
		if err != nil || n < 0 || i == 0 {
			return t, vocab.UsageErrorf("%q is not STUDY or STUDY/TRIAL: the trial is its number, e.g. s3-512K-4M/7", arg)
		}
		t.Study, t.Trial = arg[:i], n
	}
	return t, nil
}

// curvesOptions shape the curves figure (--metric, --all, --explore);
// Warn hears of trials left out.
type curvesOptions struct {
	Metric       string // report.MetricBusBW or report.MetricTime
	All, Explore bool
	Warn         io.Writer
}

// loadCurves loads the studies that args name from the database at path
// and makes the curves figure of them: for one bare study, the figure of
// what decided; otherwise the curves of the trials named, in the order
// named, each once. It returns the studies drawn.
func loadCurves(path string, args []string, o curvesOptions) (report.Drawing, []*report.Study, error) {
	var targets []plotTarget
	var queries []string
	for _, a := range args {
		t, err := parseTarget(a)
		if err != nil {
			return report.Figure{}, nil, err
		}
		targets = append(targets, t)
		if !slices.Contains(queries, t.Study) {
			queries = append(queries, t.Study)
		}
	}
	loaded, err := stored.Load(path, queries, stored.ReviewLoad)
	if err != nil {
		return report.Figure{}, nil, err
	}
	byQuery := map[string]*report.Study{}
	for i, q := range queries {
		byQuery[q] = report.Of(loaded[i], launchstats.Figures{})
	}
	if len(targets) == 1 && targets[0].Trial < 0 && !o.All {
		s := byQuery[targets[0].Study]
		var d report.Drawing
		if s.WorkloadOps() != nil {
			d, err = s.OpPanels(o.Metric, o.Explore)
		} else {
			d, err = s.DecisionFigure(o.Metric, o.Explore)
		}
		if err != nil {
			return report.Figure{}, nil, err
		}
		return d, []*report.Study{s}, nil
	}
	curves, studies, err := targetCurves(targets, byQuery, o)
	if err != nil {
		return report.Figure{}, nil, err
	}
	if len(curves) == 0 {
		verb := "have"
		if len(args) == 1 {
			verb = "has"
		}
		return report.Figure{}, nil, fmt.Errorf("nothing to plot: %s %s no successful launch yet — run or resume the study first",
			strings.Join(args, " "), verb)
	}
	fig := report.NewFigure(curves, studies...)
	fig.Metric = o.Metric
	if o.All {
		fig.Subtitle = []string{"every config, all its launches pooled (exploration included): context, not the verdict"}
	}
	return fig, studies, nil
}

// loadStudyFigure loads the study arg names and makes its figure of the
// kind given (speedup, landscape or convergence).
func loadStudyFigure(path, arg, kind string) (report.Drawing, *report.Study, error) {
	t, err := parseTarget(arg)
	if err != nil {
		return nil, nil, err
	}
	if t.Trial >= 0 {
		return nil, nil, vocab.UsageErrorf("--figure %s draws a whole study: name it without /TRIAL (%s)", kind, t.Study)
	}
	one, err := stored.LoadOne(path, t.Study)
	if err != nil {
		return nil, nil, err
	}
	s := report.Of(one, launchstats.Figures{})
	var fig report.Drawing
	switch kind {
	case figureSpeedup:
		if s.WorkloadOps() != nil {
			fig, err = s.OpSpeedupPanels() // one panel per op
			break
		}
		fig, err = s.SpeedupFigure()
	case figureLandscape:
		fig, err = s.Landscape()
	default: // figureConvergence: plot's Action refused any other kind
		fig, err = s.Convergence()
	}
	if err != nil {
		return nil, nil, err
	}
	return fig, s, nil
}

// targetCurves resolves the targets to curves, in the order named, each
// trial once (none when no target has a successful launch). A trial named
// explicitly must have a successful launch; others without one are left
// out (and said so).
func targetCurves(targets []plotTarget, byQuery map[string]*report.Study, o curvesOptions) ([]report.Curve, []*report.Study, error) {
	pick := curvePicker{o: o, drawn: map[*store.Trial]bool{}}
	for _, t := range targets {
		s := byQuery[t.Study]
		explicit := t.Trial >= 0
		if !explicit && (o.All || s.Study.Kind != vocab.KindSearch) {
			if err := pick.everyTrial(s); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !explicit && pick.decision(s) {
			continue
		}
		if err := pick.trials(s, t); err != nil {
			return nil, nil, err
		}
	}
	return pick.curves, pick.studies, nil
}

// curvePicker collects targetCurves' curves, each trial once, and their
// studies in the order first used.
type curvePicker struct {
	o       curvesOptions
	curves  []report.Curve
	studies []*report.Study
	drawn   map[*store.Trial]bool
}

func (p *curvePicker) use(s *report.Study) {
	if !slices.Contains(p.studies, s) {
		p.studies = append(p.studies, s)
		if ops := s.WorkloadOps(); ops != nil && p.o.Warn != nil {
			fmt.Fprintf(p.o.Warn, "%s is a workload of several parts: its curves here are its %s launches only (nccltune plot %s draws every op, one panel each)\n",
				s.Name(), ops[0], s.Name())
		}
	}
}

// everyTrial adds a curve for every trial of s (--all, a sweep or an import).
func (p *curvePicker) everyTrial(s *report.Study) error {
	highlight := 0 // a sweep or an import: every trial in colour
	if p.o.All {
		highlight = allHighlight
	}
	cs, err := s.AllCurves(highlight)
	if err != nil {
		return err
	}
	inFigure := map[int]bool{}
	for _, c := range cs {
		inFigure[c.Trial] = true
		if tr := s.TrialByNumber(c.Trial); tr != nil && !p.drawn[tr] {
			p.drawn[tr] = true
			p.curves = append(p.curves, c)
		}
	}
	var skipped []string
	for _, tr := range s.Trials {
		if !inFigure[tr.Number] {
			skipped = append(skipped, strconv.Itoa(tr.Number))
		}
	}
	warnSkipped(p.o.Warn, s, skipped)
	if len(cs) > 0 {
		p.use(s)
	}
	return nil
}

// decision adds a search's decision curves, or reports false when none.
func (p *curvePicker) decision(s *report.Study) bool {
	cs, err := s.DecisionCurves(p.o.Explore)
	if err != nil {
		return false
	}
	for _, c := range cs {
		if tr := s.TrialByNumber(c.Trial); tr != nil {
			p.drawn[tr] = true
		}
	}
	p.curves = append(p.curves, cs...)
	p.use(s)
	return true
}

// trials adds the trials target t names: its trial, or a bare study's
// default trials (every trial with --all).
func (p *curvePicker) trials(s *report.Study, t plotTarget) error {
	explicit := t.Trial >= 0
	var picked []*store.Trial
	switch {
	case explicit:
		tr := s.TrialByNumber(t.Trial)
		if tr == nil {
			return vocab.UsageErrorf("study %s has no trial %d (it has %s, numbered from 0; nccltune show %s --trials lists them)",
				s.Name(), t.Trial, texttable.Plural(len(s.Trials), "trial"), s.Name())
		}
		picked = []*store.Trial{tr}
	default: // a bare search (the others drew everyTrial): its baseline and candidate
		picked = slices.DeleteFunc([]*store.Trial{s.Baseline(), s.Candidate()}, func(tr *store.Trial) bool { return tr == nil })
	}
	var skipped []string
	for _, tr := range picked {
		if p.drawn[tr] {
			continue
		}
		c, err := s.TrialCurve(tr)
		if err != nil {
			if explicit {
				return err
			}
			skipped = append(skipped, strconv.Itoa(tr.Number))
			continue
		}
		p.drawn[tr] = true
		p.curves = append(p.curves, c)
		p.use(s)
	}
	warnSkipped(p.o.Warn, s, skipped)
	return nil
}

func warnSkipped(w io.Writer, s *report.Study, skipped []string) {
	if len(skipped) > 0 && w != nil {
		fmt.Fprintf(w, "%s: left out %s with no successful launch (%s)\n", s.Name(), texttable.Plural(len(skipped), "trial"), strings.Join(skipped, ", "))
	}
}

func studyNames(studies []*report.Study) string {
	names := make([]string, len(studies))
	for i, s := range studies {
		names[i] = s.Name()
	}
	return strings.Join(names, ", ")
}

// simulatedSuffix is " (SIMULATED fabric)" when any of the studies ran on
// the simulated fabric.
func simulatedSuffix(studies []*report.Study) string {
	if slices.ContainsFunc(studies, func(s *report.Study) bool { return s.Study.Simulated }) {
		return " (SIMULATED fabric)"
	}
	return ""
}
