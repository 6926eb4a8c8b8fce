package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/runresult"
)

// TestPrintGateFabricFailed: a launch that failed gives no verdict: the
// text says which launch failed and gives doctor's warnings with their
// fixes; the JSON document marks fabric_failed and fails the gate.
func TestPrintGateFabricFailed(t *testing.T) {
	cfg := nccl.Config{"NCCL_ALGO": "Ring"}
	rep := runresult.GateReport{Verdict: fabric.Verdict{Checks: []fabric.Check{}}, Study: "lane7", Env: cfg,
		Simulated: true, SimProfile: "spark4", FabricFailed: true, Failure: "launch 2 failed: exit status 1",
		Error:    &ErrorJSON{Code: 3, Kind: "fabric", Message: "gate lane7: launch 2 failed: exit status 1"},
		Warnings: []fabric.Warning{{Code: "nic-down", Message: "port mlx5_1 is down", Fix: "bring the port up"}}}
	var text bytes.Buffer
	if err := PrintGate(&text, false, rep, cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gate lane7: NCCL_ALGO=Ring  [SIMULATED fabric: spark4]\n",
		"FABRIC FAILED: launch 2 failed: exit status 1\n",
		"\n[nic-down]\n  port mlx5_1 is down\n  fix: bring the port up\n",
		"No verdict:",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "PASS") || strings.Contains(text.String(), "FAIL:") {
		t.Errorf("a verdict without a measurement:\n%s", text.String())
	}
	var doc struct {
		Pass         bool       `json:"pass"`
		FabricFailed bool       `json:"fabric_failed"`
		Error        *ErrorJSON `json:"error"`
	}
	var js bytes.Buffer
	if err := PrintGate(&js, true, rep, cfg); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Pass || !doc.FabricFailed || doc.Error == nil || *doc.Error != *rep.Error {
		t.Errorf("JSON %+v (%v):\n%s", doc, err, js.String())
	}
}
