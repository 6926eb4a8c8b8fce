package studyrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/runner"
)

// DoctorOptions say what doctor diagnoses: a saved log (LogFile), or one
// debug launch of Launch.Spec.
type DoctorOptions struct {
	Launch LaunchSettings
	// LogFile is a saved run's output to diagnose instead of launching.
	LogFile string
	// Compare, when not empty, gets a second debug launch, for NCCL's
	// choices side by side with the first's.
	Compare  nccl.Config
	LinkGbps float64
	// Progress, if set, hears of the debug launches: before the first
	// (cfg and l nil), once it ended (l), before the second (cfg).
	Progress func(cfg nccl.Config, l *benchfmt.Launch)
}

// doctor diagnoses, it does not measure precisely: a short debug launch.
const (
	doctorIters  = 5
	doctorWarmup = 2
)

// SetDebugLaunch makes s doctor's debug launch from min to max bytes:
// NCCL's debug log on, few iterations and warm-ups unless given, and on
// the simulated fabric the seed of a study's first launch.
func SetDebugLaunch(s *runner.Spec, seed, min, max int64, itersGiven, warmupGiven bool) {
	s.MinBytes, s.MaxBytes = min, max
	s.Debug, s.PerIter = true, false
	if !itersGiven {
		s.Iters = doctorIters
	}
	if !warmupGiven {
		s.Warmup = doctorWarmup
	}
	if s.Sim != nil {
		s.Sim.Seed = LaunchSeed(seed, 0)
	}
}

// Doctor diagnoses the fabric from one debug launch, or from a saved log,
// and with o.Compare NCCL's choices under a second config. A run that
// failed is diagnosed all the same (Failed, Failure); err is for what
// stopped the diagnosis.
func Doctor(ctx context.Context, o DoctorOptions) (*runresult.DoctorReport, error) {
	var (
		out  []byte
		res  *benchfmt.Result
		dctx = fabric.Context{BaseEnv: o.Launch.Spec.BaseEnv, LinkGbps: o.LinkGbps}
		rep  = &runresult.DoctorReport{Source: "launch", LogFile: o.LogFile}
		err  error
	)
	if o.LogFile != "" {
		rep.Source = "log"
		res, out, err = readDoctorLog(ctx, o.LogFile)
		if err != nil {
			return nil, err
		}
		rep.FailedBecause = savedRunFailure(res)
	} else {
		o.progress(nil, nil)
		l, err := runner.Run(ctx, o.Launch.Spec)
		if err != nil {
			if l == nil || ctx.Err() != nil || errors.Is(err, vocab.ErrFabric) {
				return nil, err
			}
		}
		o.progress(nil, l)
		res, out, rep.Argv = l.Result, append(append([]byte{}, l.Stdout...), l.Stderr...), l.Argv
		dctx.Outcome, dctx.Reason, dctx.Timeout = l.Outcome, l.Reason, o.Launch.Spec.Timeout
		if l.Outcome != benchfmt.OK {
			rep.FailedBecause = string(l.Outcome) + ": " + l.Reason
		}
	}
	rep.Report = fabric.Diagnose(res, benchfmt.ParseNCCLInit(out), dctx)
	if rep.FailedBecause == "" {
		rep.FailedBecause = rep.FabricFailure() // a NIC failed under the run
	}
	rep.Simulated = rep.Simulated || o.Launch.Simulated
	if rep.SimProfile == "" && o.Launch.Spec.Sim != nil {
		rep.SimProfile = o.Launch.Spec.Sim.Profile
	}
	rep.Failed = rep.FailedBecause != ""
	if len(o.Compare) > 0 && rep.FailedBecause == "" {
		if err := doctorCompare(ctx, rep, o, res); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func (o DoctorOptions) progress(cfg nccl.Config, l *benchfmt.Launch) {
	if o.Progress != nil {
		o.Progress(cfg, l)
	}
}

// readDoctorLog reads and parses a saved run's output; one with neither
// nccl-tests' output nor NCCL's log is refused.
func readDoctorLog(ctx context.Context, path string) (*benchfmt.Result, []byte, error) {
	data, err := input.ReadSaved(ctx, path, nil)
	if ctx.Err() != nil {
		return nil, nil, vocab.ErrInterrupted
	}
	if err != nil {
		return nil, nil, fmt.Errorf("doctor --log %w", err)
	}
	res, _ := benchfmt.Parse(data) // a failed run's output still tells what happened
	if res == nil || (len(res.Rows) == 0 && res.Facts == nil && len(res.Errors) == 0) {
		return nil, nil, vocab.UsageErrorf("doctor --log %s: no nccl-tests output and no NCCL_DEBUG line in it — save the output of a run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING", path)
	}
	return res, data, nil
}

// savedRunFailure says why the run a saved log records failed, "" when it
// did not or the log is NCCL's alone.
func savedRunFailure(res *benchfmt.Result) string {
	switch {
	case res.Collective == "" && len(res.Rows) == 0 && len(res.Errors) == 0:
		return ""
	case !res.Complete && len(res.Errors) > 0:
		return "failed: " + res.Errors[0]
	case !res.Complete:
		return "incomplete: the output stops before nccl-tests' closing lines"
	case res.Invalid() != "":
		return "invalid: " + res.Invalid()
	}
	return ""
}

// doctorCompare makes the second debug launch, with o.Compare, and sets
// rep's NCCL choices under it beside res's.
func doctorCompare(ctx context.Context, rep *runresult.DoctorReport, o DoctorOptions, res *benchfmt.Result) error {
	spec := o.Launch.Spec
	spec.Config = o.Compare
	o.progress(o.Compare, nil)
	l, err := runner.Run(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return vocab.ErrInterrupted
		}
		return err
	}
	if l.Outcome != benchfmt.OK {
		return vocab.Mark(vocab.ErrFabric, fmt.Errorf("the launch with %s %s: %s", o.Compare, l.Outcome, l.Reason))
	}
	var base, with []benchfmt.Choice
	if res != nil && res.Facts != nil {
		base = res.Facts.Choices
	}
	if l.Result != nil && l.Result.Facts != nil {
		with = l.Result.Facts.Choices
	}
	rep.CompareEnv, rep.Compare = o.Compare.Clone(), benchfmt.CompareChoices(base, with)
	rep.CompareChoices = [2][]benchfmt.Choice{base, with}
	return nil
}
