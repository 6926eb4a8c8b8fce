package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/nccltune/nccltune/internal/vocab"
)

// SchemaVersion is the version of every --json document's shape: it
// changes when a field is removed or changes meaning, never for one added.
const SchemaVersion = 1

// WriteJSON prints v as a --json command's document, with
// "schema_version" as its first field (in each document of a list).
func WriteJSON(w io.Writer, v any) error {
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
// (or each object's in a list) unless it is there, splicing the bytes to
// keep the fields' order.
func withSchemaVersion(raw []byte) []byte {
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var probe struct {
			V *json.RawMessage `json:"schema_version"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.V != nil {
			return raw
		}
		head := fmt.Sprintf(`{"schema_version":%d`, SchemaVersion)
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

// withSeconds is v's JSON object with each named duration field given
// as "<name>_s", in seconds rather than Go's nanoseconds.
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

// ErrorJSON is the one shape of errors in JSON documents (vocab's).
type ErrorJSON = vocab.ErrorJSON

// withFields is v's JSON object with extra's fields set over it (a type
// with its own MarshalJSON hides the fields of a struct that embeds it).
func withFields(v any, extra map[string]any) map[string]json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	for k, x := range extra {
		if b, err := json.Marshal(x); err == nil {
			m[k] = b
		}
	}
	return m
}

// ErrorDocument is what a --json command prints when it fails before
// printing its own document: {"error": {"code", "kind", "message"}}.
func ErrorDocument(e ErrorJSON) map[string]any {
	return map[string]any{"error": e}
}

// jsonNumber maps NaN and Inf, which JSON cannot hold, to nil.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// nonNil is s, or an empty list: JSON's [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nonNilMap is m, or an empty map: JSON's {} rather than null.
func nonNilMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}
