package ui

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/fabric"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/studyrun"
)

// TestPrintGateFabricFailed: a launch that failed gives no verdict: the
// text says which launch failed and gives doctor's warnings with their
// fixes; the JSON document marks fabric_failed and fails the gate.
func TestPrintGateFabricFailed(t *testing.T) {
	cfg := nccl.Config{"NCCL_ALGO": "Ring"}
	rep := GateReport{Verdict: fabric.Verdict{Checks: []fabric.Check{}}, Study: "lane7", Env: cfg,
		Simulated: true, SimProfile: "spark4", FabricFailed: true, Error: "launch 2 failed: exit status 1",
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
		Pass         bool   `json:"pass"`
		FabricFailed bool   `json:"fabric_failed"`
		Error        string `json:"error"`
	}
	var js bytes.Buffer
	if err := PrintGate(&js, true, rep, cfg); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Pass || !doc.FabricFailed || doc.Error != rep.Error {
		t.Errorf("JSON %+v (%v):\n%s", doc, err, js.String())
	}
}

// TestGateReportOf: a verdict is reported as it is; a launch that failed
// leaves no verdict, a failed gate with the failure and doctor's warnings.
func TestGateReportOf(t *testing.T) {
	study := &store.Study{Name: "g1", Simulated: true, Launch: store.LaunchSettings{SimProfile: "spark4"}}
	cfg, base := nccl.Config{"NCCL_ALGO": "Ring"}, map[string]string{"NCCL_IB_HCA": "mlx5"}
	rep := GateReportOf(&studyrun.GateResult{Study: study, Verdict: fabric.Verdict{Pass: true}, Launches: 5}, cfg, base)
	if !rep.Pass || rep.FabricFailed || rep.Study != "g1" || rep.SimProfile != "spark4" || rep.Launches != 5 ||
		!reflect.DeepEqual(rep.Env, cfg) || !reflect.DeepEqual(rep.BaseEnv, base) {
		t.Errorf("a passed gate: %+v", rep)
	}
	warn := []fabric.Warning{{Code: "nic-down"}}
	rep = GateReportOf(&studyrun.GateResult{Study: study, Verdict: fabric.Verdict{Pass: true}, FailedAt: 2, Failure: "launch 2 hung", Warnings: warn}, cfg, base)
	if rep.Pass || !rep.FabricFailed || rep.Error != "launch 2 hung" || !reflect.DeepEqual(rep.Warnings, warn) {
		t.Errorf("a failed launch: %+v", rep)
	}
}
