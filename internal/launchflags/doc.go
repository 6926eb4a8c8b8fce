// Package launchflags is the command line of how the benchmark runs,
// shared by every nccltune command that launches it (search, verify,
// compare, sweep, gate, doctor): the launch flags' definitions, reading
// them into a studyrun.LaunchSettings (the runner.Spec, simulated or not, the
// seed), the env flags read beside them (--base-env and its file, --env,
// --baseline-env), and the round-trip of a study's stored launch settings:
// comparing them with the ones given now (a study resumed or verified
// another way would mix two fabrics' measurements) and writing them back
// as the flags that reproduce them.
//
// Bad values are usage errors (vocab.ErrUsage, exit code 2) found before
// anything is opened, stored or launched.
package launchflags
