package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nccltune/nccltune/vocab"
)

// schemaVersion is the version of every --json document's shape. It
// changes when a field is removed or changes meaning, never for a field
// added; a tool reading the documents checks it.
const schemaVersion = 1

// writeJSON prints v as the one JSON document a --json command writes on
// stdout, with "schema_version" as its first field (in each document of a
// list, for commands given several inputs).
func writeJSON(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing the JSON document: %w", err)
	}
	raw = withSchemaVersion(raw)
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("writing the JSON document: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// withSchemaVersion adds "schema_version" in front of an object's fields
// (or of each object in a list) unless it is there already. Splicing the
// encoded bytes keeps the fields' order as the types declare it.
func withSchemaVersion(raw []byte) []byte {
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var probe struct {
			V *json.RawMessage `json:"schema_version"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.V != nil {
			return raw
		}
		head := fmt.Sprintf(`{"schema_version":%d`, schemaVersion)
		if bytes.Equal(raw, []byte("{}")) {
			return []byte(head + "}")
		}
		return append([]byte(head+","), raw[1:]...)
	case len(raw) > 0 && raw[0] == '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return raw
		}
		for i, it := range items {
			items[i] = withSchemaVersion(it)
		}
		out, err := json.Marshal(items)
		if err != nil {
			return raw
		}
		return out
	}
	return raw
}

// withSeconds is v's JSON object with each named duration field (Go's
// nanoseconds) given as "<name>_s", seconds, instead: a reader should not
// need to know Go's time.Duration. A field left out stays out.
func withSeconds(v any, names ...string) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	for _, n := range names {
		if ns, ok := m[n].(float64); ok {
			m[n+"_s"] = ns / 1e9
		}
		delete(m, n)
	}
	return m
}

// countingWriter counts what a command wrote, so run knows whether a
// --json command already printed its document.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// wantsJSON reports whether the command line asks for --json.
func wantsJSON(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		if a == "--" {
			return false
		}
		switch strings.TrimLeft(a, "-") {
		case "json", "json=true", "json=1":
			return strings.HasPrefix(a, "-")
		}
	}
	return false
}

// errorKinds name the exit codes of DESIGN.md in the error document.
var errorKinds = map[int]string{
	exitCheckFailed: "failed",
	exitUsage:       "usage",
	exitFabric:      "fabric",
	exitInterrupted: "interrupted",
}

// errorDocument is what a --json command prints when it fails before
// printing its own document: {"error": {"code", "kind", "message"}}.
func errorDocument(err error) map[string]any {
	code := exitCode(err)
	kind := errorKinds[code]
	if kind == "" {
		kind = "failed"
	}
	msg := err.Error()
	if errors.Is(err, vocab.ErrInterrupted) {
		msg = "interrupted by the user (Ctrl-C or SIGTERM); what was measured is saved"
	}
	return map[string]any{"error": map[string]any{"code": code, "kind": kind, "message": msg}}
}
