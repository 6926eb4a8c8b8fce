package studyrun

import (
	"context"
	"fmt"
	"maps"
	"math"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

// GateResult is gate's verdict on a config, or the launch that failed
// before there could be one.
type GateResult struct {
	Study    *store.Study
	Verdict  fabric.Verdict
	Launches int             // counted
	Notes    []model.Warning // the statistics' caveats on them
	// FailedAt is the number (from 1) of a launch that failed, with what
	// it was (Failure) and doctor's diagnosis (Warnings); 0 when none did.
	FailedAt int
	Failure  string
	Warnings []fabric.Warning
}

// GateReportOf is gate's report of r, its verdict on cfg under baseEnv
// (FabricFailed when a launch failed).
func GateReportOf(r *GateResult, cfg nccl.Config, baseEnv map[string]string) runresult.GateReport {
	study := r.Study
	rep := runresult.GateReport{Verdict: r.Verdict, Study: study.Name, Simulated: study.Simulated, SimProfile: study.Launch.SimProfile,
		Env: cfg.Clone(), BaseEnv: baseEnv, Launches: r.Launches, Notes: r.Notes}
	for _, n := range r.Notes {
		if n.Code != model.WarnFewLaunches {
			rep.TextNotes = append(rep.TextNotes, n.Message)
		}
	}
	if r.FailedAt > 0 {
		rep.Pass, rep.FabricFailed, rep.Failure, rep.Warnings = false, true, r.Failure, r.Warnings
	}
	return rep
}

// Gate measures o.Config at the thresholds' sizes, o.Repeats times, and
// judges each size against its threshold on basis. A failed verdict or
// launch is a result, not an error.
func Gate(ctx context.Context, st *store.Store, thresholds []fabric.Threshold, basis fabric.Basis, o RepeatOptions) (*GateResult, error) {
	sizes := make([]int64, len(thresholds))
	for i, t := range thresholds {
		sizes[i] = t.Bytes
	}
	r, launches, last, failed, err := repeat(ctx, st, vocab.KindGate, vocab.RoleGate, vocab.PhaseGate, sizes[0], sizes[len(sizes)-1], sizes, o)
	if err != nil {
		return nil, err
	}
	res := &GateResult{Study: r.Study, Verdict: fabric.Verdict{JudgedOn: basis, Checks: []fabric.Check{}}}
	if failed != nil {
		res.FailedAt, res.Failure = r.FailedAt, fmt.Sprintf("launch %d %s: %s", r.FailedAt, failed.Outcome, failed.Reason)
		res.Warnings = diagnoseFailed(o, failed)
		return res, nil
	}
	measured, notes := measureGate(launches, sizes, fabric.BusBWFactor(last.Result))
	res.Verdict = fabric.Judge(thresholds, measured, basis, GateMinLaunchesForLowerBound())
	res.Launches, res.Notes = len(launches), notes
	reason := ""
	if !res.Verdict.Pass {
		reason = "gate failed: " + res.Verdict.FailedChecks()
	}
	if err := r.Finish(reason); err != nil {
		return nil, err
	}
	return res, nil
}

// GateMinLaunchesForLowerBound is the fewest launches that give a gate's
// lower bound (5 at fabric.GateConfidence).
func GateMinLaunchesForLowerBound() int {
	opt := model.DefaultOptions()
	opt.Confidence = fabric.GateConfidence
	return model.MinLaunchesForInterval(opt)
}

// measureGate summarises launches at sizes: per size the median time with
// its fabric.GateConfidence interval, as bus bandwidth. The statistics
// live here so that fabric (which internal/ui prints) imports none.
func measureGate(launches []model.Launch, sizes []int64, factor float64) ([]fabric.Measured, []model.Warning) {
	opt := model.DefaultOptions()
	opt.Confidence = fabric.GateConfidence
	sum := model.Summarize(launches, sizes, opt)
	out := make([]fabric.Measured, 0, len(sum.Sizes))
	for _, s := range sum.Sizes {
		out = append(out, fabric.Measured{Bytes: s.Bytes, Launches: s.Launches,
			BusBW: busBW(factor, s.Bytes, s.Median),
			Lo:    busBW(factor, s.Bytes, s.Hi), // a longer time is a lower bandwidth
			Hi:    busBW(factor, s.Bytes, s.Lo)})
	}
	return out, sum.Warnings
}

// busBW converts a time in µs to GB/s of bus bandwidth; NaN stays NaN.
func busBW(factor float64, bytes int64, timeUS float64) float64 {
	if math.IsNaN(timeUS) || timeUS <= 0 {
		return math.NaN()
	}
	return factor * float64(bytes) / timeUS / 1e3
}

func diagnoseFailed(o RepeatOptions, l *benchfmt.Launch) []fabric.Warning {
	out := append(append([]byte{}, l.Stdout...), l.Stderr...)
	env := map[string]string{}
	maps.Copy(env, o.Launch.Spec.BaseEnv)
	maps.Copy(env, o.Config)
	diag := fabric.Diagnose(l.Result, benchfmt.ParseNCCLInit(out),
		fabric.Context{BaseEnv: env, Outcome: l.Outcome, Reason: l.Reason, Timeout: o.Launch.Spec.Timeout})
	return diag.Warnings
}
