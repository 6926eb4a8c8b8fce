package benchfmt

// Deprecated: temporary, removed when cmd/nccltune moves to benchfmt.
//
// Old names kept while cmd/nccltune, edited by several people at once,
// still uses them (through runner's aliases).

// Deprecated: FabricLog is NCCLInit's old name.
type FabricLog = NCCLInit

// Deprecated: ParseFabricLog is ParseNCCLInit's old name.
func ParseFabricLog(data []byte) *NCCLInit { return ParseNCCLInit(data) }
