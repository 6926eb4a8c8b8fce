package main

// The export recipes of docs/EXPORT.md (and README's copies of them), run
// as written, in dash and in bash, against stand-in docker, kubectl and
// engine programs (standin_test.go), for every value nccltune can
// recommend (nccl.ValueExamples): NCCL must see exactly the recommended
// value, in every process the recipe starts.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nccltune/nccltune/internal/export"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/safetext"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/store"
)

// recipeStarts is every recipe of docs/EXPORT.md and how many processes
// it starts (containers, services, pods' containers, the engine): the
// doc and this list must agree.
var recipeStarts = map[string]int{
	"docker-env-file":     1,
	"docker-flags":        1,
	"compose-env-file":    1,
	"compose-environment": 1,
	"k8s-pod":             1,
	"k8s-deployment":      1,
	"k8s-leaderworkerset": 2,
	"shell-sglang":        1,
	"shell-vllm":          1,
	"vllm-ray":            2,
	"sglang-multinode":    1,
}

// docRecipe is a recipe block of a doc, and the files it needs.
type docRecipe struct {
	script string
	files  map[string]string
}

var fenceRE = regexp.MustCompile("(?m)^```(\\w+)((?: [\\w.-]+=[\\w.-]+)*)\\n((?s:.*?))^```\\n")

// readRecipes returns the recipe blocks of a markdown file: ```sh
// recipe=NAME blocks and the ```yaml file=F recipe=NAME blocks they use.
func readRecipes(t *testing.T, path string) map[string]*docRecipe {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*docRecipe{}
	for _, m := range fenceRE.FindAllStringSubmatch(string(data), -1) {
		attrs := map[string]string{}
		for _, kv := range strings.Fields(m[2]) {
			k, v, _ := strings.Cut(kv, "=")
			attrs[k] = v
		}
		name := attrs["recipe"]
		if name == "" {
			continue
		}
		r := out[name]
		if r == nil {
			r = &docRecipe{files: map[string]string{}}
			out[name] = r
		}
		switch {
		case m[1] == "sh" && attrs["file"] == "":
			if r.script != "" {
				t.Fatalf("%s: two scripts for recipe %s", path, name)
			}
			r.script = m[3]
		case attrs["file"] != "":
			r.files[attrs["file"]] = m[3]
		default:
			t.Fatalf("%s: recipe %s: a %s block without file=", path, name, m[1])
		}
	}
	return out
}

// packValues spreads the recommendable values that keep says to keep
// over envs, adding as few recommended envs as it can: a value joins the
// first env without its knob that stays valid and loses nothing in the
// written export (no cap pair made loose, no default).
func packValues(t *testing.T, envs []map[string]string, keep func(value string) bool) []map[string]string {
	t.Helper()
	examples := nccl.ValueExamples()
	var knobs []string
	for k := range examples {
		knobs = append(knobs, k)
	}
	sort.Strings(knobs)
	for _, k := range knobs {
	value:
		for _, v := range examples[k] {
			if !keep(v) {
				continue
			}
			for _, env := range envs {
				if _, taken := env[k]; taken {
					continue
				}
				env[k] = v
				written, dropped := export.WrittenEnv(env)
				if nccl.Config(env).Validate() == nil && len(dropped) == 0 && len(written) == len(env) {
					continue value
				}
				delete(env, k)
			}
			env := map[string]string{k: v}
			if err := nccl.Config(env).Validate(); err != nil {
				t.Fatalf("%s=%s from nccl.ValueExamples: %v", k, v, err)
			}
			envs = append(envs, env)
		}
	}
	return envs
}

