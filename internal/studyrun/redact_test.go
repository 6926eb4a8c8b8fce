package studyrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/search"
	"github.com/nccltune/nccltune/store"
)

// secretJSON is a real 4-rank all-reduce -J output (145 variables of rank
// 0's environment) with two secrets put at the head of its "env".
func secretJSON(t *testing.T, startTime string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "benchfmt", "testdata", "ops", "all_reduce_4r.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"env":[`), []byte(`"env":["HF_TOKEN=hf_SECRET","AWS_SECRET_ACCESS_KEY=SECRET\/KEY",`), 1)
	if startTime != "" {
		data = bytes.Replace(data, []byte(`"start_time":"`), []byte(`"start_time":"`+startTime), 1)
	}
	if !bytes.Contains(data, []byte("hf_SECRET")) || !bytes.Contains(data, []byte("HOME=")) {
		t.Fatal("the fixture has no env to put secrets in")
	}
	return data
}

// storedJSONHasNoSecret fails unless launch id's stored JSON keeps NCCL's
// variables and none of the rest of the environment.
func storedJSONHasNoSecret(t *testing.T, st *store.Store, id uint64) {
	t.Helper()
	raw, err := st.RawOutput(id)
	if err != nil || raw == nil {
		t.Fatalf("raw output of launch %d: %v", id, err)
	}
	for _, leak := range []string{"SECRET", "HOME=", "LD_LIBRARY_PATH="} {
		if bytes.Contains(raw.JSON, []byte(leak)) {
			t.Errorf("the stored JSON of launch %d holds %s", id, leak)
		}
	}
	if !bytes.Contains(raw.JSON, []byte(`"NCCL_SOCKET_IFNAME=lo"`)) || !bytes.Contains(raw.JSON, []byte(`"nccltune_env_redacted":139`)) {
		t.Errorf("the stored JSON of launch %d lost NCCL's variables or does not say it was redacted: %.600s", id, raw.JSON)
	}
}

// TestRecorderRedactsJSONEnv: a study's launch is stored without rank 0's
// environment.
func TestRecorderRedactsJSONEnv(t *testing.T) {
	st, study, rec, tr := sweepRecorder(t)
	l := &benchfmt.Launch{Outcome: benchfmt.OK, JSON: secretJSON(t, "")}
	var err error
	if l.Result, err = benchfmt.ParseJSON(l.JSON); err != nil {
		t.Fatal(err)
	}
	if err := rec.SaveLaunch(tr, search.Request{Phase: vocab.PhaseSweep}, l, false, 0); err != nil {
		t.Fatal(err)
	}
	launches, err := st.Launches(study.ID)
	if err != nil || len(launches) != 1 {
		t.Fatalf("%d launches, %v", len(launches), err)
	}
	storedJSONHasNoSecret(t, st, launches[0].ID)
}

// TestImportRedactsJSONEnv: an imported -J output is stored without rank
// 0's environment, and a run imported again is still recognised, whether
// its study stored it redacted or (a database from before) whole.
func TestImportRedactsJSONEnv(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "imp.db")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := write("first.json", secretJSON(t, ""))
	res, err := Import(context.Background(), db, []string{first}, ImportOptions{})
	if err != nil || len(res.Imported) != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storedJSONHasNoSecret(t, st, res.Imported[0].Launch)
	// A launch stored whole, as before redaction, of another run.
	study := res.Study
	launches, err := st.Launches(study.ID)
	if err != nil {
		t.Fatal(err)
	}
	older := secretJSON(t, "1")
	old := *launches[0]
	old.ID = 0
	if err := st.AddLaunch(&old, &store.Raw{JSON: older}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, path := range []string{first, write("older.json", older)} {
		res, err := Import(context.Background(), db, []string{path}, ImportOptions{Study: study.Name})
		if err != nil || len(res.Imported) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Error, "already holds this run") {
			t.Errorf("import of %s again: %+v, %v; want it skipped as already held", filepath.Base(path), res, err)
		}
	}
}
