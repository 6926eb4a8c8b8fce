package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// exportChoices is what NCCL chose per size in a saved simulator log
// (spark4 with NCCL_DEBUG_SUBSYS=TUNING).
func exportChoices(t testing.TB, name string) []benchfmt.Choice {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "export", name))
	if err != nil {
		t.Fatal(err)
	}
	f := benchfmt.ParseFacts(data)
	if f == nil || len(f.Choices) == 0 {
		t.Fatalf("%s: no choices", name)
	}
	return f.Choices
}

// fillExportDB stores, by hand, the studies export meets:
//
//	s1-512K-4M  done, recommends NCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=8, explain launches
//	s2-16M-256M done, recommends NCCL_ALGO=Tree, explain launches
//	s3-1M       still running
//	s4-sweep    a sweep
//	s5-512K-4M  done, recommends, but no explain launches (an older study)
//	s6-2M       done, keeps NCCL's defaults, explain launch of the baseline
func fillExportDB(t testing.TB, path string) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defaults := exportChoices(t, "spark4_defaults.log")
	gdr := false
	search := func(band string, env map[string]string, significant bool, explain []benchfmt.Choice, status string) {
		b, err := nccl.ParseBand(band)
		if err != nil {
			t.Fatal(err)
		}
		s := &store.Study{Kind: vocab.KindSearch, Band: band, BandMin: b.Min, BandMax: b.Max, Collective: "all_reduce",
			BaseEnv:   map[string]string{"NCCL_IB_HCA": "=rocep1s0f1", "NCCL_SOCKET_IFNAME": "enP7s7"},
			Launch:    store.LaunchSettings{Launcher: "mpirun", NP: 4, SimProfile: "spark4", SimNoise: 1, SimSeed: 3},
			Platform:  store.Platform{NCCLVersion: "2.30.7", Ranks: 4, Nodes: 4, GPU: "NVIDIA GB10", Transport: "IB", GDR: &gdr},
			Simulated: true, Seed: 3, Status: vocab.StatusRunning}
		if err := st.CreateStudy(s); err != nil {
			t.Fatal(err)
		}
		base := &store.Trial{StudyID: s.ID, Role: vocab.RoleBaseline, State: vocab.TrialComplete}
		cand := &store.Trial{StudyID: s.ID, Role: vocab.RoleConfirm, State: vocab.TrialComplete, Config: env}
		for _, tr := range []*store.Trial{base, cand} {
			if err := st.AddTrial(tr); err != nil {
				t.Fatal(err)
			}
		}
		add := func(tr *store.Trial, phase string, choices []benchfmt.Choice) {
			l := &store.Launch{StudyID: s.ID, TrialID: tr.ID, Phase: phase, Outcome: benchfmt.OK, Simulated: true, Scored: phase == vocab.PhaseConfirm,
				ScoreUS: 140, Sizes: []benchfmt.Size{{Bytes: nccl.MiB, TimeUS: 140}}}
			if choices != nil {
				l.Facts = &benchfmt.Facts{NCCLVersion: "2.30.7", NRanks: 4, NNodes: 4, Choices: choices}
			}
			if err := st.AddLaunch(l, nil); err != nil {
				t.Fatal(err)
			}
		}
		add(base, vocab.PhaseConfirm, nil)
		add(cand, vocab.PhaseConfirm, nil)
		if explain != nil {
			add(base, vocab.PhaseExplain, defaults)
			if significant {
				add(cand, vocab.PhaseExplain, explain)
			}
		}
		if status == vocab.StatusRunning {
			return
		}
		s.Status = status
		s.Recommendation = &store.Recommendation{Env: env, Speedup: 8.125, SpeedupCI: [2]float64{7.875, 8.375}, CILevel: 0.95, Significant: significant,
			PValue: 0.0022, TrialID: cand.ID, BaselineLaunches: 6, CandidateLaunches: 6}
		if !significant {
			s.Recommendation.Speedup, s.Recommendation.SpeedupCI, s.Recommendation.PValue = 1.01, [2]float64{0.97, 1.05}, 0.41
		}
		if err := st.UpdateStudy(s); err != nil {
			t.Fatal(err)
		}
	}
	proto := map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}
	search("512K-4M", proto, true, exportChoices(t, "spark4_proto_nchannels8.log"), vocab.StatusDone)
	search("16M-256M", map[string]string{"NCCL_ALGO": "Tree"}, true, exportChoices(t, "spark4_algo_tree.log"), vocab.StatusDone)
	search("1M", proto, true, nil, vocab.StatusRunning)
	sweep := &store.Study{Kind: vocab.KindSweep, Status: vocab.StatusDone}
	if err := st.CreateStudy(sweep); err != nil {
		t.Fatal(err)
	}
	search("512K-4M", proto, true, nil, vocab.StatusDone)
	search("2M", map[string]string{"NCCL_MAX_NCHANNELS": "4"}, false, defaults, vocab.StatusDone)
}

