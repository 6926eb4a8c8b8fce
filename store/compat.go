package store

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
//
// A launch's stored sizes are benchfmt.Size, converted by benchfmt.SizesOf
// (and for the statistics by benchfmt.ModelLaunch). These forwards keep
// cmd/nccltune compiling while several people edit it.

import "github.com/nccltune/nccltune/benchfmt"

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
type Size = benchfmt.Size

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
var SizesFromResult = benchfmt.SizesOf
