package studyrun

import (
	"reflect"
	"testing"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/store"
)

func TestFailedChecks(t *testing.T) {
	v := fabric.Verdict{JudgedOn: fabric.OnLowerBound, Checks: []fabric.Check{
		{Bytes: 1 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 8.5},
		{Bytes: 2 << 20, MinBusBW: 9, BusBW: 10, BusBWLo: 9.5, Pass: true},
		{Bytes: 4 << 20, MinBusBW: 9, Note: "not measured"},
	}}
	if got, want := FailedChecks(v), "1M lower bound 8.50 < 9 GB/s, 4M not measured"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestGateReportOf: a verdict is reported as it is; a launch that failed
// leaves no verdict, a failed gate with the failure and doctor's warnings.
func TestGateReportOf(t *testing.T) {
	study := &store.Study{Name: "g1", Simulated: true, Launch: store.LaunchSettings{SimProfile: "spark4"}}
	cfg, base := nccl.Config{"NCCL_ALGO": "Ring"}, map[string]string{"NCCL_IB_HCA": "mlx5"}
	rep := GateReportOf(&GateResult{Study: study, Verdict: fabric.Verdict{Pass: true}, Launches: 5}, cfg, base)
	if !rep.Pass || rep.FabricFailed || rep.Study != "g1" || rep.SimProfile != "spark4" || rep.Launches != 5 ||
		!reflect.DeepEqual(rep.Env, cfg) || !reflect.DeepEqual(rep.BaseEnv, base) {
		t.Errorf("a passed gate: %+v", rep)
	}
	warn := []fabric.Warning{{Code: "nic-down"}}
	rep = GateReportOf(&GateResult{Study: study, Verdict: fabric.Verdict{Pass: true}, FailedAt: 2, Failure: "launch 2 hung", Warnings: warn}, cfg, base)
	if rep.Pass || !rep.FabricFailed || rep.Failure != "launch 2 hung" || !reflect.DeepEqual(rep.Warnings, warn) {
		t.Errorf("a failed launch: %+v", rep)
	}
}
