package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/store"
)

// A workload of several parts is drawn op by op, each through its own
// view of the study (OpStudy), by the same code as a one-part study; its
// parts, guarded ops and launches per op are as search stored them.

// WorkloadOps are the ops of a workload of several parts, in the parts'
// order, each once; nil for a study of one part.
func (s *Study) WorkloadOps() []nccl.Op {
	if !s.Study.Parts().ScoredByRounds() {
		return nil
	}
	var out []nccl.Op
	for _, p := range s.Study.Parts() {
		if !slices.Contains(out, p.Op) {
			out = append(out, p.Op)
		}
	}
	return out
}

// OpStudy is the study as one op of its workload sees it: the same
// trials and launches (shared), a copy of its record with the op, band
// and sizes of op's parts (the guard sizes kept).
func (s *Study) OpStudy(op nccl.Op) *Study {
	rec := *s.Study
	rec.Collective = string(op)
	rec.Workload = nil
	for _, p := range s.Study.Workload {
		if p.Op.OrAllReduce() == op {
			rec.Workload = append(rec.Workload, p)
		}
	}
	rec.Sizes = s.Study.Parts().Sizes(op)
	if len(rec.Sizes) > 0 {
		rec.BandMin, rec.BandMax = rec.Sizes[0], rec.Sizes[len(rec.Sizes)-1]
	}
	return Of(&stored.Study{Study: &rec, Trials: s.Trials, Launches: s.Launches}, s.LaunchStats)
}

// partsOf are the stored confirmation's parts of op, with their verdicts.
func (s *Study) partsOf(op nccl.Op) ([]store.PartComparison, []stored.OpVerdict) {
	rec := s.Study.Recommendation
	if rec == nil {
		return nil, nil
	}
	verdicts := stored.OpVerdicts(rec)
	var parts []store.PartComparison
	var vs []stored.OpVerdict
	for i, p := range rec.Parts {
		if p.Op.OrAllReduce() == op {
			parts, vs = append(parts, p), append(vs, verdicts[i])
		}
	}
	return parts, vs
}

// partLines are the subtitle lines of op's figures: each of its parts'
// speedup and verdict as stored.
func (s *Study) partLines(op nccl.Op) []string {
	parts, vs := s.partsOf(op)
	var out []string
	for i, p := range parts {
		out = append(out, fmt.Sprintf("part %s (weight %.2f): speedup %s, the confirmation's: %s",
			p.Name(), p.Weight, stored.SpeedupText(p.Speedup, p.SpeedupCI), vs[i].Verdict))
	}
	return out
}

// opFigure is the figure of what decided for one op of a workload (v,
// s.opCompared), with the verdicts of op's parts as stored.
func (s *Study) opFigure(v compared, metric string, exploration bool) (Figure, error) {
	f, err := v.decisionFigure(metric, exploration)
	if err != nil {
		return Figure{}, fmt.Errorf("%s: %w", v.op, err)
	}
	f.Op = v.op
	if v.c != nil {
		// Keep the first line (which launches), if any: the band's verdict
		// is the stored part's, not recomputed here.
		n := min(len(f.Subtitle), 1)
		f.Subtitle = append(f.Subtitle[:n:n], s.partLines(v.op)...)
	}
	return f, nil
}

// opSpeedupFigure is the speedup figure of one op of a workload.
func (v compared) opSpeedupFigure() (SpeedupFigure, error) {
	f, err := v.speedupFigure()
	if err != nil {
		return SpeedupFigure{}, fmt.Errorf("%s: %w", v.op, err)
	}
	f.Op = v.op
	return f, nil
}

// opLabel is the value axis's label of a figure of op, if any.
func opLabel(op nccl.Op, label string) string {
	if op == "" {
		return label
	}
	return string(op) + " " + label
}

// workloadHTML is the page's section on a workload of several parts (or
// a one-part study with guarded ops: no parts table): the parts and the
// guarded ops as stored, and the launches per op and phase.
type workloadHTML struct {
	// Objective is what the study scores a config by (stored.Objective).
	Objective string
	// Several: a workload of several parts, with its parts table.
	Several bool
	Parts   []partRow
	Guards  []guardRow
	// PartsCI and GuardsCI name the level of the intervals as stored.
	PartsCI, GuardsCI string
	// GuardNote says why the guarded ops have no table; Skipped the ops
	// left unguarded.
	GuardNote string
	Skipped   []string
	TakenOut  []string
	// Phases head the launches table's columns.
	Phases   []string
	Launches []launchRow
	Spend    string
}

type partRow struct {
	// Band is a timed part's calls ("10240×760"), a band part's band.
	Op, Band, Weight           string
	BaselineUS, CandidateUS    string
	Speedup, Change, Worst     string
	Verdict                    string
	Significant, Better, Worse bool
}

