package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/nccl"
)

// Faults the simulator can produce, on demand (NCCLTUNE_SIM_FAULT) or by
// a profile rule, the ways real launches fail or lie: hang after the first
// rows, or right after NCCL's init (an NCCL too old for the GPU); crash
// (SIGABRT, exit 134); wrong results (#wrong > 0, exit 7); garbage bytes
// or no output at all (exit 0); socket-fallback (NCCL uses NET/Socket
// although IB devices are listed: a broken net plugin); mpi-wireup (Open
// MPI's "cannot find a corresponding process entry", exit 1).
const (
	FaultHang           = "hang"
	FaultInitHang       = "init-hang"
	FaultCrash          = "crash"
	FaultWrong          = "wrong"
	FaultGarbage        = "garbage"
	FaultSilent         = "silent"
	FaultSocketFallback = "socket-fallback"
	FaultMPIWireup      = "mpi-wireup"
)

// FaultEnv is the environment variable (and Config key: it is not an NCCL
// knob) that selects a fault on demand.
const FaultEnv = "NCCLTUNE_SIM_FAULT"

// FaultKinds lists every fault name.
var FaultKinds = []string{FaultHang, FaultInitHang, FaultCrash, FaultWrong, FaultGarbage, FaultSilent, FaultSocketFallback, FaultMPIWireup}

func isFaultKind(s string) bool { return slices.Contains(FaultKinds, s) }

// FaultError reports that a launch of a configuration fails or lies. Bytes
// is the first size the fault hits (0: before any size); Rule says a
// profile rule (Why: its explanation) caused it, not NCCLTUNE_SIM_FAULT.
type FaultError struct {
	Kind  string
	Bytes int64
	Rule  bool
	Why   string
}

func (e *FaultError) Error() string {
	where := ""
	if e.Bytes > 0 {
		where = fmt.Sprintf(" from %d bytes", e.Bytes)
	}
	src := FaultEnv
	if e.Rule {
		src = "profile rule"
		if e.Why != "" {
			src += " (" + e.Why + ")"
		}
	}
	return fmt.Sprintf("simulated fault %q%s, set by %s", e.Kind, where, src)
}

// activeFault is a fault that applies to a launch, with the sizes it hits.
type activeFault struct {
	kind     string
	min, max int64
	rule     bool
	why      string
}

func (a *activeFault) hits(bytes int64) bool {
	return a != nil && bytes >= a.min && (a.max == 0 || bytes <= a.max)
}

// matches reports whether every When entry holds in cfg.
func (r FaultRule) matches(cfg nccl.Config) bool {
	for k, want := range r.When {
		if !strings.EqualFold(strings.TrimSpace(cfg[k]), strings.TrimSpace(want)) {
			return false
		}
	}
	return true
}

// ruleFault reports whether a profile rule of that kind matches cfg.
func (p *Profile) ruleFault(cfg nccl.Config, kind string) bool {
	return slices.ContainsFunc(p.Faults, func(r FaultRule) bool { return r.Fault == kind && r.matches(cfg) })
}

// faultFor returns the fault a launch under cfg suffers, if any: the
// NCCLTUNE_SIM_FAULT value first, then the first matching profile rule;
// never socket-fallback, which changes the fabric (resolveTransport).
func (p *Profile) faultFor(cfg nccl.Config) (*activeFault, error) {
	if v := strings.TrimSpace(cfg[FaultEnv]); v != "" {
		if !isFaultKind(v) {
			return nil, fmt.Errorf("%s=%s: unknown fault (want one of %s)", FaultEnv, v, strings.Join(FaultKinds, ", "))
		}
		if v == FaultSocketFallback {
			return nil, nil
		}
		return &activeFault{kind: v}, nil
	}
	for _, r := range p.Faults {
		if r.Fault != FaultSocketFallback && r.matches(cfg) {
			return &activeFault{kind: r.Fault, min: r.MinBytes, max: r.MaxBytes, rule: true, why: r.Why}, nil
		}
	}
	return nil, nil
}
