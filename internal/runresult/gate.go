package runresult

import (
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

// GateReport is gate's JSON document.
type GateReport struct {
	fabric.Verdict
	Study      string            `json:"study"`
	Simulated  bool              `json:"simulated"`
	SimProfile string            `json:"sim_profile,omitempty"`
	Env        nccl.Config       `json:"env"`
	BaseEnv    map[string]string `json:"base_env,omitempty"`
	Launches   int               `json:"launches"`
	Notes      []vocab.Warning   `json:"notes,omitempty"`
	// TextNotes are the notes gate's text prints: every caveat but too
	// few launches for an interval, which its table says by the interval
	// it leaves out (--json keeps them all).
	TextNotes []string `json:"-"`
	// FabricFailed is set when a launch failed, hung or returned wrong
	// results; Failure says which and why, Error is that in the one error
	// shape (the command sets it: it knows the exit code), Warnings are
	// doctor's diagnosis.
	FabricFailed bool             `json:"fabric_failed"`
	Failure      string           `json:"-"`
	Error        *vocab.ErrorJSON `json:"error,omitempty"`
	Warnings     []fabric.Warning `json:"warnings,omitempty"`
}
