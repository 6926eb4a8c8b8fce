package stored

import (
	"errors"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// Study is one study as read from the store, with its trials by number
// and every launch in order; LaunchStats is set by a command that draws
// it (launchstats.Figures).
type Study struct {
	Study       *store.Study
	Trials      []*store.Trial
	Launches    []*store.Launch
	LaunchStats LaunchStats
}

// StartHint is how to make a first study, for a database that holds none.
const StartHint = "run nccltune search --sim spark4 --band 512K-4M"

// OpenReview opens the database read-only for a command that reads named
// studies; a missing database is a usage error naming query.
func OpenReview(path, query string) (*store.Store, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, vocab.UsageErrorf("no study %q: %v — %s", query, err, StartHint)
	}
	return st, err
}

// ListStudies lists the summaries of the studies that carry every label
// in labels; a missing database holds none.
func ListStudies(path string, labels map[string]string) ([]store.StudySummary, error) {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sums, err := st.Studies()
	if err != nil || len(labels) == 0 {
		return sums, err
	}
	var out []store.StudySummary
next:
	for _, s := range sums {
		for k, v := range labels {
			if got, ok := s.Labels[k]; !ok || got != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// LoadOptions says how Load reads the named studies.
type LoadOptions struct {
	Distinct bool // refuse one study named twice (export would write it twice)
	Reread   bool // parse old NCCL logs again (rereadTransport)
}

// ReviewLoad is how the review commands read studies.
var ReviewLoad = LoadOptions{Reread: true}

// LoadOne loads a study, its trials and its launches in one short
// read-only visit, as the review commands read it.
func LoadOne(path, query string) (*Study, error) {
	studies, err := Load(path, []string{query}, ReviewLoad)
	if err != nil {
		return nil, err
	}
	return studies[0], nil
}

// Load loads each named study with its trials and launches in one short
// read-only visit, so review commands work while a search runs. An
// unknown study is vocab.ErrUsage naming the closest names.
func Load(path string, queries []string, how LoadOptions) ([]*Study, error) {
	st, err := OpenReview(path, queries[0])
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []*Study
	given := map[uint64]string{}
	for _, q := range queries {
		study, err := st.Study(q)
		if errors.Is(err, store.ErrNotFound) {
			return nil, vocab.Mark(vocab.ErrUsage, err)
		}
		if err != nil {
			return nil, err
		}
		if first, dup := given[study.ID]; dup && how.Distinct {
			return nil, vocab.UsageErrorf("%q and %q are the same study, %s: give it once", first, q, study.Name)
		}
		given[study.ID] = q
		trials, launches, err := st.TrialsAndLaunches(study.ID)
		if err != nil {
			return nil, err
		}
		if how.Reread {
			rereadTransport(st, study, launches)
		}
		out = append(out, &Study{Study: study, Trials: trials, Launches: launches})
	}
	return out, nil
}

// rereadTransport parses again the stored NCCL logs of launches whose
// facts predate reading NCCL's channel lines ("Using network …" says
// nothing of the data on one host), and completes the study's fabric from
// them, in memory only.
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
		if again := benchfmt.ParseFacts(append(append([]byte{}, raw.Stdout...), raw.Stderr...)); again != nil && len(again.Routes) > 0 {
			l.Facts = again
		}
	}
	for _, l := range launches {
		if l.Phase == vocab.PhaseExplain && l.Facts != nil && len(l.Facts.Routes) > 0 {
			study.Platform.AddTransport(l.Facts)
			return
		}
	}
}
