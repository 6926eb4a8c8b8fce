// Package search owns the study loop: the search space, proposals from
// goptuna's TPE sampler, de-duplication, how many launches each config
// gets, the interleaved confirmation against the baseline, guard sizes and
// the recommendation. It reaches the benchmark and the store only through
// the small Launcher and Recorder interfaces, so it never parses output or
// touches bbolt itself. Confirm, the interleaved confirmation, is also
// what verify and compare (package studyrun) measure with.
package search
