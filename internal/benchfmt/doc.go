// Package benchfmt reads what a benchmark launch prints and holds the
// records nccltune keeps of it. It knows nothing of how a launch is run
// (package runner), of studies or of the statistics: a Size says what it
// measured (Size.Measured) and model.LaunchOf converts, as benchstat
// converts benchfmt's results.
//
// It reads five formats:
//
//   - nccl-tests' text output: the header, the "#  Rank" device lines, the
//     results table and its footer, mixed with NCCL_DEBUG log lines and
//     launcher messages (Parse, which detects the format);
//   - nccl-tests' JSON output of -J, version 3 (ParseJSON);
//   - the torch instrument's JSON lines, written by nccltune_allreduce.py
//     (ParseTorch), and those of its batch mode, several configs on their
//     own communicators in one launch (ParseBatch: per config NCCL's verdict
//     and per op a Result of per-round rows);
//   - NCCL's debug log (NCCL_DEBUG=INFO), read in one pass by
//     ParseNCCLLog: what it says about the fabric and NCCL's choices
//     (Facts, alone from ParseFacts) and about how NCCL set itself up:
//     environment, RDMA devices per host, the channels' network devices,
//     init progress (NCCLInit, alone from ParseNCCLInit).
//     The text parser reads the log lines mixed into nccl-tests' output
//     with the same reader, into Result.Facts;
//   - what a real process called: NCCL's COLL and TUNING log lines (with
//     INIT's communicator names) or NCCL Inspector's JSON records, one
//     Call per rank and call (ParseCalls), which `nccltune workload`
//     turns into a workload.
//
// Each parser of a benchmark's output returns a *Result: its Rows (one per
// message size and cycle, with the out-of-place and in-place Measures and,
// with per-iteration output, IterStats), the Devices, the Facts the NCCL
// log revealed, the failure messages found (Errors) and what the parser
// noticed and tolerated (Notes). The parsers never panic on damaged input:
// a row they cannot trust is dropped with a note, and the error says why
// the output is not a complete run (ErrNoTable, *FailureError).
//
// ParseLaunch reads everything one launch printed (stdout, stderr and the
// -J file) into one Result.
//
// Launch is the record of one launch (command, outcome, output and its
// Result), and Outcome classifies how it ended (OK, Failed, TimedOut,
// Invalid). Size is one message size of a launch as the store keeps it
// (SizesOf converts a Result); Size.Measured is what one size gives the
// statistics (model.LaunchOf makes their input, model.Launch).
package benchfmt
