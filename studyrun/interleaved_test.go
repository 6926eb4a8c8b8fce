package studyrun

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/model"
	"github.com/nccltune/nccltune/nccl"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/sim"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// simLaunch launches the simulated fabric (this test binary, see TestMain).
func simLaunch(t *testing.T, profile string) LaunchSettings {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return LaunchSettings{Spec: runner.Spec{Timeout: time.Minute, PerIter: true, Iters: 20,
		Sim: &runner.SimSpec{Executable: exe, Profile: profile, Noise: 1}}, Simulated: true, Seed: 11}
}

// TestRunAB checks verify's and compare's measurement: B C B C … after one
// warm-up of B, stored in that order, decided as a fixed-size test
// (model.Compare at the default options) on the stored launches.
func TestRunAB(t *testing.T) {
	st := openStore(t)
	n := model.MinLaunchesForDecision(model.DefaultOptions())
	band := nccl.Band{Min: 512 << 10, Max: 4 << 20}
	ab := AB{Kind: vocab.KindCompare, Band: band, BandText: band.String(), Collective: "all_reduce",
		Base: nccl.Config{}, Cand: nccl.Config{"NCCL_PROTO": "Simple"}}
	var progress []string
	r, err := RunAB(context.Background(), st, ab, ABOptions{Launch: simLaunch(t, "spark4"), Launches: n,
		Progress: func(seq, total int, phase string, tr *search.Trial, l *benchfmt.Launch) {
			if total != 2*n+1 || seq != len(progress)+1 {
				t.Errorf("progress %d/%d after %d launches", seq, total, len(progress))
			}
			progress = append(progress, phase+" "+tr.Config.String())
		}})
	if err != nil {
		t.Fatal(err)
	}
	study, err := st.Study(r.Study.Name)
	if err != nil {
		t.Fatal(err)
	}
	if study.Status != vocab.StatusDone || study.Reason != "compares "+ab.Cand.String()+" with "+ab.Base.String() {
		t.Errorf("status %s reason %q", study.Status, study.Reason)
	}
	trials, err := st.Trials(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(launches) != 2*n+1 || len(progress) != 2*n+1 {
		t.Fatalf("%d launches stored, %d reported, want %d", len(launches), len(progress), 2*n+1)
	}
	arms := map[uint64]int{trials[0].ID: 0, trials[1].ID: 1}
	var confirm [2][]model.Launch
	for i, l := range launches {
		wantArm, wantPhase := (i+1)%2, vocab.PhaseConfirm
		if i == 0 {
			wantArm, wantPhase = 0, vocab.PhaseWarmup
		}
		if l.Seq != i || l.Phase != wantPhase || arms[l.TrialID] != wantArm || l.Scored != (i > 0) {
			t.Errorf("launch %d: seq %d phase %s arm %d scored %v; want arm %d %s", i, l.Seq, l.Phase, arms[l.TrialID], l.Scored, wantArm, wantPhase)
		}
		if i > 0 {
			confirm[arms[l.TrialID]] = append(confirm[arms[l.TrialID]], report.ModelLaunches([]*store.Launch{l})...)
		}
	}
	want := model.Compare(confirm[0], confirm[1], band.Sizes(), model.DefaultOptions())
	if r.Comparison.Speedup != want.Speedup || r.Comparison.P != want.P || r.Comparison.Recommend != want.Recommend || r.Comparison.Reason != want.Reason {
		t.Errorf("comparison %+v\nwant model.Compare's %+v", r.Comparison, want)
	}
	rec := study.Recommendation
	if rec == nil || rec.BaselineLaunches != n || rec.CandidateLaunches != n || len(rec.PerSize) != len(band.Sizes()) || rec.CandidateTrialID != trials[1].ID {
		t.Errorf("stored recommendation %+v", rec)
	}
}

// TestRunABFailedLaunch: a launch that fails stops the comparison as a
// fabric failure, and the study says why.
func TestRunABFailedLaunch(t *testing.T) {
	st := openStore(t)
	band := nccl.Band{Min: 1 << 20, Max: 2 << 20}
	ab := AB{Kind: vocab.KindCompare, Band: band, BandText: band.String(), Collective: "all_reduce",
		Base: nccl.Config{}, Cand: nccl.Config{"NCCL_PROTO": "Simple"}}
	launch := simLaunch(t, "spark4")
	launch.Spec.BaseEnv = map[string]string{sim.FaultEnv: sim.FaultCrash}
	var name string
	_, err := RunAB(context.Background(), st, ab, ABOptions{Launch: launch, Launches: 3,
		Started: func(s *store.Study) { name = s.Name }})
	if !errors.Is(err, vocab.ErrFabric) {
		t.Fatalf("err = %v, want vocab.ErrFabric", err)
	}
	study, serr := st.Study(name)
	if !strings.HasPrefix(err.Error(), "warmup launch of") {
		t.Errorf("err = %q, want the warm-up launch named", err)
	}
	if serr != nil || study.Status != vocab.StatusFailed || study.Reason != err.Error() {
		t.Errorf("study %+v (%v), want failed with %q", study, serr, err)
	}
}

// A check launch per op names its op in every warning, so the op whose
// calls fell back to the plugin's one channel is said; one op's check is
// fabric's warning as it is.
func TestOpCheckNamesTheOp(t *testing.T) {
	tp := &benchfmt.TunerPlugin{Requested: "/p.so", Loaded: true, Name: "Example", Applied: 2, NoMatch: 3,
		Calls: []benchfmt.TunerCall{{Collective: "broadcast", Bytes: 1 << 20, NoMatch: 3, Unmatched: "collective"}}}
	l := &benchfmt.Launch{Outcome: benchfmt.OK, Result: &benchfmt.Result{NCCLVersion: "2.30.7", Facts: &benchfmt.Facts{Tuner: tp}}}
	several := opCheckOf(nccl.Broadcast, l, true)
	one := opCheckOf(nccl.Broadcast, l, false)
	if len(several.Warnings) == 0 || several.Plugin != tp {
		t.Fatalf("no fallback warning: %+v", several)
	}
	for i, w := range several.Warnings {
		if !strings.HasPrefix(w.Message, "broadcast: ") || one.Warnings[i].Message != strings.TrimPrefix(w.Message, "broadcast: ") {
			t.Errorf("warning %q (one op: %q)", w.Message, one.Warnings[i].Message)
		}
	}
}

// A workload's tuner check launches each op NCCL's tuner sees, and not
// alltoall or sendrecv (they run as send/recv); one op is checked as it is.
func TestCheckOps(t *testing.T) {
	band := nccl.Band{Min: 1 << 20, Max: 2 << 20}
	ab := AB{Parts: nccl.Workload{{Op: nccl.Broadcast, Band: band, Weight: 1}, {Op: nccl.AllToAll, Band: band, Weight: 1},
		{Op: nccl.AllReduce, Band: band, Weight: 1}, {Op: nccl.SendRecv, Band: band, Weight: 1}}}
	if got := ab.checkOps(); len(got) != 2 || got[0] != nccl.AllReduce || got[1] != nccl.Broadcast {
		t.Errorf("checkOps %v, want all_reduce and broadcast", got)
	}
	if got := (AB{Collective: "alltoall"}).checkOps(); len(got) != 1 || got[0] != nccl.AllToAll {
		t.Errorf("one op: %v", got)
	}
}
