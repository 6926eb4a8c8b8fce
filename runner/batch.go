package runner

// A batch launch: several configs in one launch of the torch instrument
// (or the simulated fabric), each on its own NCCL communicator, in rounds
// (docs/TORCH.md, "Batch mode").

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/safetext"
)

// BatchPlanVersion is the version of the plan file the instrument reads.
const BatchPlanVersion = 1

// BatchPlan is what one batch launch measures: the file --batch names.
type BatchPlan struct {
	Version int           `json:"version"`
	Configs []BatchConfig `json:"configs"`
	// CreationOrder indexes Configs in the order their communicators are made.
	CreationOrder []int     `json:"creation_order"`
	Ops           []BatchOp `json:"ops"`
	// Rounds are timed rounds (round 0 is reported but is the warm-up);
	// WarmupIters and Iters are per visit of a size, untimed then timed.
	Rounds      int `json:"rounds"`
	WarmupIters int `json:"warmup_iters"`
	Iters       int `json:"iters"`
	// RoundSeed shuffles the visiting order of every round, alike on every rank.
	RoundSeed int64 `json:"round_seed"`
	// MaxSeconds: no round starts that is planned to end later than this
	// after the launch started.
	MaxSeconds float64 `json:"max_seconds"`
}

// BatchConfig is one config of a batch, as one communicator takes it
// (nccl.CommSettingsOf makes its settings from a config).
type BatchConfig struct {
	Name string `json:"name"`
	nccl.CommSettings
}

// BatchOp is one op of a batch at nccl-tests' sizes (its size column).
type BatchOp struct {
	Op    nccl.Op `json:"op"`
	Sizes []int64 `json:"sizes"`
}

// ParseBatchPlan reads a plan file as the instrument reads it: an unknown
// key or a plan Validate refuses is an error.
func ParseBatchPlan(data []byte) (*BatchPlan, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var p BatchPlan
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("reading the batch plan: %w", err)
	}
	return &p, p.Validate()
}

// Validate refuses a plan the instrument would refuse, before anything is
// launched; a config's env may hold only what CommSettingsOf puts there.
func (p *BatchPlan) Validate() error {
	const hint = "; build each config with nccl.CommSettingsOf"
	if p.Version != BatchPlanVersion {
		return fmt.Errorf("batch plan version %d: the instrument reads version %d", p.Version, BatchPlanVersion)
	}
	if len(p.Configs) == 0 {
		return fmt.Errorf("the batch plan has no config")
	}
	names := map[string]bool{}
	for _, c := range p.Configs {
		if c.Name == "" || names[c.Name] {
			return fmt.Errorf("batch config %q: every config needs a name of its own", c.Name)
		}
		names[c.Name] = true
		s, perProcess, ok := nccl.CommSettingsOf(nccl.Config(c.Env))
		switch {
		case !ok:
			return fmt.Errorf("batch config %q sets %s, which NCCL reads once per process: launch it on its own", c.Name, strings.Join(perProcess, ", "))
		case len(s.Env) != len(c.Env):
			return fmt.Errorf("batch config %q has a channel limit in its env (%v): it goes in max_ctas/min_ctas%s", c.Name, c.Env, hint)
		case c.MaxCTAs < 0 || c.MinCTAs < 0:
			return fmt.Errorf("batch config %q: max_ctas and min_ctas cannot be negative", c.Name)
		}
	}
	// Sorted, the creation order must be 0, 1, …, len(Configs)-1.
	order := slices.Sorted(slices.Values(p.CreationOrder))
	permutation := len(order) == len(p.Configs)
	for i, o := range order {
		permutation = permutation && o == i
	}
	if !permutation {
		return fmt.Errorf("batch creation order %v must list every config's index once", p.CreationOrder)
	}
	if len(p.Ops) == 0 {
		return fmt.Errorf("the batch plan has no op")
	}
	for _, o := range p.Ops {
		if !o.Op.Valid() || len(o.Sizes) == 0 {
			return fmt.Errorf("batch op %q: give one of %s and its sizes", o.Op, strings.Join(nccl.OpNames(), ", "))
		}
		for _, b := range o.Sizes {
			if b < 4 {
				return fmt.Errorf("batch op %s: size %d is below one float32", o.Op, b)
			}
		}
	}
	if p.Rounds < 1 || p.Iters < 1 || p.WarmupIters < 0 || !(p.MaxSeconds > 0) {
		return fmt.Errorf("batch plan: rounds and iters must be at least 1, warmup_iters at least 0, max_seconds positive (got %d, %d, %d, %g)",
			p.Rounds, p.Iters, p.WarmupIters, p.MaxSeconds)
	}
	return nil
}

