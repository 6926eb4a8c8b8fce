package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/launchflags"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/internal/vocab"
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
throttled link, an NCCL too old for the GPU, a NIC that failed under the
run (NCCL's async error events such as "port error", the link going down,
and transfers that completed with an error), NVIDIA's example tuner plugin
loaded on Blackwell GPUs at 3 or more nodes (it rewrites NCCL's cost-model
constants there whatever its CSV holds).

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
3 when the launch itself failed or hung, or a NIC failed under it (the
diagnosis is printed first).

Examples:
  nccltune doctor --sim spark4
  nccltune doctor --sim spark4 --base-env NCCLTUNE_SIM_FAULT=socket-fallback
  nccltune doctor --launcher mpirun --np 2 --hosts a:1,b:1 --base-env NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1
  nccltune doctor --launcher local --bench-arg=-g --bench-arg=2 --base-env NCCL_NVLS_ENABLE=0
  nccltune doctor --sim spark4 --env NCCL_PROTO=^LL128 --env NCCL_MAX_NCHANNELS=8
  nccltune doctor --log all_reduce_debug.txt`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "log", Usage: "read a saved nccl-tests output or NCCL_DEBUG log `FILE` instead of launching"},
			flagvalue.Size("min", "32K", "smallest size of the debug launch (nccl-tests -b)"),
			flagvalue.Size("max", "256M", "largest size of the debug launch (nccl-tests -e)"),
			&cli.Float64Flag{Name: "link-gbps", Usage: "link speed per rank in Gb/s (e.g. 200); default: the port speeds NCCL logs"},
			launchflags.EnvFlag("also launch with these NCCL `K=V` settings and show NCCL's choices with and without them, side by side (repeatable)"),
			jsonFlag(),
		}, launchflags.Flags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return vocab.UsageErrorf("doctor takes no arguments (got %q); read a saved log with --log FILE", c.Args().First())
			}
			o, err := readDoctorFlags(c)
			if err != nil {
				return err
			}
			return runDoctor(c.Context, o)
		},
	}
}

type doctorOptions struct {
	cmdIO
	launch   studyrun.LaunchSettings
	compare  nccl.Config // when not empty, a second debug launch for the side by side
	logFile  string
	linkGbps float64
}

func readDoctorFlags(c *cli.Context) (doctorOptions, error) {
	o := doctorOptions{cmdIO: ioOf(c, ""), logFile: c.String("log"), linkGbps: c.Float64("link-gbps")}
	if o.linkGbps < 0 || (c.IsSet("link-gbps") && o.linkGbps == 0) {
		return o, vocab.UsageErrorf("--link-gbps %g: give the link speed in Gb/s, e.g. 200", o.linkGbps)
	}
	if o.logFile != "" {
		// A saved log is diagnosed as it is: only the base env (what the
		// lane ran with) adds to it.
		var names []string
		for _, f := range launchflags.Flags() {
			names = append(names, f.Names()[0])
		}
		for _, name := range append(names, "env", "min", "max") {
			if name != "base-env" && name != "base-env-file" && c.IsSet(name) {
				return o, vocab.UsageErrorf("--log reads a saved log; --%s only applies to a launch — drop one of them", name)
			}
		}
	}
	lo, err := launchflags.Read(c)
	if err != nil {
		return o, err
	}
	if o.compare, err = launchflags.ReadConfig(c, "env", lo.Spec.BaseEnv); err != nil {
		return o, err
	}
	if o.logFile == "" {
		min, max, err := flagvalue.SizeRange(c)
		if err != nil {
			return o, err
		}
		studyrun.SetDebugLaunch(&lo.Spec, lo.Seed, min, max, c.IsSet("iters"), c.IsSet("warmup"))
	}
	o.launch = lo
	return o, nil
}

func runDoctor(ctx context.Context, o doctorOptions) error {
	simProfile := ""
	if o.launch.Spec.Sim != nil {
		simProfile = o.launch.Spec.Sim.Profile
	}
	rep, err := studyrun.Doctor(ctx, studyrun.DoctorOptions{Launch: o.launch, LogFile: o.logFile, Compare: o.compare, LinkGbps: o.linkGbps,
		Progress: ui.DoctorProgress(o.stderr, o.launch.Spec.MinBytes, o.launch.Spec.MaxBytes, simProfile)})
	if err != nil {
		return err
	}
	if err := ui.PrintDoctor(o.stdout, o.json, *rep); err != nil {
		return err
	}
	return rep.Failure()
}
