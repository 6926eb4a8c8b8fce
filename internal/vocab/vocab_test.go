package vocab

import "testing"

// The words are stored in users' databases: a renamed value would make
// every existing study unreadable as what it is.
func TestStoredValuesNeverChange(t *testing.T) {
	for _, w := range [][2]string{
		{KindSearch, "search"}, {KindSweep, "sweep"}, {KindImport, "import"}, {KindGate, "gate"}, {KindVerify, "verify"}, {KindCompare, "compare"},
		{StatusRunning, "running"}, {StatusDone, "done"}, {StatusInterrupted, "interrupted"}, {StatusFailed, "failed"},
		{RoleBaseline, "baseline"}, {RoleExplore, "explore"}, {RoleConfirm, "confirm"}, {RoleSweep, "sweep"}, {RoleImport, "import"}, {RoleGate, "gate"}, {RoleCandidate, "candidate"}, {RolePluginAlone, "plugin-alone"},
		{PhaseWarmup, "warmup"}, {PhasePlan, "plan"}, {PhaseExplore, "explore"}, {PhaseRefine, "refine"}, {PhaseConfirm, "confirm"}, {PhaseGuard, "guard"},
		{PhaseSweep, "sweep"}, {PhaseImport, "import"}, {PhaseGate, "gate"}, {PhaseExplain, "explain"},
		{string(TrialRunning), "running"}, {string(TrialComplete), "complete"}, {string(TrialFailed), "failed"}, {string(TrialTimedOut), "timeout"},
		{string(TrialInvalid), "invalid"}, {string(TrialRejected), "rejected"},
	} {
		if got, want := w[0], w[1]; got != want {
			t.Errorf("stored value %q changed to %q", want, got)
		}
	}
}

func TestUsable(t *testing.T) {
	for _, tc := range []struct {
		state TrialState
		want  bool
	}{
		{TrialRunning, true}, {TrialComplete, true},
		{TrialFailed, false}, {TrialTimedOut, false}, {TrialInvalid, false}, {TrialRejected, false},
	} {
		if got := tc.state.Usable(); got != tc.want {
			t.Errorf("%s.Usable() = %v, want %v", tc.state, got, tc.want)
		}
	}
}
