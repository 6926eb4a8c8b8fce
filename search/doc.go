// Package search owns the study loop: the search space, proposals from
// goptuna's TPE sampler, de-duplication, how many launches each config
// gets, the interleaved confirmation against the baseline, guard sizes and
// the recommendation. It reaches the benchmark and the store only through
// the small Launcher and Recorder interfaces, so it never parses output or
// touches bbolt itself. Confirm, the interleaved confirmation, is also
// what verify and compare (package studyrun) measure with.
//
// The files follow the loop's parts: api.go (Options, Request, Result,
// Launcher, Recorder, Event), loop.go (the loop, its trials and the one
// place a launch is made), explore.go (proposals), rank.go (ranking, the
// trials' order and the candidate, with its own cache), confirm.go (sizing
// and deciding the confirmation), plan.go (planner: NCCL's own plan and
// the equivalences it proves, which never launches), simplest.go (the
// config confirmed in place of the candidate, a function of the trials),
// space.go and trial.go.
package search
