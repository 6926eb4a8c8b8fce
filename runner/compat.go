package runner

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
//
// The output formats and the launch record moved to package benchfmt.
// These aliases and forwards keep code that still says runner.Result,
// runner.Parse or runner.OK compiling while cmd/nccltune is edited by
// several people; the lead removes this file with one sed at the end.
// New code uses benchfmt directly.

import "github.com/nccltune/nccltune/benchfmt"

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
type (
	Launch       = benchfmt.Launch
	Outcome      = benchfmt.Outcome
	Result       = benchfmt.Result
	Device       = benchfmt.Device
	Row          = benchfmt.Row
	Measure      = benchfmt.Measure
	IterStats    = benchfmt.IterStats
	Facts        = benchfmt.Facts
	Choice       = benchfmt.Choice
	Path         = benchfmt.Path
	RankPlace    = benchfmt.RankPlace
	Route        = benchfmt.Route
	FabricLog    = benchfmt.NCCLInit
	NetDevice    = benchfmt.NetDevice
	FailureError = benchfmt.FailureError
)

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
const (
	OK       = benchfmt.OK
	Failed   = benchfmt.Failed
	TimedOut = benchfmt.TimedOut
	Invalid  = benchfmt.Invalid

	ReasonInterrupted     = benchfmt.ReasonInterrupted
	InstrumentNCCLTests   = benchfmt.InstrumentNCCLTests
	InstrumentTorch       = benchfmt.InstrumentTorch
	TorchInstrumentName   = benchfmt.TorchInstrumentName
	TorchFormatVersion    = benchfmt.TorchFormatVersion
	SimulatedHeaderPrefix = benchfmt.SimulatedHeaderPrefix
	SimulatedJSONKey      = benchfmt.SimulatedJSONKey
	JSONVersion           = benchfmt.JSONVersion
	KindP2P               = benchfmt.KindP2P
	KindSHM               = benchfmt.KindSHM
	KindNET               = benchfmt.KindNET
	ScopeWithinHost       = benchfmt.ScopeWithinHost
	ScopeBetweenHosts     = benchfmt.ScopeBetweenHosts
	ScopeBoth             = benchfmt.ScopeBoth
	MaxLineBytes          = benchfmt.MaxLineBytes
	MaxRowBytes           = benchfmt.MaxRowBytes
	MaxTimeUS             = benchfmt.MaxTimeUS
	MaxBandwidth          = benchfmt.MaxBandwidth
)

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
var (
	ErrNoTable        = benchfmt.ErrNoTable
	Parse             = benchfmt.Parse
	ParseText         = benchfmt.ParseText
	ParseJSON         = benchfmt.ParseJSON
	ParseTorch        = benchfmt.ParseTorch
	ParseFacts        = benchfmt.ParseFacts
	ParseFabricLog    = benchfmt.ParseNCCLInit
	NCCLVersionString = benchfmt.NCCLVersionString
	SimulatedHeader   = benchfmt.SimulatedHeader
	RoutesText        = benchfmt.RoutesText
	RankList          = benchfmt.RankList
	TransportNetwork  = benchfmt.TransportNetwork
)
