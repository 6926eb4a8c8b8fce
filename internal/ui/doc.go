// Package ui is nccltune's command output: how each command's result
// reads as text for a person and as the --json document (or CSV) for a
// tool. It holds only rendering; the commands in cmd/nccltune decide what
// runs, read flags and map errors to exit codes, then hand their result to
// a printer here. Keeping the words and layouts in one package lets the
// commands stay short and lets tests check an output without running a
// command (the layout follows golang.org/x/perf's cmd/benchstat/internal
// and restic's internal/ui). It decides nothing: exit codes, verdicts and
// statistics come from the command, studyrun, search and model, and a
// printer here only says them.
//
// ui imports the records it prints (store, internal/stored,
// internal/runresult, report, fabric, ...) and the views of search's
// options, events and result it defines (SearchPlan, SearchEvent,
// SearchEnd), which the command reads off them; it depends on no
// statistics routine or study runner (model, search, internal/launchstats,
// internal/studyrun, internal/sim, gonum's stat, go-moremath's stats:
// TestPrintersDependOnNoStatistics), and
// never on cmd/nccltune; no library imports ui.
package ui
