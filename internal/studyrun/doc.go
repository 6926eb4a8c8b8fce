// Package studyrun runs nccltune's studies — search, sweep, gate, verify,
// compare, doctor's launches and import — against a launcher (runner.Run,
// real or simulated) and the store. It creates and resumes studies, makes
// their launches, records every launch and trial in the store as it ends,
// and computes what a study concludes (the recommendation, a sweep's rows,
// a gate's verdict) with the statistics of package model.
//
// The command (cmd/nccltune) reads flags into the options these functions
// take, renders what they return (the records of internal/runresult, which
// internal/ui prints without depending on studyrun), and maps their errors
// to exit codes; studyrun never prints a result itself.
package studyrun