// storeRecipeStudy stores a finished search that recommends env as study
// 3 (s3-512K-4M, the name the recipes use) after two sweeps.
func storeRecipeStudy(t *testing.T, db string, env, base map[string]string) {
	t.Helper()
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 2; i++ {
		if err := st.CreateStudy(&store.Study{Kind: vocab.KindSweep, Status: vocab.StatusDone}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := nccl.ParseBand("512K-4M")
	s := &store.Study{Kind: vocab.KindSearch, Band: "512K-4M", BandMin: b.Min, BandMax: b.Max, Collective: "all_reduce",
		BaseEnv: base, Platform: store.Platform{NCCLVersion: "2.30.7", Ranks: 8, Nodes: 2}, Status: vocab.StatusRunning}
	if err := st.CreateStudy(s); err != nil {
		t.Fatal(err)
	}
	if s.ID != 3 {
		t.Fatalf("the search is study %d, want 3", s.ID)
	}
	s.Status = vocab.StatusDone
	s.Recommendation = &store.Recommendation{Env: env, Speedup: 1.5, SpeedupCI: [2]float64{1.4, 1.6}, CILevel: 0.95, Significant: true, PValue: 0.002,
		BaselineLaunches: 6, CandidateLaunches: 6}
	if err := st.UpdateStudy(s); err != nil {
		t.Fatal(err)
	}
}

// standinBin writes the stand-in scripts (and nccltune itself, this test
// binary in its CLI role) into a directory to put first on PATH.
func standinBin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	scripts := map[string]string{"nccltune": cliChildEnv + "=1"}
	for _, role := range []string{"docker", "kubectl", "python", "vllm"} {
		scripts[role] = standinEnv + "=" + role
	}
	for name, env := range scripts {
		text := "#!/bin/sh\n" + env + " exec " + safetext.ShellWord(self) + ` "$@"` + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// runRecipe runs r in shell from dir, a fresh directory, and returns the
// stand-ins' records. It fails with an error, not through t, since the
// recipes of an env run side by side (TestRecipesAsWritten).
func runRecipe(dir, shell, bin, db string, r *docRecipe) ([]standinRecord, error) {
	for name, text := range r.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	rc, err := os.ReadFile(filepath.Join("testdata", "recipes", "run_cluster.sh"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "run_cluster.sh"), rc, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "recipe.sh")
	if err := os.WriteFile(script, []byte(r.script), 0o644); err != nil {
		return nil, err
	}
	log := filepath.Join(dir, "standin.log")
	cmd := exec.Command(shell, script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + dir,
		"NCCLTUNE_DB=" + db, standinLogEnv + "=" + log}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s\n--- the recipe:\n%s", shell, script, err, out, r.script)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		return nil, fmt.Errorf("no stand-in ran: %v\n%s", err, out)
	}
	var records []standinRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec standinRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s: %w", log, err)
		}
		records = append(records, rec)
	}
	return records, nil
}

// recipesAtOnce is how many recipes of one env run side by side: a recipe
// is a chain of short processes (shell, nccltune, a stand-in) that keeps
// a core a third busy, so one at a time left the test waiting on exec.
const recipesAtOnce = 3

// recipeRun is one recipe run in one shell for one recommended env.
type recipeRun struct {
	env     map[string]string
	recipe  string
	shell   string
	records []standinRecord
	// dir is where it ran: its YAML files are read after every run.
	dir string
}

