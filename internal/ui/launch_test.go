package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/search"
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
	ABProgress(&b)(1, 20, "warmup", &search.Trial{Config: nccl.Config{"NCCL_PROTO": "Simple"}}, ok)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nil, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "spark4")(nil, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nccl.Config{"NCCL_PROTO": "Simple"}, nil)
	DoctorProgress(&b, 32<<10, 256<<20, "")(nil, hung)
	want := `launch 2/6 measure: ok (1.235s)
launch 3/6 measure: timeout: past 5m0s (5m0s)
launch 1/20 warmup  NCCL_PROTO=Simple                        ok (1.235s)
doctor: one debug launch, 32K to 256M
doctor: one debug launch, 32K to 256M — ` + SimLabel(true, "spark4") + `
doctor: a second debug launch with NCCL_PROTO=Simple
doctor: launch timeout: past 5m0s (5m0s)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