// validateBatch is Validate's part for Batch.
func (s Spec) validateBatch() error {
	if s.Batch == nil {
		return nil
	}
	if s.Sim == nil && !s.torch() {
		return fmt.Errorf("nccl-tests has no batch mode (one config per launch): measure a batch with --instrument torch")
	}
	if len(s.Config) > 0 {
		return fmt.Errorf("a batch launch carries its configs in its plan; its Config must be empty (got %s)", s.Config)
	}
	if err := s.CheckBatchPlanSeen(); err != nil {
		return err
	}
	return s.Batch.Validate()
}

// CheckBatchPlanSeen refuses batch launches of s whose ranks could not
// read their plan; a search that batches calls it before it stores a study.
func (s Spec) CheckBatchPlanSeen() error {
	if who := s.launchFilesUnseenBy(); who != "" {
		return fmt.Errorf("%s cannot see the batch plan nccltune writes to a temporary directory on this machine: pass --work-dir DIR at a path they see too (a shared file system, the same path in the container), or --batch 0 to launch every config on its own", who)
	}
	return nil
}

// writeBatchPlan writes the spec's plan into dir, named for this launch
// (launches may share a --work-dir), and returns its path.
func writeBatchPlan(dir string, p *BatchPlan) (string, error) {
	path := filepath.Join(dir, launchFileName("nccltune-batch"))
	err := outfile.Write(path, nil, func(w io.Writer) error { return json.NewEncoder(w).Encode(p) })
	if err != nil {
		return "", fmt.Errorf("writing the batch plan to %s: %w", dir, err)
	}
	return path, nil
}

// batchArgs are the instrument's arguments for a batch: the plan replaces
// the sweep's sizes, iterations and op.
func (s Spec) batchArgs() []string {
	path := cmp.Or(s.batchPlanPath, "PLAN.json") // Run writes the plan and fills in its path
	return []string{"--batch", path}
}

// classifyBatch sets a batch launch's Batch, Outcome and Reason: OK when
// the batch ran to its end with at least one config whose rows count.
func classifyBatch(l *benchfmt.Launch) {
	b, err := benchfmt.ParseBatch(append(append([]byte{}, l.Stdout...), l.Stderr...))
	l.BatchOutput = b
	l.Outcome = benchfmt.Failed
	switch {
	case l.ExitCode != 0 && torchScriptLacks(l, "--batch"):
		l.Reason = fmt.Sprintf("%s: the torch script (--torch-script) is a copy from before its batch mode; copy nccltune's scripts/%s over it", exitText(l.ExitCode), TorchScriptName)
	case l.ExitCode != 0 && err != nil:
		l.Reason = fmt.Sprintf("%s: %v", exitText(l.ExitCode), err)
	case l.ExitCode != 0:
		l.Reason = fmt.Sprintf("%s: %s", exitText(l.ExitCode), failureCause(l, nil))
	case err != nil:
		l.Reason = "exit status 0 but " + err.Error()
	default:
		why := ""
		for i := range b.Configs {
			if why = b.Configs[i].Excluded(); why == "" {
				l.Outcome = benchfmt.OK
				break
			}
			why = fmt.Sprintf("%s: %s", b.Configs[i].Name, why)
		}
		if l.Outcome != benchfmt.OK {
			l.Reason = "no config of the batch was measured (" + why + ")"
		}
	}
	l.Reason = safetext.Escape(l.Reason) // as classify's: shown and stored
}
