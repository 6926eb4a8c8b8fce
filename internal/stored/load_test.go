package stored

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// TestLoad checks the loader's refusals (usage errors, exit 2) and that it
// reads a study by each of its names.
func TestLoad(t *testing.T) {
	db := filepath.Join(t.TempDir(), "load.db")
	if _, err := Load(db, []string{"s1"}, ReviewLoad); !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), StartHint) {
		t.Errorf("a missing database: %v, want a usage error saying %q", err, StartHint)
	}
	if sums, err := ListStudies(db, nil); err != nil || sums != nil {
		t.Errorf("ListStudies of a missing database = %v, %v; want none", sums, err)
	}
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateStudy(&store.Study{Kind: vocab.KindSweep}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateStudy(&store.Study{Kind: vocab.KindSweep, Labels: map[string]string{"team": "a", "run": "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   int
	}{
		{nil, 2},
		{map[string]string{"team": "a"}, 1},
		{map[string]string{"team": "a", "run": "1"}, 1},
		{map[string]string{"team": "a", "run": "2"}, 0},
		{map[string]string{"team": ""}, 0},
	} {
		if sums, err := ListStudies(db, tc.labels); err != nil || len(sums) != tc.want {
			t.Errorf("ListStudies(%v) = %d studies, %v; want %d", tc.labels, len(sums), err, tc.want)
		}
	}
	for _, tc := range []struct {
		queries []string
		how     LoadOptions
		usage   string // "" when the load succeeds
	}{
		{[]string{"s1-sweep"}, ReviewLoad, ""},
		{[]string{"1", "s1"}, LoadOptions{}, ""},
		{[]string{"1", "s1"}, LoadOptions{Distinct: true}, "are the same study"},
		{[]string{"s9"}, ReviewLoad, "s9"},
	} {
		got, err := Load(db, tc.queries, tc.how)
		switch {
		case tc.usage == "" && (err != nil || len(got) != len(tc.queries) || got[0].Name() != "s1-sweep"):
			t.Errorf("Load(%v) = %v, %v; want the study s1-sweep each time", tc.queries, got, err)
		case tc.usage != "" && (!errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), tc.usage)):
			t.Errorf("Load(%v): %v, want a usage error saying %q", tc.queries, err, tc.usage)
		}
	}
	if s, err := LoadOne(db, "s1"); err != nil || s.Name() != "s1-sweep" {
		t.Errorf("LoadOne(s1) = %v, %v", s, err)
	}
}
