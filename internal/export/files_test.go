package export

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
)

// TestRender checks that Render gives one file per band (one for the
// tuner's CSV), each what Write renders, and refuses two studies of one
// band as a usage error.
func TestRender(t *testing.T) {
	bands := twoBands(t)
	o := Options{Now: fixedNow}
	for _, tc := range []struct {
		f     Format
		files int
	}{{FormatEnv, 2}, {FormatK8s, 2}, {FormatTuner, 1}} {
		docs, err := Render(tc.f, bands, o)
		if err != nil || len(docs) != tc.files {
			t.Fatalf("Render(%s) = %d files, %v; want %d", tc.f, len(docs), err, tc.files)
		}
		for i, d := range docs {
			group := bands[i : i+1]
			if tc.f == FormatTuner {
				group = bands
			}
			if d.Name != FileName(tc.f, group[0]) || !bytes.Equal(d.Data, render(t, tc.f, group, o)) {
				t.Errorf("Render(%s) file %d is %s, not what Write renders for %s", tc.f, i, d.Name, group[0].Study.Name)
			}
		}
	}
	twice := []*Recommendation{bands[0], bands[0]}
	if _, err := Render(FormatEnv, twice, o); !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), "cover the same band") {
		t.Errorf("Render of one band twice: %v, want a usage error", err)
	}
}

// TestWriteFiles checks where WriteFiles puts the files: a file, or a
// directory when out is one, ends with a slash or several are due.
func TestWriteFiles(t *testing.T) {
	docs := []Doc{{Name: "a.env", Data: []byte("A=1\n")}, {Name: "b.env", Data: []byte("B=2\n")}}
	dir := t.TempDir()
	for _, tc := range []struct {
		out     string
		docs    []Doc
		several bool
		want    []string // the paths written, relative to dir
	}{
		{"one.env", docs[:1], false, []string{"one.env"}},
		{"sub/", docs[:1], false, []string{"sub/a.env"}},
		{"sub", docs[1:], false, []string{"sub/b.env"}}, // now a directory
		{"many", docs, true, []string{"many/a.env", "many/b.env"}},
	} {
		var log bytes.Buffer
		if err := WriteFiles(dir+"/"+tc.out, tc.docs, tc.several, &log); err != nil {
			t.Fatalf("WriteFiles(%s): %v", tc.out, err)
		}
		for i, p := range tc.want {
			full := filepath.Join(dir, p)
			if got, err := os.ReadFile(full); err != nil || !bytes.Equal(got, tc.docs[i].Data) {
				t.Errorf("WriteFiles(%s): %s holds %q, %v; want %q", tc.out, p, got, err, tc.docs[i].Data)
			}
			if !strings.Contains(log.String(), "wrote "+full+"\n") {
				t.Errorf("WriteFiles(%s) did not say it wrote %s: %q", tc.out, full, log.String())
			}
		}
	}
	err := WriteFiles(filepath.Join(dir, "none", "x.env"), docs[:1], false, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a file in a missing directory: %v, want it refused", err)
	}
}