type guardRow struct {
	Op, Sizes, Change, Worst, Launches, Verdict string
	Slower, Refused                             bool
}

type launchRow struct {
	Op, For string
	Counts  []int
	Total   int
}

// workloadSection is the page's workload section of s; nil for a
// one-part study that guarded no op.
func workloadSection(s *Study) *workloadHTML {
	st := s.Study
	several := s.WorkloadOps() != nil
	if !st.Parts().BeyondOnePart(st.GuardOps) {
		return nil
	}
	rec := st.Recommendation
	byOp := stored.LaunchesByOp(st, s.Launches)
	w := &workloadHTML{Objective: stored.Objective(st), Several: several, Skipped: st.GuardOpsSkipped, TakenOut: stored.TakenOutLines(st), Phases: stored.PhasesOf(byOp), Spend: stored.SpendOf(byOp).Text()}
	var verdicts []stored.OpVerdict
	if rec != nil {
		verdicts = stored.OpVerdicts(rec)
		w.PartsCI, w.GuardsCI = store.PartsCILevel(rec.Parts).Label(), store.OpGuardsCILevel(rec.OpGuards).Label()
		for i, p := range rec.Parts {
			v := verdicts[i]
			w.Parts = append(w.Parts, partRow{Op: string(p.Op), Band: p.Sizes(), Weight: fmt.Sprintf("%.2f", p.Weight),
				BaselineUS: formatValue(MetricTime, p.BaselineScoreUS), CandidateUS: formatValue(MetricTime, p.ScoreUS),
				Speedup: stored.SpeedupText(p.Speedup, p.SpeedupCI), Change: v.Change, Worst: v.Worst, Verdict: v.Verdict,
				Significant: p.Significant, Better: p.Significant && p.Speedup > 1, Worse: p.Slower || p.Refused})
		}
		for i, g := range rec.OpGuards {
			v := verdicts[len(rec.Parts)+i]
			w.Guards = append(w.Guards, guardRow{Op: string(g.Op), Sizes: v.Sizes, Change: v.Change, Worst: v.Worst,
				Launches: fmt.Sprintf("%d + %d", g.BaselineLaunches, g.CandidateLaunches), Verdict: v.Verdict,
				Slower: g.Slower, Refused: g.Refused})
		}
	}
	if len(w.Guards) == 0 && len(st.GuardOps) > 0 {
		w.GuardNote = fmt.Sprintf("Guarded ops %s: not measured (they are measured only beside a config the confirmation recommends).", nccl.JoinOps(st.GuardOps))
	}
	for _, c := range byOp {
		r := launchRow{Op: string(c.Op), For: c.For(), Total: c.Launches}
		for _, p := range w.Phases {
			r.Counts = append(r.Counts, c.Phases[p])
		}
		w.Launches = append(w.Launches, r)
	}
	return w
}

// Panels are figures drawn one above the other in one image: a
// workload's figures, one per op.
type Panels struct {
	Ops     []nccl.Op
	Figures []Panel
}

// Panel is a Figure or a SpeedupFigure, as a panel of Panels.
type Panel interface {
	Drawing
	sheet() (*sheet, error)
}

// OpPanels are the figures of what decided for every op of the workload,
// one panel each, in the parts' order.
func (s *Study) OpPanels(metric string, exploration bool) (Panels, error) {
	return s.opPanels(func(op nccl.Op) (Panel, error) { return s.opFigure(s.opCompared(op), metric, exploration) })
}

// OpSpeedupPanels are the speedup figures of every op of the workload,
// one panel each, in the parts' order.
func (s *Study) OpSpeedupPanels() (Panels, error) {
	return s.opPanels(func(op nccl.Op) (Panel, error) { return s.opCompared(op).opSpeedupFigure() })
}

func (s *Study) opPanels(figure func(nccl.Op) (Panel, error)) (Panels, error) {
	var p Panels
	for _, op := range s.WorkloadOps() {
		f, err := figure(op)
		if err != nil {
			return Panels{}, err
		}
		p.Ops, p.Figures = append(p.Ops, op), append(p.Figures, f)
	}
	if len(p.Figures) == 0 {
		return Panels{}, fmt.Errorf("study %s is not a workload of several parts: plot it as one figure", s.Name())
	}
	return p, nil
}

// WriteAt renders the panels as PNG at dpi dots per inch, or as SVG.
func (p Panels) WriteAt(w io.Writer, format string, dpi int) error {
	var st stack
	for _, f := range p.Figures {
		s, err := f.sheet()
		if err != nil {
			return err
		}
		st = append(st, s)
	}
	return render(st, w, format, dpi)
}
