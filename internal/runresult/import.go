package runresult

// ImportedFile is one file studyrun.Import stored, as one launch.
type ImportedFile struct {
	File       string `json:"file"`
	Launch     uint64 `json:"launch"`
	Seq        int    `json:"seq"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	Simulated  bool   `json:"simulated"`
	Collective string `json:"collective"`
	NRanks     int    `json:"nranks"`
	Rows       int    `json:"rows"`
}

// SkippedFile is a file studyrun.Import did not store, and why.
type SkippedFile struct {
	File  string `json:"file"`
	Error string `json:"error"`
}
