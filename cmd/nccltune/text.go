package main

import (
	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
)

// The small text helpers that several commands' output shares, in one
// place so that each is written once. (Those the printers in internal/ui
// need live there.)

// outcomeText is "ok", or the launch's outcome and why.
func outcomeText(l *runner.Launch) string {
	if l.Outcome == runner.OK {
		return "ok"
	}
	return string(l.Outcome) + ": " + l.Reason
}

// labelSuffix marks a simulated study's headline as simulated.
func labelSuffix(st *store.Study) string {
	if st.Simulated {
		return " — " + ui.SimLabel(true, st.Launch.SimProfile)
	}
	return ""
}

// simSuffix marks a line about a launch on the simulated fabric.
func simSuffix(lo launchOptions) string {
	if lo.spec.Sim == nil {
		return ""
	}
	return " — " + ui.SimLabel(true, lo.spec.Sim.Profile)
}
