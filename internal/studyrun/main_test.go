package studyrun

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/outfile"
	"github.com/nccltune/nccltune/internal/sim"
	"github.com/nccltune/nccltune/store"
)

// TestMain lets the test binary be the simulated fabric's child process,
// as the nccltune executable is.
func TestMain(m *testing.M) {
	sim.RunIfChild()
	store.SkipSync = true // test databases need not survive a power cut
	code := m.Run()
	outfile.RemoveTemps() // the runner's launch directory, made once per process
	os.Exit(code)
}

// openStore opens a new database in the test's temp dir.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
