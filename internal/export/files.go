package export

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/vocab"
)

// Doc is one file an export writes.
type Doc struct {
	Name string // the file's name inside an --out directory
	Data []byte
}

// Render renders the bands in format f: one file per band, or for
// FormatTuner one file of them all. Every file is rendered before any is
// written, so a refusal (a usage error, vocab.ErrUsage) leaves nothing
// half done.
func Render(f Format, bands []*Recommendation, opts Options) ([]Doc, error) {
	groups := [][]*Recommendation{bands}
	if f != FormatTuner {
		groups = groups[:0]
		for _, b := range bands {
			groups = append(groups, []*Recommendation{b})
		}
	}
	var docs []Doc
	owner := map[string]string{}
	for _, g := range groups {
		var buf bytes.Buffer
		if err := Write(&buf, f, g, opts); err != nil {
			return nil, vocab.Mark(vocab.ErrUsage, err)
		}
		name := FileName(f, g[0])
		if other, dup := owner[name]; dup {
			return nil, vocab.UsageErrorf("studies %s and %s cover the same band and would both be %s: export them one at a time with --out FILE", other, g[0].Study.Name, name)
		}
		owner[name] = g[0].Study.Name
		docs = append(docs, Doc{Name: name, Data: buf.Bytes()})
	}
	return docs, nil
}

// WriteFiles writes docs to out (with internal/outfile, so what exists
// there keeps its nature) and says each path written on log: out is a
// file, or a directory when it is one, ends with a slash, or several is
// true (several files are due).
func WriteFiles(out string, docs []Doc, several bool, log io.Writer) error {
	info, statErr := os.Stat(out)
	dir := several || strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(os.PathSeparator)) || (statErr == nil && info.IsDir())
	var paths []string
	if dir {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("cannot create the output directory %s: %w; pass --out with a directory you can write", out, outfile.UnwrapPath(err))
		}
		for _, d := range docs {
			paths = append(paths, filepath.Join(out, d.Name))
		}
	} else {
		parent := filepath.Dir(out)
		if info, err := os.Stat(parent); err != nil || !info.IsDir() {
			return fmt.Errorf("cannot write %s: its directory %s does not exist; create it or pass another --out", out, parent)
		}
		paths = []string{out}
	}
	for i, p := range paths {
		data := docs[i].Data
		if err := outfile.WriteOut(p, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return err
		}
		fmt.Fprintf(log, "wrote %s\n", p)
	}
	return nil
}
