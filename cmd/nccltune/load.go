package main

import (
	"errors"
	"strings"

	"github.com/nccltune/nccltune/internal/ui"
	"github.com/nccltune/nccltune/report"
	"github.com/nccltune/nccltune/runner"
	"github.com/nccltune/nccltune/store"
	"github.com/nccltune/nccltune/vocab"
)

// The one way commands open the database to read studies: read-only, in
// one short visit, refusing a database that does not exist yet (exit 2)
// and naming the closest names for an unknown study.

// openReview opens the database read-only for a command that reads named
// studies; a database that does not exist yet holds none of them (exit 2).
func openReview(path, query string) (*store.Store, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, usageErrorf("no study %q: %v — %s", query, err, strings.TrimPrefix(ui.HowToStart, "no studies yet — "))
	}
	return st, err
}

// openManage opens the database for writing for rm and rename; one that
// does not exist holds no study to change (exit 2), and is not created.
func openManage(path, query string) (*store.Store, error) {
	st, err := openReview(path, query)
	if err != nil {
		return nil, err
	}
	// The read-only handle only refused a missing database: a writer
	// cannot open beside it.
	if err := st.Close(); err != nil {
		return nil, err
	}
	return store.Open(path, store.Options{})
}

// readStudies lists the summaries; a database that does not exist yet
// holds no studies.
func readStudies(path string) ([]store.StudySummary, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Studies()
}

// studyLoad says how loadStudies reads the named studies.
type studyLoad struct {
	// distinct refuses one study named twice (export would write its
	// files twice).
	distinct bool
	// reread parses again the NCCL logs of launches stored before their
	// transport's data paths were read (see rereadTransport): what show,
	// plot and the report present is what today's parser reads.
	reread bool
}

// reviewLoad is how the review commands (show, plot, report, compare of
// two studies) read studies.
var reviewLoad = studyLoad{reread: true}

// readStudy loads a study, its trials and its launches in one short
// read-only visit.
func readStudy(path, query string) (*report.Study, error) {
	studies, err := loadStudies(path, []string{query}, reviewLoad)
	if err != nil {
		return nil, err
	}
	return studies[0], nil
}

// loadStudies loads each named study with its trials and launches in one
// short read-only visit, so review commands work while a search runs. An
// unknown study is a usage error (exit 2) naming the closest names.
func loadStudies(path string, queries []string, how studyLoad) ([]*report.Study, error) {
	st, err := openReview(path, queries[0])
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []*report.Study
	given := map[uint64]string{}
	for _, q := range queries {
		study, err := st.Study(q)
		if errors.Is(err, store.ErrNotFound) {
			return nil, usageError(err)
		}
		if err != nil {
			return nil, err
		}
		if first, dup := given[study.ID]; dup && how.distinct {
			return nil, usageErrorf("%q and %q are the same study, %s: give it once", first, q, study.Name)
		}
		given[study.ID] = q
		trials, err := st.Trials(study.ID)
		if err != nil {
			return nil, err
		}
		launches, err := st.Launches(study.ID)
		if err != nil {
			return nil, err
		}
		if how.reread {
			rereadTransport(st, study, launches)
		}
		out = append(out, &report.Study{Study: study, Trials: trials, Launches: launches})
	}
	return out, nil
}

// rereadTransport reads again, with today's parser, the stored NCCL logs of
// launches whose facts were parsed before nccltune read NCCL's channel
// lines (their Transport is "Using network …", which on one host says
// nothing about the data: NVLink may carry it all), and completes the
// study's fabric from them. Only the copy in memory changes; a log that
// cannot be read leaves the facts as they were.
func rereadTransport(st *store.Store, study *store.Study, launches []*store.Launch) {
	for _, l := range launches {
		f := l.Facts
		if f == nil || f.Transport == "" || f.Network != "" || len(f.Routes) > 0 {
			continue
		}
		raw, err := st.RawOutput(l.ID)
		if err != nil || raw == nil {
			continue
		}
		if again := runner.ParseFacts(append(append([]byte{}, raw.Stdout...), raw.Stderr...)); again != nil && len(again.Routes) > 0 {
			l.Facts = again
		}
	}
	for _, l := range launches {
		if l.Phase == vocab.PhaseExplain && l.Facts != nil && len(l.Facts.Routes) > 0 {
			study.Fabric.AddTransport(l.Facts)
			return
		}
	}
}
