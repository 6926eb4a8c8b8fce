// Package ui is nccltune's command output: how each command's result
// reads as text for a person and as the --json document (or CSV) for a
// tool. It holds only rendering: the commands in cmd/nccltune decide what
// runs, read flags and map errors to exit codes, then hand their result to
// a printer here (as golang.org/x/perf's cmd/benchstat/internal does).
//
// ui depends on no statistics routine or study runner
// (TestPrintersDependOnNoStatistics), and never on cmd/nccltune.
package ui
