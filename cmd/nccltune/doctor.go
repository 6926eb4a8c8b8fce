package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/export"
	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/internal/input"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/studyrun"
	"github.com/nccltune/nccltune/vocab"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "diagnose the fabric: transport, GPUDirect, NICs, channels, NCCL's choices, and the traps that make numbers lie",
		ArgsUsage: " ",
		Description: `doctor runs one short launch with NCCL_DEBUG=INFO (subsystems INIT, ENV, NET,
GRAPH, TUNING), or reads a saved log with --log FILE, and reports NCCL's version,
ranks and nodes, what carries data between which ranks (P2P over NVLink or
PCIe, shared memory, the network: from NCCL's channel lines), the NICs and
GPUDirect RDMA where the network carries data, channels and rings, and per
size the algorithm, protocol and channels NCCL chose with the measured bus
bandwidth. Then it lists the traps it found, each with its evidence and the
fix: TCP sockets where RDMA was expected, GPUDirect off, one NIC of two
carrying the traffic, P2P or SHM disabled between GPUs of one host, P2P
unavailable where NVLink exists, ranks of one host on the network, a launch
that hangs (and where), wrong results, MPI wiring up over docker0, a
throttled link, an NCCL too old for the GPU.

JSON: "transport" is the network's name ("IB", "Socket", …) when the network
carries data between any two ranks, else "P2P", "SHM" or "P2P+SHM"; "routes"
and "paths" say what joins which ranks, "network" is the network NCCL
initialised whether or not it carries data.

The link speed for the throttle check comes from the port speeds NCCL logs for
the NICs it uses; --link-gbps states it instead.

With --env K=V (a recommendation, say), doctor makes a second debug launch
with those settings and prints, per size, what NCCL chose with its defaults
and with them, side by side: the explanation of what a setting changes.

Exit status: 0 when the fabric could be diagnosed, with or without warnings;
3 when the launch itself failed or hung (the diagnosis is printed first).

Examples:
  nccltune doctor --sim spark4
  nccltune doctor --sim spark4 --base-env NCCLTUNE_SIM_FAULT=socket-fallback
  nccltune doctor --launcher mpirun --np 2 --hosts a:1,b:1 --base-env NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1
  nccltune doctor --launcher local --bench-arg=-g --bench-arg=2 --base-env NCCL_NVLS_ENABLE=0
  nccltune doctor --sim spark4 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune doctor --log all_reduce_debug.txt`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "log", Usage: "read a saved nccl-tests output or NCCL_DEBUG log `FILE` instead of launching"},
			&cli.StringFlag{Name: "min", Value: "32K", Usage: "smallest size of the debug launch (nccl-tests -b)"},
			&cli.StringFlag{Name: "max", Value: "256M", Usage: "largest size of the debug launch (nccl-tests -e)"},
			&cli.Float64Flag{Name: "link-gbps", Usage: "link speed per rank in Gb/s (e.g. 200); default: the port speeds NCCL logs"},
			&cli.StringSliceFlag{Name: "env", Usage: "also launch with these NCCL `K=V` settings and show NCCL's choices with and without them, side by side (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"},
		}, launchFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("doctor takes no arguments (got %q); read a saved log with --log FILE", c.Args().First())
			}
			o, err := readDoctorFlags(c)
			if err != nil {
				return err
			}
			return runDoctor(c.Context, o)
		},
	}
}

// doctorIters and doctorWarmup keep the debug launch short unless the
// user asks for more: doctor diagnoses, it does not measure precisely.
const (
	doctorIters  = 5
	doctorWarmup = 2
)

type doctorOptions struct {
	launch launchOptions
	// compare, when not empty, gets a second debug launch for the side by side.
	compare  nccl.Config
	logFile  string
	linkGbps float64
	json     bool
	stdout   io.Writer
	stderr   io.Writer
}

func readDoctorFlags(c *cli.Context) (doctorOptions, error) {
	o := doctorOptions{logFile: c.String("log"), linkGbps: c.Float64("link-gbps"), json: c.Bool("json"),
		stdout: c.App.Writer, stderr: c.App.ErrWriter}
	if o.linkGbps < 0 || (c.IsSet("link-gbps") && o.linkGbps == 0) {
		return o, usageErrorf("--link-gbps %g: give the link speed in Gb/s, e.g. 200", o.linkGbps)
	}
	if o.logFile != "" {
		// A saved log is diagnosed as it is: only the base env (what the
		// lane ran with) adds to it.
		for _, f := range launchFlags() {
			name := f.Names()[0]
			if c.IsSet(name) && name != "base-env" && name != "base-env-file" || c.IsSet("env") {
				return o, usageErrorf("--log reads a saved log; --%s only applies to a launch — drop one of them", name)
			}
		}
		for _, name := range []string{"min", "max"} {
			if c.IsSet(name) {
				return o, usageErrorf("--log reads a saved log; --%s only applies to a launch — drop one of them", name)
			}
		}
	}
	lo, err := readLaunchFlags(c)
	if err != nil {
		return o, err
	}
	if o.compare, err = readEnvFlag(c, lo.spec.BaseEnv); err != nil {
		return o, err
	}
	if o.logFile == "" {
		min, max, err := readSizeRange(c)
		if err != nil {
			return o, err
		}
		s := &lo.spec
		s.MinBytes, s.MaxBytes = min, max
		s.Debug, s.PerIter = true, false
		if !c.IsSet("iters") {
			s.Iters = doctorIters
		}
		if !c.IsSet("warmup") {
			s.Warmup = doctorWarmup
		}
		if s.Sim != nil {
			s.Sim.Seed = studyrun.LaunchSeed(lo.seed, 0)
		}
	}
	o.launch = lo
	return o, nil
}

