// Package benchfmt reads what a benchmark launch prints and holds the
// records nccltune keeps of it (Launch, Size). It knows nothing of how a
// launch is run, of studies or of the statistics.
//
// It reads nccl-tests' text output with NCCL_DEBUG lines mixed in (Parse,
// which detects the format), its -J JSON (ParseJSON), the torch
// instrument's JSON lines (ParseTorch, ParseBatch), NCCL's debug log in one
// pass (ParseNCCLLog: Facts and NCCLInit), and what a real process called,
// from COLL/TUNING/INIT lines or NCCL Inspector's records (ParseCalls).
//
// The parsers never panic on damaged input: a row they cannot trust is
// dropped with a note, and the error says why the output is not a complete
// run (ErrNoTable, *FailureError).
package benchfmt
