package ui

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nccltune/nccltune/internal/runresult"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/texttable"
	"github.com/nccltune/nccltune/store"
)

// ImportReport is what import did: the study and trial the files went
// into (Created when import made the study), and the files.
type ImportReport struct {
	Study    *store.Study
	Trial    *store.Trial
	Created  bool
	Imported []runresult.ImportedFile
	Skipped  []runresult.SkippedFile
}

// PrintImport prints r: import's --json document, or the table of stored
// files and the list of those not stored. errorOf puts why a file was
// not stored in the one error shape.
func PrintImport(w io.Writer, asJSON bool, r ImportReport, errorOf func(error) ErrorJSON) error {
	if asJSON {
		return WriteJSON(w, importJSON(r, errorOf))
	}
	writeImportReport(w, r)
	return nil
}

// writeImportReport prints the report as text, file names and reasons
// escaped.
func writeImportReport(w io.Writer, r ImportReport) {
	study, trial, imported := r.Study, r.Trial, r.Imported
	if len(imported) > 0 {
		verb := "study"
		if r.Created {
			verb = "a new study"
		}
		sim := ""
		if study.Simulated {
			sim = " [SIMULATED fabric: not a measurement]"
		}
		what := texttable.Plural(len(imported), "file")
		if pairs := strings.Count(fmt.Sprint(imported), " (one run)"); pairs > 0 {
			what = fmt.Sprintf("%s (%s: a text output and its JSON are one run)", texttable.Plural(len(imported), "run"), texttable.Plural(len(imported)+pairs, "file"))
		}
		fmt.Fprintf(w, "imported %s into %s %s, trial %d (%s)%s\n", what, verb, safetext.Escape(study.Name), trial.Number, safetext.Escape(trial.Config.String()), sim)
		tw := texttable.New(w)
		fmt.Fprintln(tw, "  FILE\tLAUNCH\tOUTCOME\tCOLLECTIVE\tRANKS\tROWS\t")
		for _, f := range imported {
			outcome := f.Outcome
			if f.Reason != "" {
				outcome += ": " + f.Reason
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%d\t\n", safetext.Escape(f.File), f.Seq, safetext.Escape(outcome), safetext.Escape(orDash(f.Collective)), f.NRanks, f.Rows)
		}
		tw.Flush()
		fmt.Fprintf(w, "see it with: nccltune show %s --trials\n", safetext.Escape(study.Name))
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "not imported (%s, nothing stored):\n", texttable.Plural(len(r.Skipped), "file"))
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", safetext.Escape(s.File), safetext.Escape(s.Error))
		}
	}
}

// importJSON is import's --json document.
func importJSON(r ImportReport, errorOf func(error) ErrorJSON) map[string]any {
	type skippedJSON struct {
		File  string    `json:"file"`
		Error ErrorJSON `json:"error"`
	}
	skipped := []skippedJSON{}
	for _, f := range r.Skipped {
		skipped = append(skipped, skippedJSON{f.File, errorOf(errors.New(f.Error))})
	}
	doc := map[string]any{
		"study":     nil,
		"created":   r.Created,
		"simulated": false,
		"trial":     nil,
		"imported":  append([]runresult.ImportedFile{}, r.Imported...),
		"skipped":   skipped,
	}
	if r.Study != nil && len(r.Imported) > 0 {
		doc["study"], doc["simulated"] = r.Study.Name, r.Study.Simulated
		doc["trial"] = map[string]any{"number": r.Trial.Number, "id": r.Trial.ID, "env": map[string]string(r.Trial.Config.Clone())}
	}
	return doc
}
