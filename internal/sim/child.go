package sim

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// ChildArg is the first argument that makes the nccltune executable (or a
// test binary) act as the simulated benchmark instead of itself.
const ChildArg = "__nccltune_sim"

// RunIfChild runs the simulated benchmark and exits when the process was
// started as one (os.Args[1] == ChildArg). main and TestMain call it first.
func RunIfChild() {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(Main(os.Args[2:], os.Environ(), os.Stdout, os.Stderr))
	}
}

// envConfig collects the NCCL_* variables (and NCCLTUNE_SIM_FAULT) of an
// environment; like getenv, the first definition of a name wins.
func envConfig(environ []string) nccl.Config {
	cfg := nccl.Config{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !(strings.HasPrefix(k, "NCCL_") || k == FaultEnv) {
			continue
		}
		if _, seen := cfg[k]; !seen {
			cfg[k] = v
		}
	}
	return cfg
}

// Main runs the simulated all_reduce_perf with args (nccl-tests flags plus
// the simulator's own --profile, --noise, --seed, --launch, --ranks) and
// the given environment, and returns the process exit code.
func Main(args []string, environ []string, stdout, stderr io.Writer) int {
	o, pr := parseArgs(args, stdout, stderr)
	if !pr.run {
		return pr.code
	}
	if o.profile == "" {
		fmt.Fprintf(stderr, "%s: no --profile given: the simulated fabric needs one of %s or a JSON file\n", o.program(), strings.Join(BuiltinProfiles(), ", "))
		return 2
	}
	cfg := envConfig(environ)
	if o.batch != "" {
		return mainBatch(o, cfg, stdout, stderr)
	}
	if IsReplay(o.profile) {
		return mainReplay(o, args, environ, cfg, stdout, stderr)
	}
	p, err := LoadProfile(o.profile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", o.program(), err)
		return 2
	}
	if o.ranks > 0 {
		if p, err = p.WithRanks(o.ranks); err != nil {
			fmt.Fprintf(stderr, "%s: --ranks %d: %v\n", o.program(), o.ranks, err)
			return 2
		}
	}
	fault, err := p.faultFor(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", o.program(), err)
		return 2
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	l := &launch{p: p, o: o, cfg: cfg, args: args, environ: environ, out: out, errw: stderr, fault: fault}
	code := l.runCatchingCrash()
	out.Flush()
	return code
}

// Exit codes of a replayed launch that the recording cannot serve.
const (
	// exitReplayRefused: the replay has no recording for the config.
	exitReplayRefused = 4
	// exitReplayedFailure: the drawn recorded launch had failed.
	exitReplayedFailure = 3
)

// mainReplay runs one launch of a replay: the recorded fabric prints as
// a profile (its ranks, NCCL, transport), the config's recorded plan
// gives NCCL's choices and a recorded launch of it gives the times.
func mainReplay(o options, args, environ []string, cfg nccl.Config, stdout, stderr io.Writer) int {
	r, err := LoadReplay(o.profile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", o.program(), err)
		return 2
	}
	if o.ranks > 0 && o.ranks != r.NRanks {
		fmt.Fprintf(stderr, "%s: --ranks %d: the replay %s recorded %d ranks and can only speak for them\n", o.program(), o.ranks, r.Name, r.NRanks)
		return 2
	}
	if o.collective != nccl.AllReduce {
		fmt.Fprintf(stderr, "%s: the replay %s recorded all_reduce launches and cannot speak for %s; simulate it on a profile (--sim h200-loopback)\n", o.program(), r.Name, o.collective)
		return 2
	}
	p := r.profile()
	fault, err := p.faultFor(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", o.program(), err)
		return 2
	}
	rc, _, err := r.Match(cfg)
	if err != nil {
		// Not a usage error: the search must see a failed launch, and
		// the reason must say the replay, not NCCL, declined.
		fmt.Fprintf(stderr, "SIMULATED %v\n", err)
		return exitReplayRefused
	}
	d := r.draw(rc, o.noise, o.seed, o.launch)
	if d.l.Failed != "" {
		fmt.Fprintf(stderr, "SIMULATED %v\n", &ReplayedFailure{Replay: r.Name, Config: rc.Env, Why: d.l.Failed})
		return exitReplayedFailure
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	l := &launch{p: p, o: o, cfg: cfg, args: args, environ: environ, out: out, errw: stderr, fault: fault, replay: d}
	code := l.run()
	out.Flush()
	return code
}
