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

// Main runs the simulated all_reduce_perf with args (nccl-tests' flags and
// the simulator's own) and environment, and returns the exit code.
func Main(args []string, environ []string, stdout, stderr io.Writer) int {
	o, code, run := parseArgs(args, stdout, stderr)
	if !run {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{o.program()}, a...)...)
		return 2
	}
	if o.profile == "" {
		return fail("no --profile given: the simulated fabric needs one of %s or a JSON file", strings.Join(BuiltinProfiles(), ", "))
	}
	cfg := envConfig(environ)
	if o.batch != "" {
		return mainBatch(o, cfg, stdout, stderr)
	}
	l := &launch{o: o, cfg: cfg, args: args, environ: environ, errw: stderr}
	if IsReplay(o.profile) {
		r, err := LoadReplay(o.profile)
		switch {
		case err != nil:
			return fail("%v", err)
		case o.ranks > 0 && o.ranks != r.NRanks:
			return fail("--ranks %d: the replay %s recorded %d ranks and can only speak for them", o.ranks, r.Name, r.NRanks)
		case o.collective != nccl.AllReduce:
			return fail("the replay %s recorded all_reduce launches and cannot speak for %s; simulate it on a profile (--sim h200-loopback)", r.Name, o.collective)
		}
		l.p = r.profile()
		if l.fault, err = l.p.faultFor(cfg); err != nil {
			return fail("%v", err)
		}
		rc, _, err := r.Match(cfg)
		if err != nil {
			// Not a usage error: the search must see a failed launch, and
			// the reason must say the replay, not NCCL, declined.
			fmt.Fprintf(stderr, "SIMULATED %v\n", err)
			return exitReplayRefused
		}
		if l.replay = r.draw(rc, o.noise, o.seed, o.launch); l.replay.l.Failed != "" {
			fmt.Fprintf(stderr, "SIMULATED %v\n", &ReplayedFailure{Replay: r.Name, Config: rc.Env, Why: l.replay.l.Failed})
			return exitReplayedFailure
		}
	} else {
		p, err := LoadProfile(o.profile)
		if err != nil {
			return fail("%v", err)
		}
		if o.ranks > 0 {
			if p, err = p.WithRanks(o.ranks); err != nil {
				return fail("--ranks %d: %v", o.ranks, err)
			}
		}
		l.p = p
		if l.fault, err = p.faultFor(cfg); err != nil {
			return fail("%v", err)
		}
	}
	l.out = bufio.NewWriterSize(stdout, 64<<10)
	code = l.runCatchingCrash()
	l.out.Flush()
	return code
}

// Exit codes of a replayed launch that the recording cannot serve.
const (
	exitReplayRefused   = 4
	exitReplayedFailure = 3
)
