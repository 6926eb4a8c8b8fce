package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func gateCommand() *cli.Command {
	return &cli.Command{
		Name:      "gate",
		Usage:     "pass or fail a fabric on bus-bandwidth thresholds at given sizes (exit 0 pass, 1 fail, 3 fabric failed)",
		ArgsUsage: " ",
		Description: `gate measures one config (the base env plus --env) with --repeats launches, after
one uncounted warm-up launch, and passes only if every --at SIZE:GBPS holds: the
bus bandwidth at SIZE is at least GBPS GB/s. Per size the bus bandwidth comes
from the median over launches of each launch's median time (busbw = nccl-tests'
own busbw/algbw factor × bytes / time), with a 90 % order-statistic interval
whose ends are each a one-sided 95 % bound.

It judges on the median by default: the median is the number people post and
the one gates in the field are written from. The seed's gate (22 GB/s at 256 MiB)
sits within the noise of a healthy fabric's plateau (~22.1–22.3 GB/s), so a
lower bound would fail that fabric about as often as not. --judge lower-bound
judges on the one-sided 95 % lower bound instead: the conservative choice for a
gate that protects production, meant for thresholds set with margin; it needs
at least 5 launches.

Exit status: 0 every size holds, 1 a size misses its threshold, 3 a launch
failed, hung or returned wrong results (the fabric failed; doctor's diagnosis of
that launch is printed).

Examples:
  nccltune gate --at 1M:9 --at 256M:22
  nccltune gate --sim spark4 --at 1M:9 --at 256M:22 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune gate --launcher mpirun --np 4 --hosts s5:1,s6:1,s7:1,s8:1 --base-env-file lane.env --at 1M:9 --at 256M:22 --judge lower-bound`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "at", Usage: "threshold `SIZE:GBPS`, repeatable: at SIZE (a power of two) at least GBPS GB/s bus bandwidth, e.g. 1M:9"},
			&cli.StringSliceFlag{Name: "env", Usage: "NCCL knob `K=V` of the config to gate, repeatable (none: NCCL's defaults under the base env)"},
			&cli.IntFlag{Name: "repeats", Value: 5, Usage: "launches that count (medians and intervals over launches)"},
			&cli.BoolFlag{Name: "no-warmup", Usage: "skip the uncounted warm-up launch"},
			&cli.StringFlag{Name: "judge", Value: "median", Usage: "judge each size on `BASIS`: median (default) or lower-bound (its one-sided 95 % lower confidence bound)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		}, append(namingFlags(), launchFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("gate takes no arguments (got %q); give thresholds with --at SIZE:GBPS", c.Args().First())
			}
			o, err := readGateFlags(c)
			if err != nil {
				return err
			}
			if o.naming, err = readNaming(c); err != nil {
				return err
			}
			return runGate(c.Context, o)
		},
	}
}

type gateOptions struct {
	launch     launchOptions
	config     nccl.Config
	thresholds []fabric.Threshold
	basis      fabric.Basis
	repeats    int
	warmup     bool
	json       bool
	db         string
	stdout     io.Writer
	stderr     io.Writer
	naming     studyNaming
}

func readGateFlags(c *cli.Context) (gateOptions, error) {
	ths, err := fabric.ParseThresholds(c.StringSlice("at"))
	if err != nil {
		return gateOptions{}, usageError(fmt.Errorf("--at: %w", err))
	}
	basis, err := fabric.ParseBasis(c.String("judge"))
	if err != nil {
		return gateOptions{}, usageError(fmt.Errorf("--judge %w", err))
	}
	repeats := c.Int("repeats")
	if repeats < 1 {
		return gateOptions{}, usageErrorf("--repeats %d: measure at least once", repeats)
	}
	if need := fabric.MinLaunchesForLowerBound(); basis == fabric.OnLowerBound && repeats < need {
		return gateOptions{}, usageErrorf("--judge lower-bound needs at least %d launches for a one-sided 95 %% bound; raise --repeats to %d or judge on the median", need, need)
	}
	lo, err := readLaunchFlags(c)
	if err != nil {
		return gateOptions{}, err
	}
	cfg, err := readEnvFlag(c, lo.spec.BaseEnv)
	if err != nil {
		return gateOptions{}, err
	}
	path, err := dbPath(c)
	if err != nil {
		return gateOptions{}, err
	}
	return gateOptions{launch: lo, config: cfg, thresholds: ths, basis: basis, repeats: repeats,
		warmup: !c.Bool("no-warmup"), json: c.Bool("json"), db: path,
		stdout: c.App.Writer, stderr: c.App.ErrWriter}, nil
}

