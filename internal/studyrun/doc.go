// Package studyrun runs nccltune's studies — search, sweep, gate, verify,
// compare, doctor's launches and import — against a launcher (runner.Run,
// real or simulated) and the store: it creates and resumes studies,
// records every launch and trial as it ends, and computes what a study
// concludes with package model. It never prints: the command renders the
// records of internal/runresult it returns.
package studyrun
