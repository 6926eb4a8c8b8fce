package ui

import "github.com/nccltune/nccltune/internal/report"

// CurvesJSON is the curves as plot --json gives them, NaN as null.
func CurvesJSON(cs []report.Curve) []map[string]any {
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		pts := make([]map[string]any, 0, len(c.Points))
		for _, p := range c.Points {
			pts = append(pts, map[string]any{"bytes": p.Bytes, "launches": p.Launches,
				"time_us": jsonNumber(p.TimeUS), "time_lo_us": jsonNumber(p.TimeLoUS), "time_hi_us": jsonNumber(p.TimeHiUS),
				"busbw": jsonNumber(p.BusBW), "busbw_lo": jsonNumber(p.BusBWLo), "busbw_hi": jsonNumber(p.BusBWHi)})
		}
		out = append(out, map[string]any{"study": c.Study, "trial": c.Trial, "label": c.Label, "env": nonNilMap(map[string]string(c.Config)),
			"launches": c.Launches, "phase": c.Phase, "background": c.Background, "interval": c.IntervalText(), "note": c.Note, "simulated": c.Simulated, "points": pts})
	}
	return out
}

// FigureJSON is what plot --json prints of a study's figure: the
// speedup's comparison, or the landscape's or the convergence's data, NaN
// as null.
func FigureJSON(d report.Drawing) any {
	switch f := d.(type) {
	case report.SpeedupFigure:
		return f.Comparison
	case report.Landscape:
		configs := make([]map[string]any, 0, len(f.Configs))
		for _, c := range f.Configs {
			configs = append(configs, map[string]any{"label": c.Label, "env": nonNilMap(map[string]string(c.Config)), "trials": c.Trials,
				"equivalent": c.Equivalent, "state": c.State, "role": c.Role, "knobs": c.Knobs, "launches": c.Launches,
				"score_us": jsonNumber(c.ScoreUS), "lo_us": jsonNumber(c.LoUS), "hi_us": jsonNumber(c.HiUS), "interval": c.Interval})
		}
		return map[string]any{"knob": f.Knob, "share": jsonNumber(f.Share), "configs": configs}
	case report.Convergence:
		steps := make([]map[string]any, 0, len(f.Steps))
		for _, st := range f.Steps {
			steps = append(steps, map[string]any{"launch": st.Launch, "leader": st.Leader, "leader_launches": st.LeaderLaunches,
				"leader_us": jsonNumber(st.LeaderUS), "leader_lo_us": jsonNumber(st.LeaderLo), "leader_hi_us": jsonNumber(st.LeaderHi),
				"baseline_us": jsonNumber(st.BaselineUS), "baseline_lo_us": jsonNumber(st.BaselineLo), "baseline_hi_us": jsonNumber(st.BaselineHi)})
		}
		return map[string]any{"confirm_from": f.ConfirmFrom, "confirm_to": f.ConfirmTo, "steps": steps}
	case report.Panels:
		out := make([]map[string]any, len(f.Figures))
		for i, p := range f.Figures {
			out[i] = map[string]any{"op": f.Ops[i], "figure": FigureJSON(p)}
		}
		return out
	}
	return nil
}