func runDoctor(ctx context.Context, o doctorOptions) error {
	var (
		out    []byte
		res    *runner.Result
		dctx   = fabric.Context{BaseEnv: o.launch.spec.BaseEnv, LinkGbps: o.linkGbps}
		rep    = ui.DoctorReport{Source: "launch", LogFile: o.logFile}
		failed string // why the launch failed, "" when it did not
	)
	if o.logFile != "" {
		data, err := input.ReadFile(ctx, o.logFile, nil, input.MaxBytes)
		if ctx.Err() != nil {
			return vocab.ErrInterrupted
		}
		if err != nil {
			return usageError(fmt.Errorf("doctor --log: %w", err))
		}
		res, _ = runner.Parse(data) // a failed run's output still tells what happened
		out = data
		rep.Source = "log"
		if res == nil || (len(res.Rows) == 0 && res.Facts == nil && len(res.Errors) == 0) {
			return usageErrorf("doctor --log %s: no nccl-tests output and no NCCL_DEBUG line in it — save the output of a run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING", o.logFile)
		}
		failed = savedRunFailure(res)
	} else {
		spec := o.launch.spec
		fmt.Fprintf(o.stderr, "doctor: one debug launch, %s to %s%s\n", nccl.FormatSize(spec.MinBytes), nccl.FormatSize(spec.MaxBytes), simSuffix(o.launch))
		l, err := runner.Run(ctx, spec)
		if err != nil {
			if l == nil || ctx.Err() != nil || errors.Is(err, vocab.ErrFabric) {
				return err
			}
		}
		fmt.Fprintf(o.stderr, "doctor: launch %s (%s)\n", outcomeText(l), l.Duration.Round(time.Millisecond))
		res, out, rep.Argv = l.Result, append(append([]byte{}, l.Stdout...), l.Stderr...), l.Argv
		dctx.Outcome, dctx.Reason, dctx.Timeout = l.Outcome, l.Reason, spec.Timeout
		if l.Outcome != runner.OK {
			failed = string(l.Outcome) + ": " + l.Reason
		}
	}
	rep.Report = fabric.Diagnose(res, runner.ParseFabricLog(out), dctx)
	rep.Simulated = rep.Simulated || o.launch.simulated
	if rep.SimProfile == "" && o.launch.spec.Sim != nil {
		rep.SimProfile = o.launch.spec.Sim.Profile
	}
	rep.Failed = failed != ""
	if len(o.compare) > 0 && failed == "" {
		spec := o.launch.spec
		spec.Config = o.compare
		fmt.Fprintf(o.stderr, "doctor: a second debug launch with %s\n", o.compare)
		l, err := runner.Run(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				return vocab.ErrInterrupted
			}
			return err
		}
		if l.Outcome != runner.OK {
			return fabricError(fmt.Errorf("the launch with %s %s: %s", o.compare, l.Outcome, l.Reason))
		}
		var base, with []runner.Choice
		if res != nil && res.Facts != nil {
			base = res.Facts.Choices
		}
		if l.Result != nil && l.Result.Facts != nil {
			with = l.Result.Facts.Choices
		}
		rep.CompareEnv, rep.Compare = o.compare.Clone(), export.CompareChoices(base, with)
		rep.CompareChoices = [2][]runner.Choice{base, with}
	}
	if err := ui.PrintDoctor(o.stdout, o.json, rep); err != nil {
		return err
	}
	if failed != "" {
		what := "the launch"
		if rep.Source == "log" {
			what = "the run in " + o.logFile
		}
		return fabricError(fmt.Errorf("%s failed (%s); the diagnosis above says what it saw", what, failed))
	}
	return nil
}

// savedRunFailure says why the run a saved log records failed, "" when it
// did not (or when the log is NCCL's alone, without nccl-tests' table).
func savedRunFailure(res *runner.Result) string {
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
