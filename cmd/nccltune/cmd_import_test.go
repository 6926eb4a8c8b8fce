package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

const importDir = "testdata/import/"

func readDB(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestImportNewStudy(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "import.db")
	txt, js := importDir+"ar2_full_periter.txt", importDir+"ar2_full_periter.json"
	// The JSON records the env it ran with (NCCL's defaults here): the
	// trial is that config, and the text beside it is the same run.
	stdout, stderr, code := runCLI(t, db, "import", txt, js, importDir+"ar2_debug_tuning.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGolden(t, "import/report.golden", []byte(stdout))

	st := readDB(t, db)
	study, err := st.Study("s1-import")
	if err != nil {
		t.Fatal(err)
	}
	if study.Kind != vocab.KindImport || study.Simulated || study.Status != vocab.StatusDone || study.Collective != "all_reduce" ||
		study.Platform.NCCLVersion != "2.28.3" || study.Platform.Ranks != 2 || study.Platform.GPU != "NVIDIA H200" || study.Band != "8-128M" {
		t.Errorf("study %+v", study)
	}
	trials, err := st.Trials(study.ID)
	if err != nil || len(trials) != 1 {
		t.Fatalf("trials %v, %v", trials, err)
	}
	// The text and the JSON of one run are one launch, not two.
	if trials[0].Key != "" || trials[0].Launches != 2 || trials[0].Role != vocab.RoleImport {
		t.Errorf("trial %+v", trials[0])
	}
	launches, err := st.Launches(study.ID)
	if err != nil || len(launches) != 2 {
		t.Fatalf("launches %v, %v", launches, err)
	}
	l := launches[0]
	jsData, _ := os.ReadFile(js)
	txtData, _ := os.ReadFile(txt)
	want, _ := benchfmt.Parse(jsData)
	abs, _ := filepath.Abs(js)
	if l.Phase != vocab.PhaseImport || l.Outcome != benchfmt.OK || l.Simulated || l.Source != abs || l.Start.IsZero() ||
		!reflect.DeepEqual(l.Sizes, benchfmt.SizesOf(want)) || len(l.Env) != 0 {
		t.Errorf("launch from %s: %+v", js, l)
	}
	raw, err := st.RawOutput(l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw.JSON) != string(jsData) || string(raw.Stdout) != string(txtData) {
		t.Errorf("the run's raw output is not both files as saved")
	}
	if len(l.Sizes[len(l.Sizes)-1].Samples) == 0 {
		t.Error("the JSON import lost its per-iteration samples")
	}
	if f := launches[1].Facts; f == nil || len(f.Choices) == 0 {
		t.Errorf("the NCCL_DEBUG import lost its facts: %+v", f)
	}
}

// TestImportPairsOnlyOneRun: a text and a JSON of different runs are two
// launches.
func TestImportPairsOnlyOneRun(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "import.db")
	stdout, stderr, code := runCLI(t, db, "import", importDir+"ar2_full_periter.json", importDir+"ar2_debug_tuning.txt")
	if code != 0 || !strings.HasPrefix(stdout, "imported 2 files into a new study s1-import") {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
}

func TestImportReportsUnparsableFiles(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "import.db")
	stdout, stderr, code := runCLI(t, db, "import", importDir+"ar2_full_periter.txt", importDir+"garbage.txt",
		importDir+"ar2_truncated.txt", importDir+"ar2_bad_proto.txt", importDir+"missing.txt")
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want %d", code, exitCheckFailed)
	}
	for _, want := range []string{
		"imported 1 file into a new study s1-import",
		"not imported (4 files, nothing stored):",
		importDir + "garbage.txt: not nccl-tests output",
		importDir + "ar2_truncated.txt: the run failed or its output stops early",
		importDir + "ar2_bad_proto.txt: the run failed or its output stops early",
		importDir + "missing.txt: cannot read it: no such file or directory",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report does not say %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "4 of 5 files were not imported") {
		t.Errorf("stderr %q", stderr)
	}
	st := readDB(t, db)
	sums, err := st.Studies()
	if err != nil || len(sums) != 1 || sums[0].Launches != 1 || sums[0].Trials != 1 {
		t.Fatalf("stored %+v, %v: want one launch, nothing of the bad files", sums, err)
	}

	// Nothing importable: no study at all.
	db2 := filepath.Join(t.TempDir(), "none.db")
	stdout, _, code = runCLI(t, db2, "import", importDir+"garbage.txt", "--json")
	if code != exitCheckFailed {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Study    *string          `json:"study"`
		Imported []map[string]any `json:"imported"`
		Skipped  []struct {
			File  string `json:"file"`
			Error struct {
				Code    int    `json:"code"`
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"skipped"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Study != nil || len(doc.Imported) != 0 || len(doc.Skipped) != 1 || doc.Skipped[0].File != importDir+"garbage.txt" ||
		doc.Skipped[0].Error.Code != exitCheckFailed || doc.Skipped[0].Error.Kind != "failed" || !strings.Contains(doc.Skipped[0].Error.Message, "not nccl-tests output") {
		t.Errorf("json %+v", doc)
	}
	if _, err := os.Stat(db2); !os.IsNotExist(err) {
		t.Error("a database was created though nothing was imported")
	}
}

func TestImportIntoExistingStudy(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "import.db")
	fillReviewDB(t, db) // s1-512K-4M (search) … lab-runs (import, trial NCCL_ALGO=Tree)
	run := func(args ...string) (string, string, int) {
		return runCLI(t, db, append([]string{"import"}, args...)...)
	}

	if _, stderr, code := run("--study", "lab-runs", "--env", "NCCL_ALGO=Tree", importDir+"ar2_full_periter.txt"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stderr, code := run("--study", "lab-runs", "--env", "NCCL_ALGO=Ring", "--env", "NCCL_IB_HCA=mlx5_0", importDir+"ar2_debug_tuning.txt"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st := readDB(t, db)
	study, _ := st.Study("lab-runs")
	trials, _ := st.Trials(study.ID)
	if len(trials) != 2 || trials[0].Launches != 3 || trials[1].Key != "NCCL_ALGO=Ring NCCL_IB_HCA=mlx5_0" || trials[1].Launches != 1 || study.Launches != 4 {
		t.Fatalf("after two imports: %d trials, %d launches: %+v %+v", len(trials), study.Launches, trials[0], trials[1])
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--study", "lab-run", importDir + "ar2_full_periter.txt"}, "closest: lab-runs"},
		{[]string{"--study", "s1-512K-4M", importDir + "ar2_full_periter.txt"}, "is a search; import adds only to import studies"},
		{[]string{"--env", "NCCL_PROTO=bogus", importDir + "ar2_full_periter.txt"}, "NCCL_PROTO"},
		{[]string{"--env", "1X=2", importDir + "ar2_full_periter.txt"}, "not an environment variable name"},
		{[]string{importDir + "sim_spark4.txt", importDir + "ar2_full_periter.txt"}, "import them separately"},
		{[]string{"--study", "lab-runs", "--env", "NCCL_ALGO=Ring", importDir + "ar2_full_periter.json"}, "records that it ran with NCCL's defaults, not the --env given (NCCL_ALGO=Ring)"},
		{nil, "at least one FILE"},
	} {
		_, stderr, code := run(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("import %v: exit %d, %q; want exit %d saying %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if sums, _ := st.Studies(); len(sums) != 4 || sums[2].Launches != 4 {
		t.Errorf("a refused import stored something: %+v", sums)
	}
}

func TestImportSimulated(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "import.db")
	stdout, stderr, code := runCLI(t, db, "import", importDir+"sim_spark4.txt", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Study     string `json:"study"`
		Simulated bool   `json:"simulated"`
		Created   bool   `json:"created"`
		Trial     struct {
			Number int               `json:"number"`
			Env    map[string]string `json:"env"`
		} `json:"trial"`
		Imported []struct {
			File      string `json:"file"`
			Simulated bool   `json:"simulated"`
			Outcome   string `json:"outcome"`
			Rows      int    `json:"rows"`
		} `json:"imported"`
	}
	decodeOneJSON(t, stdout, &doc)
	if doc.Study != "s1-import" || !doc.Simulated || !doc.Created || doc.Trial.Env == nil || len(doc.Imported) != 1 ||
		!doc.Imported[0].Simulated || doc.Imported[0].Outcome != "ok" || doc.Imported[0].Rows != 4 {
		t.Fatalf("json %+v", doc)
	}
	stdout, _, _ = runCLI(t, db, "history")
	if !strings.Contains(stdout, "SIMULATED:spark4") {
		t.Errorf("history does not label the simulated import:\n%s", stdout)
	}
	// A real output cannot join a simulated study.
	stdout, _, code = runCLI(t, db, "import", "--study", "s1-import", importDir+"ar2_full_periter.txt")
	if code != exitCheckFailed || !strings.Contains(stdout, "study s1-import is SIMULATED") {
		t.Errorf("real into simulated: exit %d\n%s", code, stdout)
	}
	st := readDB(t, db)
	if sums, _ := st.Studies(); sums[0].Launches != 1 || sums[0].Trials != 1 {
		t.Errorf("after the refused file: %+v", sums[0])
	}
}

// TestImportRefusesAnotherFabric: import --study does not add a 1-host
// NVLink (P2P) log to a study of a Socket fabric NCCL counted as 2 nodes:
// the file is skipped, naming what differs; nothing of it is stored.
func TestImportRefusesAnotherFabric(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	fixtures := filepath.Join("..", "..", "internal", "benchfmt", "testdata", "fixtures")
	if _, stderr, code := runCLI(t, db, "import", filepath.Join(fixtures, "x2_mpirun_net_debug.txt")); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, db, "import", "--study", "s1", filepath.Join(fixtures, "x2_mpirun_p2p_debug.txt"))
	stderr = stdout + stderr
	if code == 0 || !strings.Contains(stderr, "it ran on another fabric than study s1-import") || !strings.Contains(stderr, "transport P2P vs Socket") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	out, _, _ := runCLI(t, db, "show", "s1", "--json")
	if strings.Count(out, `"state"`) != 1 || !strings.Contains(out, `"launches": 1`) {
		t.Errorf("the other fabric's launch was stored:\n%s", out)
	}
}