// gateReport is gate's JSON document.
type gateReport struct {
	fabric.Verdict
	Study      string            `json:"study"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Env        nccl.Config       `json:"env"`
	BaseEnv    map[string]string `json:"base_env,omitempty"`
	Launches   int               `json:"launches"`
	Notes      []model.Warning   `json:"notes,omitempty"`
	// FabricFailed is set when a launch failed, hung or returned wrong
	// results; Error says which and why, Warnings are doctor's diagnosis.
	FabricFailed bool             `json:"fabric_failed"`
	Error        string           `json:"error,omitempty"`
	Warnings     []fabric.Warning `json:"warnings,omitempty"`
}

func runGate(ctx context.Context, o gateOptions) error {
	// Nothing is stored for a launch that cannot start.
	if err := preflight(o.launch); err != nil {
		return err
	}
	st, err := store.Open(o.db, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	sizes := make([]int64, len(o.thresholds))
	for i, t := range o.thresholds {
		sizes[i] = t.Bytes
	}
	min, max := sizes[0], sizes[len(sizes)-1]
	band := nccl.Band{Min: min, Max: max}
	r := &studyrun.Repeated{Store: st, Launcher: &studyrun.Launcher{Base: o.launch.spec, Seed: o.launch.seed},
		Config: o.config, Role: vocab.RoleGate, Phase: vocab.PhaseGate,
		Min: min, Max: max, Repeats: o.repeats, Warmup: o.warmup, Progress: launchProgress(o.stderr),
		Study: &store.Study{Kind: vocab.KindGate, Band: band.String(), BandMin: min, BandMax: max,
			Sizes: sizes, Collective: "all_reduce", BaseEnv: o.launch.spec.BaseEnv,
			Launch: launchSettings(o.launch), Simulated: o.launch.simulated, Seed: o.launch.seed,
			Budget: store.Budget{Launches: o.repeats}, Status: vocab.StatusRunning}}
	o.naming.apply(r.Study)
	if err := createStudy(st, r.Study); err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	study := r.Study
	fmt.Fprintf(o.stderr, "gate %s: %s at %s%s\n", study.Name, o.config, thresholdList(o.thresholds), labelSuffix(study))

	rep := gateReport{Verdict: fabric.Verdict{JudgedOn: o.basis, Checks: []fabric.Check{}}, Study: study.Name,
		Simulated: study.Simulated, SimProfile: study.Launch.SimProfile, Env: o.config.Clone(), BaseEnv: o.launch.spec.BaseEnv}
	launches, last, failed, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if failed != nil {
		return gateFabricFailed(o, rep, r.FailedAt, failed)
	}
	measured, notes := fabric.Measure(launches, sizes, fabric.BusBWFactor(last.Result))
	rep.Verdict = fabric.Judge(o.thresholds, measured, o.basis)
	rep.Launches, rep.Notes = len(launches), notes
	reason := ""
	if !rep.Pass {
		reason = "gate failed: " + failedChecks(rep.Verdict)
	}
	if err := r.Finish(reason); err != nil {
		return err
	}
	if o.json {
		if err := ui.WriteJSON(o.stdout, rep); err != nil {
			return err
		}
	} else {
		printGate(o.stdout, rep, o.config)
	}
	if !rep.Pass {
		return errCheckFailed
	}
	return nil
}

// gateFabricFailed reports a launch that failed, hung or returned wrong
// results, with doctor's diagnosis of what it printed: exit 3.
func gateFabricFailed(o gateOptions, rep gateReport, n int, l *runner.Launch) error {
	out := append(append([]byte{}, l.Stdout...), l.Stderr...)
	env := map[string]string{}
	for k, v := range o.launch.spec.BaseEnv {
		env[k] = v
	}
	for k, v := range o.config {
		env[k] = v
	}
	diag := fabric.Diagnose(l.Result, runner.ParseFabricLog(out),
		fabric.Context{BaseEnv: env, Outcome: l.Outcome, Reason: l.Reason, Timeout: o.launch.spec.Timeout})
	rep.Pass, rep.FabricFailed = false, true
	rep.Error = fmt.Sprintf("launch %d %s: %s", n, l.Outcome, l.Reason)
	rep.Warnings = diag.Warnings
	if o.json {
		if err := ui.WriteJSON(o.stdout, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.stdout, "gate %s: %s", rep.Study, o.config)
		if rep.Simulated {
			fmt.Fprintf(o.stdout, "  [%s]", ui.SimLabel(true, rep.SimProfile))
		}
		fmt.Fprintf(o.stdout, "\nFABRIC FAILED: %s\n", rep.Error)
		for _, w := range diag.Warnings {
			fmt.Fprintf(o.stdout, "\n[%s]\n", w.Code)
			writeWrapped(o.stdout, "  ", w.Message, 100)
			writeWrapped(o.stdout, "  fix: ", w.Fix, 100)
		}
		fmt.Fprintf(o.stdout, "\nNo verdict: the fabric failed before it could be measured (log: nccltune show %s --trials; nccltune doctor runs a debug launch).\n", rep.Study)
	}
	return fabricError(fmt.Errorf("gate %s: %s", rep.Study, rep.Error))
}

func printGate(w io.Writer, rep gateReport, cfg nccl.Config) {
	fmt.Fprintf(w, "gate %s: %s, %d launch(es)", rep.Study, cfg, rep.Launches)
	if rep.Simulated {
		fmt.Fprintf(w, "  [%s]", ui.SimLabel(true, rep.SimProfile))
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "size\tmin GB/s\tbusbw GB/s [90% interval]\tresult\t")
	for _, c := range rep.Checks {
		bw := "-"
		if !math.IsNaN(c.BusBW) {
			bw = fmt.Sprintf("%.2f", c.BusBW)
			if !math.IsNaN(c.BusBWLo) && !math.IsNaN(c.BusBWHi) {
				bw += fmt.Sprintf(" [%.2f, %.2f]", c.BusBWLo, c.BusBWHi)
			}
		}
		result := "pass"
		if !c.Pass {
			result = "FAIL"
		}
		if c.Note != "" {
			result += " (" + c.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t\n", nccl.FormatSize(c.Bytes), c.MinBusBW, bw, result)
	}
	tw.Flush()
	switch rep.JudgedOn {
	case fabric.OnLowerBound:
		fmt.Fprintln(w, "Judged on the lower bound (one-sided 95 %) of the median busbw over launches: the conservative")
		fmt.Fprintln(w, "choice for a gate that protects production; a size passes only if even that bound holds.")
	default:
		fmt.Fprintln(w, "Judged on the median busbw over launches: comparable with the numbers people post and the ones")
		fmt.Fprintln(w, "the thresholds were set from; --judge lower-bound judges on the one-sided 95 % lower bound instead.")
	}
	for _, n := range rep.Notes {
		if n.Code != model.WarnFewLaunches {
			fmt.Fprintf(w, "note: %s\n", n.Message)
		}
	}
	if rep.Pass {
		fmt.Fprintln(w, "PASS: every size holds its threshold.")
	} else {
		fmt.Fprintf(w, "FAIL: %s.\n", failedChecks(rep.Verdict))
	}
}

// failedChecks names the checks that failed: "1M median 1.38 < 9 GB/s".
func failedChecks(v fabric.Verdict) string {
	var parts []string
	for _, c := range v.Checks {
		if c.Pass {
			continue
		}
		value, what := c.BusBW, "median"
		if v.JudgedOn == fabric.OnLowerBound {
			value, what = c.BusBWLo, "lower bound"
		}
		switch {
		case c.Note != "":
			parts = append(parts, fmt.Sprintf("%s %s", nccl.FormatSize(c.Bytes), c.Note))
		default:
			parts = append(parts, fmt.Sprintf("%s %s %.2f < %g GB/s", nccl.FormatSize(c.Bytes), what, value, c.MinBusBW))
		}
	}
	return strings.Join(parts, ", ")
}

func thresholdList(ths []fabric.Threshold) string {
	var parts []string
	for _, t := range ths {
		parts = append(parts, t.String())
	}
	return strings.Join(parts, " ")
}
