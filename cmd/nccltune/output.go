package main

import (
	"encoding/json"
	"io"
)

// writeJSON prints v as the one JSON document a --json command writes on stdout.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
