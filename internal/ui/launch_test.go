package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/fabric"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/store"
)

// TestLaunchProgress: each launch's line says its place, phase, outcome
// (and why, when it failed) and duration; doctor's first line says where
// it runs, labelled simulated on the simulated fabric.
func TestLaunchProgress(t *testing.T) {
	ok := &benchfmt.Launch{Outcome: benchfmt.OK, Duration: 1234567 * time.Microsecond}
	hung := &benchfmt.Launch{Outcome: benchfmt.TimedOut, Reason: "past 5m0s", Duration: 5 * time.Minute}
	var b strings.Builder
	RepeatProgress(&b)(2, 6, "measure", ok)
	RepeatProgress(&b)(3, 6, "measure", hung)
	ABProgress(&b)(1, 20, "warmup", nccl.Config{"NCCL_PROTO": "Simple"}, ok)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nil, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "spark4")(nil, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nccl.Config{"NCCL_PROTO": "Simple"}, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nil, hung)
	want := `launch 2/6 measure: ok (1.235s)
launch 3/6 measure: timeout: past 5m0s (5m0s)
launch 1/20 warmup  NCCL_PROTO=Simple                        ok (1.235s)
doctor: one debug launch, 32K to 256M
doctor: one debug launch, 32K to 256M — ` + SimLabel("spark4") + `
doctor: a second debug launch with NCCL_PROTO=Simple
doctor: launch timeout: past 5m0s (5m0s)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestStartedLines: each study's first line names it and what it
// measures, labelled simulated on the simulated fabric.
func TestStartedLines(t *testing.T) {
	real := &store.Study{Name: "s1"}
	simulated := &store.Study{Name: "s2", Simulated: true, Launch: store.LaunchSettings{SimProfile: "spark4"}}
	cfg := nccl.Config{"NCCL_PROTO": "Simple"}
	var b strings.Builder
	SweepStarted(&b, cfg, 1<<10, 1<<20)(real)
	GateStarted(&b, cfg, []fabric.Threshold{{Bytes: 1 << 20, MinBusBW: 9}})(simulated)
	ABStarted(&b, "verify", nil, cfg, 10)(real)
	so := SearchPlan{Band: nccl.Band{Min: 512 << 10, Max: 4 << 20}, Configs: 1536, Budget: 60}
	SearchStarted(&b, simulated, so, "/d/n.db", false)
	sim := " — " + SimLabel("spark4")
	want := "sweep s1: NCCL_PROTO=Simple, 1K to 1M\n" +
		"gate s2: NCCL_PROTO=Simple at " + ThresholdList([]fabric.Threshold{{Bytes: 1 << 20, MinBusBW: 9}}) + sim + "\n" +
		"verify s1: NCCL_PROTO=Simple against NCCL defaults, 10 launches each, interleaved\n" +
		fmt.Sprintf("study s2: band 512K-4M (4 sizes), %d configs in the space, budget %d launches%s\n", so.Configs, so.Budget, sim) +
		"  stored in /d/n.db\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