// TestRecipesAsWritten runs every recipe of docs/EXPORT.md for every value
// nccltune can recommend and checks that each process the recipe starts
// gets exactly the recommended NCCL env, and no other NCCL variable (a
// quoted flag once gave docker a variable named 'NCCL_ALGO). README's
// recipes are the same blocks (TestReadmeRecipesAreTheCatalogues).
func TestRecipesAsWritten(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every recipe in two shells for every value")
	}
	recipes := readRecipes(t, filepath.Join("..", "..", "docs", "EXPORT.md"))
	for name := range recipes {
		if _, ok := recipeStarts[name]; !ok {
			t.Errorf("docs/EXPORT.md has recipe %s, which recipeStarts does not list", name)
		}
	}
	for name := range recipeStarts {
		if r := recipes[name]; r == nil || r.script == "" {
			t.Errorf("docs/EXPORT.md has no sh block for recipe %s", name)
		}
	}
	var shells []string
	for _, s := range []string{"dash", "bash"} {
		if _, err := exec.LookPath(s); err == nil {
			shells = append(shells, s)
		}
	}
	if len(shells) == 0 {
		t.Skip("neither dash nor bash is installed")
	}
	bin := standinBin(t)
	base := map[string]string{"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_SOCKET_IFNAME": "^docker0,lo"}
	covered := map[string]bool{}
	var runs []*recipeRun
	top := t
	t.Run("run", func(t *testing.T) {
		// Every recipe runs in both shells for the envs holding a value a
		// shell could read (safetext.ShellPlain's rule: a ;, quote, $,
		// space, glob...), since that is where dash and bash could part;
		// the other values fill those envs first. A value ShellSafe
		// passes is one word that means itself typed and after $(…)'s
		// splitting in any POSIX shell, so dash and bash cannot read it
		// differently: the envs holding only such values run each recipe
		// in one shell, the two taking turns (308 runs became 209). The
		// first env runs in both shells whatever it holds, so every
		// recipe's own text meets both shells.
		read := packValues(t, nil, func(v string) bool { return !safetext.ShellPlain(v) })
		both := max(len(read), 1)
		envs := packValues(t, read, safetext.ShellPlain)
		for i, env := range envs {
			envShells := shells
			if i >= both {
				envShells = shells[i%len(shells) : i%len(shells)+1]
			}
			db := filepath.Join(t.TempDir(), "recipes.db")
			storeRecipeStudy(t, db, env, base)
			for k, v := range env {
				covered[k+"="+v] = true
			}
			var ofEnv []*recipeRun
			for _, name := range sortedKeys(recipeStarts) {
				for _, shell := range envShells {
					ofEnv = append(ofEnv, &recipeRun{env: env, recipe: name, shell: shell, dir: top.TempDir()})
				}
			}
			runs = append(runs, ofEnv...)
			t.Run(fmt.Sprintf("env%d", i), func(t *testing.T) {
				t.Parallel() // each env has its own database and directories
				// Each run has a directory of its own; export only reads
				// the database.
				errs := make([]error, len(ofEnv))
				slots := make(chan struct{}, recipesAtOnce)
				var wg sync.WaitGroup
				for j, r := range ofEnv {
					wg.Add(1)
					go func() {
						defer wg.Done()
						slots <- struct{}{}
						defer func() { <-slots }()
						r.records, errs[j] = runRecipe(r.dir, r.shell, bin, db, recipes[r.recipe])
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	// One python3 reads every YAML file the recipes handed docker compose
	// and kubectl: one start instead of one a recipe.
	var files []string
	for _, r := range runs {
		for _, rec := range r.records {
			if rec.YAML != "" {
				files = append(files, rec.YAML)
			}
		}
	}
	docs, err := pyYAML(files)
	if err == errNoYAML {
		t.Skip("python3 with PyYAML is not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		t.Run(fmt.Sprint(r.env)+"/"+r.recipe+"/"+r.shell, func(t *testing.T) {
			var starts []standinStart
			for _, rec := range r.records {
				if rec.YAML != "" {
					if rec.Starts, err = yamlStarts(rec, docs[rec.YAML]); err != nil {
						t.Fatalf("%s %q: %v", rec.Tool, rec.Argv, err)
					}
				}
				starts = append(starts, rec.Starts...)
			}
			if len(starts) != recipeStarts[r.recipe] {
				t.Fatalf("%d processes started, want %d: %+v", len(starts), recipeStarts[r.recipe], starts)
			}
			for _, s := range starts {
				got := map[string]string{}
				for k, v := range s.Env {
					if strings.Contains(k, "NCCL") && !strings.HasPrefix(k, "NCCLTUNE_") {
						got[k] = v
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(r.env) {
					t.Errorf("%s gets the NCCL env\n%q\nwant\n%q", s.What, got, r.env)
				}
			}
		})
	}
	for knob, values := range nccl.ValueExamples() {
		for _, v := range values {
			if !covered[knob+"="+v] {
				t.Errorf("%s=%s was run in no recipe", knob, v)
			}
		}
	}
}

// TestReadmeRecipesAreTheCatalogues: a recipe README shows is the block of
// docs/EXPORT.md of the same name, so TestRecipesAsWritten runs it too.
func TestReadmeRecipesAreTheCatalogues(t *testing.T) {
	t.Parallel()
	docs := readRecipes(t, filepath.Join("..", "..", "docs", "EXPORT.md"))
	readme := readRecipes(t, filepath.Join("..", "..", "README.md"))
	if len(readme) == 0 {
		t.Fatal("README.md shows no recipe=NAME block: its export recipes are untested")
	}
	for name, r := range readme {
		d := docs[name]
		if d == nil {
			t.Errorf("README.md's recipe %s is not in docs/EXPORT.md", name)
			continue
		}
		if r.script != d.script || fmt.Sprint(r.files) != fmt.Sprint(d.files) {
			t.Errorf("README.md's recipe %s differs from docs/EXPORT.md's:\n%s\n---\n%s", name, r.script, d.script)
		}
	}
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