var rfc3339RE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`)

// normaliseExport replaces the dates an export writes (now, and the
// study's creation) with placeholders.
func normaliseExport(b []byte) []byte {
	return rfc3339RE.ReplaceAll(b, []byte(`"YYYY-MM-DDThh:mm:ssZ"`))
}

func TestExportGolden(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"export/s1.env", []string{"export", "s1", "--format", "env"}},
		{"export/s1_with_base.sh", []string{"export", "s1-512K-4M", "--format", "sh", "--with-base"}},
		{"export/s1.docker", []string{"export", "1", "-f", "docker"}},
		{"export/s1.yaml", []string{"export", "s1", "--format", "k8s"}},
		{"export/s1.json", []string{"export", "s1", "--json"}},
		{"export/s1_s2.csv", []string{"export", "s1", "s2", "--format", "nccl-tuner"}},
		{"export/s6_keep_defaults.env", []string{"export", "s6", "--format", "env"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, db, tc.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkGolden(t, tc.golden, normaliseExport([]byte(stdout)))
		})
	}
}

func TestExportOut(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	before := fileHash(t, db)
	single := func(args ...string) string {
		stdout, stderr, code := runCLI(t, db, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	dir := t.TempDir()

	// Several studies: one file per band, each what the single export prints.
	out := filepath.Join(dir, "bands")
	_, stderr, code := runCLI(t, db, "export", "s1", "s2", "--format", "env", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for study, name := range map[string]string{"s1": "nccl-512K-4M.env", "s2": "nccl-16M-256M.env"} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if want := single("export", study, "--format", "env"); !sameExport(got, want) {
			t.Errorf("%s differs from export %s:\n%s\n---\n%s", name, study, got, want)
		}
		if !strings.Contains(stderr, "wrote "+filepath.Join(out, name)) {
			t.Errorf("stderr %q does not name %s", stderr, name)
		}
	}
	// nccl-tuner into a directory: one combined file.
	if _, stderr, code := runCLI(t, db, "export", "s1", "s2", "--format", "nccl-tuner", "--out", out+"/"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, "nccl-tuner.csv"))
	if err != nil || !sameExport(got, single("export", "s1", "s2", "--format", "nccl-tuner")) {
		t.Errorf("combined CSV (%v):\n%s", err, got)
	}
	// One study to a file, replacing what was there.
	file := filepath.Join(dir, "lane.sh")
	os.WriteFile(file, []byte("old"), 0o644)
	if _, stderr, code := runCLI(t, db, "export", "s1", "--out", file, "--format", "sh"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(file); !sameExport(got, single("export", "s1", "--format", "sh")) {
		t.Errorf("%s:\n%s", file, got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left in %s: %v", dir, entries)
	}
	// Review only: the database is untouched.
	if fileHash(t, db) != before {
		t.Error("export changed the database")
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// sameExport compares two exports but for their export date.
func sameExport(a []byte, b string) bool {
	return bytes.Equal(normaliseTimes(normaliseExport(a)), normaliseTimes(normaliseExport([]byte(b))))
}

func TestExportJSONContract(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	stdout, stderr, code := runCLI(t, db, "export", "s1", "--format", "json", "--with-base")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	decodeOneJSON(t, stdout, &doc)
	for _, k := range []string{"study", "band", "env", "speedup", "speedup_ci", "significant", "simulated", "nccl_version", "fabric", "created", "choices", "base_env"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in %s", k, stdout)
		}
	}
	env, _ := doc["env"].(map[string]any)
	if doc["study"] != "s1-512K-4M" || env["NCCL_PROTO"] != "^LL128" || env["NCCL_IB_HCA"] != "=rocep1s0f1" || doc["simulated"] != true {
		t.Errorf("document %v", doc)
	}
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "export.db")
	fillExportDB(t, db)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown study", []string{"export", "s1-512k-4m", "--format", "env"}, 2, []string{`no study "s1-512k-4m"`, "closest: s1-512K-4M"}},
		{"left running", []string{"export", "s3", "--format", "env"}, 2, []string{"s3-1M was interrupted before it decided", "--resume s3-1M"}},
		{"sweep", []string{"export", "s4", "--format", "env"}, 2, []string{"is a sweep study"}},
		{"unknown format", []string{"export", "s1", "--format", "yml2"}, 2, []string{`unknown format "yml2"`, "env, sh, docker, compose, k8s, json, nccl-tuner"}},
		{"yaml is two formats", []string{"export", "s1", "--format", "yaml"}, 2, []string{"two formats are YAML", "k8s", "compose"}},
		{"no format", []string{"export", "s1"}, 2, []string{"export needs --format", "nccl-tuner"}},
		{"json and format disagree", []string{"export", "s1", "--format", "sh", "--json"}, 2, []string{"--json and --format sh"}},
		{"no study", []string{"export", "--format", "env"}, 2, []string{"export takes one or more STUDY"}},
		{"same study twice", []string{"export", "s1", "1", "--format", "nccl-tuner"}, 2, []string{"same study"}},
		{"several to stdout", []string{"export", "s1", "s2", "--format", "env"}, 2, []string{"pass --out DIR", "--format nccl-tuner"}},
		{"same band twice", []string{"export", "s1", "s5", "--format", "env", "--out", t.TempDir()}, 2, []string{"s1-512K-4M and s5-512K-4M cover the same band"}},
		{"no explain launch", []string{"export", "s5", "--format", "nccl-tuner"}, 2, []string{"study s5-512K-4M has no record of NCCL's choices", "re-run the search"}},
		{"unknown engine", []string{"export", "s1", "--format", "env", "--export-for", "sglng"}, 2, []string{`--export-for "sglng"`, "did you mean sglang?"}},
		{"engine and the tuner CSV", []string{"export", "s1", "--format", "nccl-tuner", "--export-for", "vllm"}, 2, []string{"nccl-tuner CSV holds no env", "env, sh, docker"}},
		{"out not writable", []string{"export", "s1", "--format", "env", "--out", filepath.Join(notDir, "x.env")}, 1, []string{"cannot write", "does not exist", "another --out"}},
		{"out dir not creatable", []string{"export", "s1", "s2", "--format", "env", "--out", filepath.Join(notDir, "dir")}, 1, []string{"cannot create the output directory", "not a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, db, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if stdout != "" && !isErrorDocument(stdout) {
				t.Errorf("stdout %q, want nothing (or, with --json, the error document)", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
	// Without a database at all: the path named is not one.
	none := filepath.Join(t.TempDir(), "none.db")
	_, stderr, code := runCLI(t, none, "export", "s1", "--format", "env")
	if code != 2 || !strings.Contains(stderr, none+" (--db or NCCLTUNE_DB) does not exist") {
		t.Errorf("no database: exit %d, %q", code, stderr)
	}
}

// export --help's title names every format export writes: compose was
// missing from it.
func TestExportTitleNamesEveryFormat(t *testing.T) {
	t.Parallel()
	// How the one-line title words each format.
	words := map[export.Format]string{
		export.FormatEnv: "env file", export.FormatSh: "shell", export.FormatDocker: "docker", export.FormatCompose: "docker compose",
		export.FormatK8s: "k8s", export.FormatJSON: "JSON", export.FormatTuner: "NCCL tuner-plugin CSV",
	}
	title := exportCommand().Usage
	for _, f := range export.Formats {
		w, ok := words[f]
		if !ok {
			t.Errorf("format %s: say how the title words it", f)
			continue
		}
		if !strings.Contains(title, w) {
			t.Errorf("export's title %q does not name the %s format (%q)", title, f, w)
		}
	}
}

// TestExportForEngine: export --export-for sglang names SGLang's flags in
// the header, and refuses (exit 2) a variable SGLang assigns over the env,
// naming the flag; the base env holding one is refused only with
// --with-base, since only then is it written.
func TestExportForEngine(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "engine.db")
	storeRecipeStudy(t, db, map[string]string{"NCCL_PROTO": "^LL128", "NCCL_NVLS_ENABLE": "0"}, map[string]string{"NCCL_CUMEM_ENABLE": "0"})
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--export-for", "sglang"}, 2, []string{"cannot export NCCL_NVLS_ENABLE=0 for SGLang", "use SGLang's --enable-nccl-nvls flag instead"}},
		{[]string{"--export-for", "vllm"}, 0, []string{"# for vLLM: NCCL_CUMEM_ENABLE: vLLM 0.9.1 to 0.10 sets it to 0", "NCCL_NVLS_ENABLE=0\n"}},
		{[]string{"--export-for", "vllm", "--with-base"}, 0, []string{"NCCL_CUMEM_ENABLE=0\n"}},
		{nil, 0, []string{"# NCCL_CUMEM_ENABLE, NCCL_NVLS_ENABLE: SGLang and vLLM set this themselves at start; export with --export-for sglang|vllm"}},
	} {
		stdout, stderr, code := runCLI(t, db, append([]string{"export", "s3", "--format", "env"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout+stderr, w) {
				t.Errorf("%v: output lacks %q:\n%s%s", tc.args, w, stdout, stderr)
			}
		}
	}
}
