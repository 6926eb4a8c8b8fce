// Package launchflags is the command line of how the benchmark runs,
// shared by every command that launches it: the launch flags, the env
// flags read beside them, and the round-trip of a study's stored launch
// settings. Bad values are usage errors found before anything is stored.
package launchflags
