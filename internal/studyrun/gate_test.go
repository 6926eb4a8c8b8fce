package studyrun

import (
	"math"
	"reflect"
	"testing"

	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/store"
)

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

// gateLaunches builds n launches whose time at each size is base × (1 + k·step)
// for launch k, one sample each.
func gateLaunches(n int, base map[int64]float64, step float64) []model.Launch {
	var out []model.Launch
	for k := range n {
		l := model.Launch{Times: map[int64][]float64{}}
		for b, t := range base {
			l.Times[b] = []float64{t * (1 + float64(k)*step)}
		}
		out = append(out, l)
	}
	return out
}

func TestMeasureGate(t *testing.T) {
	// 1 MiB in 100 µs at factor 1.5 is 15.73 GB/s; 5 launches 0–8 % slower.
	ls := gateLaunches(5, map[int64]float64{nccl.MiB: 100}, 0.02)
	m, _ := measureGate(ls, []int64{nccl.MiB}, 1.5)
	if len(m) != 1 {
		t.Fatalf("measureGate returned %d sizes", len(m))
	}
	want := 1.5 * float64(nccl.MiB) / 104 / 1e3 // the median launch is 4 % slower
	if math.Abs(m[0].BusBW-want) > 1e-9 {
		t.Errorf("busbw = %v, want %v", m[0].BusBW, want)
	}
	// With 5 launches the 90 % interval is the slowest and fastest launch.
	lo, hi := 1.5*float64(nccl.MiB)/108/1e3, 1.5*float64(nccl.MiB)/100/1e3
	if math.Abs(m[0].Lo-lo) > 1e-9 || math.Abs(m[0].Hi-hi) > 1e-9 || m[0].Launches != 5 {
		t.Errorf("interval [%v, %v] from %d launches, want [%v, %v] from 5", m[0].Lo, m[0].Hi, m[0].Launches, lo, hi)
	}
	few, warns := measureGate(gateLaunches(4, map[int64]float64{nccl.MiB: 100}, 0.02), []int64{nccl.MiB}, 1.5)
	if !math.IsNaN(few[0].Lo) || len(warns) == 0 {
		t.Errorf("4 launches: lo = %v, warnings %v; want NaN and a few-launches warning", few[0].Lo, warns)
	}
	if GateMinLaunchesForLowerBound() != 5 {
		t.Errorf("GateMinLaunchesForLowerBound = %d, want 5", GateMinLaunchesForLowerBound())
	}
}
