package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/stored"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/internal/workload"
	"github.com/nccltune/nccltune/store"
)

func render(t *testing.T, f Format, bands []*Recommendation, o Options) []byte {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = fixedNow
	}
	var buf bytes.Buffer
	if err := Write(&buf, f, bands, o); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return buf.Bytes()
}

func twoBands(t *testing.T) []*Recommendation {
	s5 := spark4Study(5, "16M-256M", map[string]string{"NCCL_ALGO": "Tree"})
	s5.Recommendation.Speedup, s5.Recommendation.SpeedupCI = 1.06, [2]float64{1.04, 1.08}
	tree := studyWith(t, s5, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_algo_tree.log"))
	return []*Recommendation{fixtureBand(t), tree}
}

func keepDefaultsBand(t *testing.T) *Recommendation {
	s := spark4Study(4, "1M", map[string]string{"NCCL_MAX_NCHANNELS": "4"})
	s.Recommendation.Significant = false
	s.Recommendation.Speedup, s.Recommendation.SpeedupCI, s.Recommendation.PValue = 1.01, [2]float64{0.97, 1.05}, 0.41
	s.Recommendation.Reason = "the gain is not significant (p=0.41)"
	return studyWith(t, s, logChoices(t, "spark4_defaults.log"), nil)
}

func TestGolden(t *testing.T) {
	fixture, keep := fixtureBand(t), keepDefaultsBand(t)
	for _, tc := range []struct {
		golden string
		format Format
		bands  []*Recommendation
		opts   Options
	}{
		{"s3.env", FormatEnv, []*Recommendation{fixture}, Options{}},
		{"s3.sh", FormatSh, []*Recommendation{fixture}, Options{}},
		{"s3.docker", FormatDocker, []*Recommendation{fixture}, Options{}},
		{"s3.yaml", FormatK8s, []*Recommendation{fixture}, Options{}},
		{"s3.json", FormatJSON, []*Recommendation{fixture}, Options{}},
		{"s3.csv", FormatTuner, []*Recommendation{fixture}, Options{}},
		{"s3_with_base.env", FormatEnv, []*Recommendation{fixture}, Options{WithBase: true}},
		{"s3_with_base.yaml", FormatK8s, []*Recommendation{fixture}, Options{WithBase: true}},
		{"keep_defaults.env", FormatEnv, []*Recommendation{keep}, Options{}},
		{"keep_defaults.yaml", FormatK8s, []*Recommendation{keep}, Options{}},
		{"keep_defaults.docker", FormatDocker, []*Recommendation{keep}, Options{}},
		{"keep_defaults.csv", FormatTuner, []*Recommendation{keep}, Options{}},
		{"two_bands.csv", FormatTuner, twoBands(t), Options{}},
		{"timed.env", FormatEnv, []*Recommendation{timedBand(t)}, Options{}},
		{"timed.json", FormatJSON, []*Recommendation{timedBand(t)}, Options{}},
		{"timed.csv", FormatTuner, []*Recommendation{timedBand(t)}, Options{}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			checkGolden(t, tc.golden, render(t, tc.format, tc.bands, tc.opts))
		})
	}
}

func TestHeaderSaysWhereTheNumbersCameFrom(t *testing.T) {
	b := fixtureBand(t)
	real := fixtureBand(t)
	real.Study.Simulated, real.Study.Launch.SimProfile = false, ""
	want := []string{"s3-512K-4M", "band 512K-4M", "2026-03-01 12:00:00 UTC", "2026-02-28 10:30:00 UTC", "NCCL 2.30.7",
		"4 ranks on 4 nodes", "NVIDIA GB10", "transport IB", "speedup 8.12x over NCCL defaults (95% CI 7.88x-8.38x), p=0.00021"}
	for _, f := range []Format{FormatEnv, FormatSh, FormatDocker, FormatK8s} {
		out := string(render(t, f, []*Recommendation{b}, Options{}))
		for _, w := range append(want, "SIMULATED — not a measurement of hardware") {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", f, w, out)
			}
		}
		// Every comment line is one line: the header cannot leak a value.
		for _, line := range strings.Split(out, "\n") {
			if line != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") && strings.Contains(line, "nccltune") {
				t.Errorf("%s: header text outside a comment: %q", f, line)
			}
		}
		if out := string(render(t, f, []*Recommendation{real}, Options{})); strings.Contains(out, "SIMULATED") {
			t.Errorf("%s of a real study says SIMULATED:\n%s", f, out)
		}
	}
	csv := string(render(t, FormatTuner, []*Recommendation{b}, Options{}))
	if !strings.Contains(csv, "SIMULATED — not a measurement of hardware") || !strings.Contains(csv, "2026-03-01 12:00:00 UTC") {
		t.Errorf("tuner CSV header:\n%s", csv)
	}
}

func TestWrittenEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      map[string]string
		want    map[string]string
		dropped []string
	}{
		{"nothing to drop", map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, nil},
		{"defaults", map[string]string{"NCCL_CROSS_NIC": "2", "NCCL_BUFFSIZE": "4194304", "NCCL_ALGO": "Ring"}, map[string]string{"NCCL_ALGO": "Ring"}, []string{"NCCL_BUFFSIZE", "NCCL_CROSS_NIC"}},
		{"not defaults", map[string]string{"NCCL_CROSS_NIC": "0", "NCCL_BUFFSIZE": "8388608"}, map[string]string{"NCCL_CROSS_NIC": "0", "NCCL_BUFFSIZE": "8388608"}, nil},
		{"max ctas looser", map[string]string{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "16"}, map[string]string{"NCCL_MAX_NCHANNELS": "8"}, []string{"NCCL_MAX_CTAS"}},
		{"max nchannels looser", map[string]string{"NCCL_MAX_NCHANNELS": "32", "NCCL_MAX_CTAS": "4"}, map[string]string{"NCCL_MAX_CTAS": "4"}, []string{"NCCL_MAX_NCHANNELS"}},
		{"max tie keeps ctas", map[string]string{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "8"}, map[string]string{"NCCL_MAX_CTAS": "8"}, []string{"NCCL_MAX_NCHANNELS"}},
		{"min tie keeps ctas", map[string]string{"NCCL_MIN_NCHANNELS": "4", "NCCL_MIN_CTAS": "4"}, map[string]string{"NCCL_MIN_CTAS": "4"}, []string{"NCCL_MIN_NCHANNELS"}},
		{"min ctas looser", map[string]string{"NCCL_MIN_NCHANNELS": "8", "NCCL_MIN_CTAS": "2"}, map[string]string{"NCCL_MIN_NCHANNELS": "8"}, []string{"NCCL_MIN_CTAS"}},
		{"min nchannels looser", map[string]string{"NCCL_MIN_NCHANNELS": "2", "NCCL_MIN_CTAS": "8"}, map[string]string{"NCCL_MIN_CTAS": "8"}, []string{"NCCL_MIN_NCHANNELS"}},
		{"one of a pair", map[string]string{"NCCL_MAX_CTAS": "16"}, map[string]string{"NCCL_MAX_CTAS": "16"}, nil},
		{"unset values", map[string]string{"NCCL_PROTO": "", "NCCL_ALGO": "Tree"}, map[string]string{"NCCL_ALGO": "Tree"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, dropped := WrittenEnv(tc.in)
			if !reflect.DeepEqual(map[string]string(env), tc.want) {
				t.Errorf("env %v, want %v", env, tc.want)
			}
			var names []string
			for _, d := range dropped {
				names = append(names, d.Name)
				if d.Value != tc.in[d.Name] || d.Why == "" {
					t.Errorf("dropped %+v", d)
				}
			}
			if !reflect.DeepEqual(names, tc.dropped) {
				t.Errorf("dropped %v, want %v", names, tc.dropped)
			}
		})
	}
}

// TestWrittenEnvIsCanonical fails if the export and the search name one
// config two ways: for every pair of values of each cap pair (and NCCL's
// defaults beside them) the env written is the config's canonical form,
// the one the study keyed its trial by, and what it leaves out is what
// Canonical leaves out.
func TestWrittenEnvIsCanonical(t *testing.T) {
	values := []string{"", "1", "2", "4", "8", "16", "32", "64"}
	for _, p := range nccl.CapPairs {
		for _, a := range values {
			for _, b := range values {
				for _, extra := range []nccl.Config{{}, {"NCCL_CROSS_NIC": "2", "NCCL_BUFFSIZE": "4194304"}, {"NCCL_PROTO": "^LL128"}} {
					in := extra.Clone()
					in[p.Channels], in[p.CTAs] = a, b
					env, dropped := WrittenEnv(in)
					want := nccl.Config(in).Canonical()
					if env.Key() != want.Key() {
						t.Errorf("WrittenEnv(%s) = %s, Canonical = %s", nccl.Config(in), env, want)
					}
					if len(dropped) != len(nccl.Config(in).Clone())-len(want) {
						t.Errorf("WrittenEnv(%s) drops %v, Canonical keeps %s", nccl.Config(in), dropped, want)
					}
				}
			}
		}
	}
}

func TestNewRecommendationRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*store.Study)
		want []string
	}{
		{"sweep", func(s *store.Study) { s.Kind = vocab.KindSweep }, []string{"is a sweep study", "export a search study"}},
		{"running", func(s *store.Study) { s.Status = vocab.StatusRunning; s.Recommendation = nil }, []string{"still running", "nccltune show s3-512K-4M"}},
		{"interrupted", func(s *store.Study) { s.Status = vocab.StatusInterrupted; s.Recommendation = nil }, []string{"interrupted", "nccltune search --resume s3-512K-4M"}},
		{"failed", func(s *store.Study) { s.Status = vocab.StatusFailed; s.Reason = "benchmark not found" }, []string{"failed (benchmark not found)", "search again"}},
		{"undecided", func(s *store.Study) { s.Recommendation = nil }, []string{"finished without deciding"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spark4Study(3, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128"})
			tc.edit(s)
			_, err := NewRecommendation(s, nil, nil)
			if !errors.Is(err, ErrNotReady) {
				t.Fatalf("err = %v, want ErrNotReady", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestExplainChoices(t *testing.T) {
	b := fixtureBand(t)
	// The explain launches win over an older debug launch of trial 12.
	if len(b.Recommended) != 14 || b.Recommended[0].Bytes != 32768 || b.Recommended[len(b.Recommended)-1].Channels != 8 {
		t.Errorf("recommended choices %+v", b.Recommended)
	}
	if len(b.Defaults) != 14 || b.Defaults[5].Bytes != nccl.MiB || b.Defaults[5].Proto != "LL128" || b.Defaults[5].Channels != 64 {
		t.Errorf("default choices %+v", b.Defaults)
	}
	// Keeping the defaults: the recommendation is what NCCL does anyway.
	keep := keepDefaultsBand(t)
	if !keep.KeepDefaults || len(keep.Env) != 0 || !reflect.DeepEqual(keep.Recommended, keep.Defaults) {
		t.Errorf("keep-defaults band %+v", keep)
	}
	// Without an explain launch, another launch that recorded choices.
	s := spark4Study(3, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128"})
	launches := []*store.Launch{{TrialID: 12, Seq: 2, Phase: vocab.PhaseConfirm, Facts: &benchfmt.Facts{Choices: []benchfmt.Choice{{Collective: "AllReduce", Bytes: 7}}}}}
	_, rec := stored.ExplainChoices(s, []*store.Trial{{ID: 10, Number: 0}, {ID: 12, Number: 1}}, launches)
	if len(rec) != 1 || rec[0].Bytes != 7 {
		t.Errorf("fallback choices %+v", rec)
	}
}

// TestEnvFileRoundTrip reads every env file back as docker does.
func TestEnvFileRoundTrip(t *testing.T) {
	hostile := map[string]string{}
	for k, v := range hostileValues {
		hostile[k] = v
	}
	for _, tc := range []struct {
		name string
		band *Recommendation
		opts Options
	}{
		{"fixture", fixtureBand(t), Options{}},
		{"fixture with base", fixtureBand(t), Options{WithBase: true}},
		{"hostile", hostileBand(hostile), Options{}},
		{"keep defaults", keepDefaultsBand(t), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, FormatEnv, []*Recommendation{tc.band}, tc.opts)
			got, err := parseDockerEnvFile(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if want := tc.band.EnvMap(tc.opts.WithBase); !reflect.DeepEqual(got, want) {
				t.Errorf("read back %q\nwant      %q", got, want)
			}
		})
	}
	if !bytes.Contains(render(t, FormatEnv, []*Recommendation{hostileBand(hostile)}, Options{}), []byte("# V_DOLLAR: docker compose's env_file expands $")) {
		t.Error("no note that compose reads $ differently")
	}
}

func TestEnvFileRefuses(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  string
	}{
		{"a\nb", "newline cannot be carried"},
		{"trailing\r", "newline cannot be carried"},
		{"nul\x00", "NUL byte"},
		{"bad \xff utf8", "not valid UTF-8"},
		{strings.Repeat("x", 70000), "at most 65535"},
	} {
		err := Write(&bytes.Buffer{}, FormatEnv, []*Recommendation{hostileBand(map[string]string{"V": tc.value})}, Options{Now: fixedNow})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("value %.20q: err = %v, want %q", tc.value, err, tc.want)
		}
	}
	err := Write(&bytes.Buffer{}, FormatSh, []*Recommendation{hostileBand(map[string]string{"BAD-NAME": "x"})}, Options{})
	if err == nil || !strings.Contains(err.Error(), "letters, digits and _") {
		t.Errorf("bad name: %v", err)
	}
}

// allHostile is hostileValues plus what only some formats carry.
func allHostile() map[string]string {
	out := map[string]string{"V_NEWLINE": "line one\nline two\n", "V_TAB_CR": "a\tb\rc"}
	for k, v := range hostileValues {
		out[k] = v
	}
	return out
}

// sourceInShell sources file with shell and returns the environment it
// ends up with (NUL-separated, so newlines in values survive).
func sourceInShell(t *testing.T, shell, file string) map[string]string {
	t.Helper()
	cmd := exec.Command(shell, "-c", `. "$1" && env -0`, shell, file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: sourcing %s: %v: %s", shell, file, err, stderr.String())
	}
	got := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	return got
}

func TestShellRoundTrip(t *testing.T) {
	shells := []string{"sh"}
	if _, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, "bash")
	}
	for _, tc := range []struct {
		name string
		band *Recommendation
		opts Options
	}{
		{"fixture", fixtureBand(t), Options{}},
		{"fixture with base", fixtureBand(t), Options{WithBase: true}},
		{"hostile", hostileBand(allHostile()), Options{}},
		{"invalid utf8", hostileBand(map[string]string{"V_BYTES": "\xff\xfe'\x80"}), Options{}},
		{"keep defaults", keepDefaultsBand(t), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "nccl.sh")
			if err := os.WriteFile(file, render(t, FormatSh, []*Recommendation{tc.band}, tc.opts), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("sh", "-n", file).CombinedOutput(); err != nil {
				t.Fatalf("sh -n: %v: %s", err, out)
			}
			want := tc.band.EnvMap(tc.opts.WithBase)
			for _, shell := range shells {
				got := sourceInShell(t, shell, file)
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %s = %q, want %q", shell, k, got[k], v)
					}
				}
			}
		})
	}
}

// spliceInShell runs the docker format's recipe, docker run $(grep -v
// '^#' FILE) …, in shell, from a directory holding files a glob could
// match, and returns the arguments docker would get.
func spliceInShell(t *testing.T, shell string, out []byte) []string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "flags")
	for _, f := range []string{file, filepath.Join(dir, "a"), filepath.Join(dir, "NCCL_X=ab")} {
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(shell, "-c", `for a in $(grep -v '^#' "$1"); do printf '%s\0' "$a"; done`, shell, file)
	cmd.Dir = dir
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", shell, err)
	}
	if len(got) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
}

// shells are the shells the recipes are run in: sh (dash here) and bash.
func shells(t *testing.T) []string {
	out := []string{"sh"}
	for _, s := range []string{"dash", "bash"} {
		if _, err := exec.LookPath(s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// TestDockerFlagsRoundTrip: the flags line, spliced by docker run $(…) as
// the header and README say, gives docker exactly the env, in sh, dash
// and bash; every value nccltune can recommend (nccl.ValueExamples)
// among them. Was: NCCL_ALGO=allreduce:Ring;allgather:Ring was written
// quoted, and $(…) kept the quotes: docker set a variable named 'NCCL_ALGO.
func TestDockerFlagsRoundTrip(t *testing.T) {
	recommendable := map[string]string{}
	for knob, values := range nccl.ValueExamples() {
		for i, v := range values {
			recommendable[fmt.Sprintf("%s_%d", knob, i)] = v
		}
	}
	spliceable := oneWordValues(allHostile())
	for _, v := range []string{"a$HOME'b", "x;y&z|w", "`id`", "#x", "~root", `"q"`, "!!", "a(b)c", "<x>", "$(id)"} {
		spliceable[fmt.Sprintf("V_%d", len(spliceable))] = v
	}
	for _, tc := range []struct {
		name string
		band *Recommendation
		opts Options
	}{
		{"fixture", fixtureBand(t), Options{}},
		{"fixture with base", fixtureBand(t), Options{WithBase: true}},
		{"recommendable", hostileBand(recommendable), Options{}},
		{"hostile", hostileBand(spliceable), Options{}},
		{"keep defaults", keepDefaultsBand(t), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, FormatDocker, []*Recommendation{tc.band}, tc.opts)
			want := tc.band.EnvMap(tc.opts.WithBase)
			for _, shell := range shells(t) {
				words := spliceInShell(t, shell, out)
				if len(want) == 0 && len(words) != 0 {
					t.Fatalf("%s: flags for an empty env: %q", shell, words)
				}
				got := map[string]string{}
				for i := 0; i < len(words); i += 2 {
					if words[i] != "-e" || i+1 >= len(words) {
						t.Fatalf("%s: word %d is %q, want -e K=V", shell, i, words[i])
					}
					k, v, _ := strings.Cut(words[i+1], "=")
					got[k] = v
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: docker gets %q\nwant        %q", shell, got, want)
				}
			}
		})
	}
}

// oneWordValues keeps the values without whitespace or control
// characters: those the docker flags line carries.
func oneWordValues(values map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range values {
		if checkSpliced(Var{Name: k, Value: v}) == nil {
			out[k] = v
		}
	}
	return out
}

// TestDockerFlagsRefuseWhitespace (issue 28): a value with a newline,
// space or tab is refused by the docker format, which is used through
// $(…): it would split there (was: a base env value
// "/var/log/x\n--privileged\n-v=/:/host" reached docker as two flags).
func TestDockerFlagsRefuseWhitespace(t *testing.T) {
	for _, v := range []string{"/var/log/x\n--privileged\n-v=/:/host", "a --privileged", "a\tb", "a\rb", "bell\a"} {
		err := Write(&bytes.Buffer{}, FormatDocker, []*Recommendation{hostileBand(map[string]string{"NCCL_DEBUG_FILE": v})}, Options{Now: fixedNow, WithBase: true})
		if err == nil || !strings.Contains(err.Error(), "use --format env") {
			t.Errorf("docker flags of %q: %v, want a refusal", v, err)
		}
	}
	if n := len(oneWordValues(allHostile())); n < 5 {
		t.Errorf("only %d hostile values are one word: the round trip tests too little", n)
	}
}

func TestK8sRoundTrip(t *testing.T) {
	t.Parallel() // reads and writes nothing shared
	hostile := allHostile()
	hostile["V_CONTROL"] = "bell\a del\x7f nel\u0085 ls\u2028 bom\ufeff"
	for _, tc := range []struct {
		name string
		band *Recommendation
		opts Options
	}{
		{"fixture", fixtureBand(t), Options{}},
		{"fixture with base", fixtureBand(t), Options{WithBase: true}},
		{"hostile", hostileBand(hostile), Options{}},
		{"yaml words as names", hostileBand(map[string]string{"YES": "1", "on": "2", "Null": "3"}), Options{}},
		{"keep defaults", keepDefaultsBand(t), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, FormatK8s, []*Recommendation{tc.band}, tc.opts)
			yamlValues, order, err := parseK8sEnv(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// What the container sees: Kubernetes' $(VAR) expansion of
			// what YAML read.
			got := map[string]string{}
			for k, v := range yamlValues {
				got[k] = kubeExpand(v)
			}
			want := tc.band.EnvMap(tc.opts.WithBase)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back %q\nwant      %q", got, want)
			}
			var wantOrder []string
			for _, v := range tc.band.Vars(tc.opts.WithBase) {
				wantOrder = append(wantOrder, v.Name)
			}
			if len(order) > 0 && !reflect.DeepEqual(order, wantOrder) {
				t.Errorf("order %v, want %v", order, wantOrder)
			}
			if strings.HasPrefix(tc.name, "hostile") || strings.HasPrefix(tc.name, "yaml") {
				wantYAML := map[string]string{}
				for k, v := range want {
					wantYAML[k] = strings.ReplaceAll(v, "$", "$$")
				}
				checkWithPyYAML(t, out, wantYAML)
			}
		})
	}
}

// checkWithPyYAML reads the list with a real YAML parser when python3
// with PyYAML is installed (it is not required).
func checkWithPyYAML(t *testing.T, doc []byte, want map[string]string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil || testing.Short() {
		return
	}
	cmd := exec.Command(py, "-c", `import sys, json
try:
    import yaml
except ImportError:
    sys.exit(3)
d = yaml.safe_load(sys.stdin.buffer.read().decode("utf-8"))
assert list(d) == ["env"], d
print(json.dumps({e["name"]: e["value"] for e in d["env"]}))`)
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 {
		return // no PyYAML here
	}
	if err != nil {
		t.Fatalf("PyYAML: %v: %s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if s, ok := got[k].(string); !ok || s != v {
			t.Errorf("PyYAML reads %s as %#v, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("PyYAML reads %d variables, want %d", len(got), len(want))
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		band *Recommendation
		opts Options
	}{
		{"fixture", fixtureBand(t), Options{}},
		{"fixture with base", fixtureBand(t), Options{WithBase: true}},
		{"hostile", hostileBand(allHostile()), Options{}},
		{"keep defaults", keepDefaultsBand(t), Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := render(t, FormatJSON, []*Recommendation{tc.band}, tc.opts)
			var doc struct {
				Study        string               `json:"study"`
				Band         string               `json:"band"`
				Env          map[string]string    `json:"env"`
				KeepDefaults bool                 `json:"keep_defaults"`
				Speedup      float64              `json:"speedup"`
				SpeedupCI    []float64            `json:"speedup_ci"`
				Significant  bool                 `json:"significant"`
				Simulated    bool                 `json:"simulated"`
				NCCLVersion  string               `json:"nccl_version"`
				Fabric       store.Platform       `json:"fabric"`
				BaseEnv      map[string]string    `json:"base_env"`
				Choices      []benchfmt.ChoiceRow `json:"choices"`
			}
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(out, &raw); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			s := tc.band.Study
			if want := tc.band.EnvMap(tc.opts.WithBase); !reflect.DeepEqual(doc.Env, want) {
				t.Errorf("env %q, want %q", doc.Env, want)
			}
			if doc.Study != s.Name || doc.Band != s.Band || doc.Speedup != s.Recommendation.Speedup || len(doc.SpeedupCI) != 2 ||
				doc.Significant != s.Recommendation.Significant || !doc.Simulated || doc.NCCLVersion != s.Platform.NCCLVersion ||
				doc.Fabric.Ranks != 4 || doc.KeepDefaults != tc.band.KeepDefaults {
				t.Errorf("document %+v", doc)
			}
			for _, k := range []string{"created", "exported", "dropped", "recommended_env", "p_value"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("no %q field", k)
				}
			}
			if _, ok := raw["base_env"]; ok != tc.opts.WithBase {
				t.Errorf("base_env present %v with --with-base %v", ok, tc.opts.WithBase)
			}
			if len(tc.band.Defaults) > 0 && len(doc.Choices) != len(tc.band.Defaults) {
				t.Errorf("%d choices, want %d", len(doc.Choices), len(tc.band.Defaults))
			}
		})
	}
}

func rowPick(r pluginRow) benchfmt.Pick {
	return benchfmt.Pick{Algo: nccl.AlgoName(r.algo), Proto: nccl.ProtoName(r.proto), Channels: r.channels}
}

// probeSizes are the sizes worth asking the plugin about: every recorded
// size, the midpoints and band edges with their neighbours, the extremes,
// and random sizes across the whole range.
func probeSizes(bands []*Recommendation) []uint64 {
	set := map[uint64]bool{0: true, 1: true, MaxTunerBytes: true, MaxTunerBytes - 1: true, 4294967295: true, 4294967296: true}
	add := func(v uint64) {
		for _, d := range []uint64{0, 1} {
			set[v+d] = true
			if v >= d {
				set[v-d] = true
			}
		}
	}
	for _, b := range bands {
		add(uint64(b.Study.BandMin))
		add(uint64(b.Study.BandMax))
		for _, cs := range [][]benchfmt.Choice{b.Defaults, b.Recommended} {
			for i, c := range cs {
				add(uint64(c.Bytes))
				// The edges of the sizes the call counts at.
				lo, hi := workload.BinRange(workload.BinOf(c.Bytes))
				add(uint64(lo))
				add(uint64(hi))
				if i > 0 {
					a := uint64(cs[i-1].Bytes)
					add(a + (uint64(c.Bytes)-a)/2)
				}
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for range 500 {
		set[rng.Uint64()>>uint(rng.Intn(64))] = true
	}
	out := make([]uint64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// checkTunerFile reads a tuner file by the plugin's rules and checks
// every probe size against the oracle (oraclePick): inside a band (first
// listed wins) the recommended choice measured at the size the call counts
// at, elsewhere NCCL's own default choice with its own channel count.
func checkTunerFile(t *testing.T, out []byte, bands []*Recommendation) {
	t.Helper()
	rows, err := parsePluginCSV(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := checkCoverage(rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, b := range bands {
		f := b.Study.Platform
		for _, x := range probeSizes(bands) {
			want, ok := oraclePick(bands, f.Nodes, f.Ranks, x)
			if !ok {
				t.Fatalf("%s: the oracle has no choice at %d bytes", b.Study.Name, x)
			}
			// Any numPipeOps and regBuff: the rows do not depend on them.
			for _, call := range [][2]int{{1, 0}, {4, 1}} {
				r, ok := pluginMatch(rows, "allreduce", x, f.Nodes, f.Ranks, call[0], call[1])
				if !ok {
					t.Fatalf("%s: no row matches %d bytes: the plugin would use ONE channel", b.Study.Name, x)
				}
				if got := rowPick(r); got != want {
					t.Errorf("%s: %d bytes: row %d gives %v, want %v", b.Study.Name, x, r.line, got, want)
				}
			}
		}
	}
}

func TestTunerFile(t *testing.T) {
	t.Parallel() // reads and writes nothing shared
	fixture := fixtureBand(t)
	t.Run("one band", func(t *testing.T) {
		checkTunerFile(t, render(t, FormatTuner, []*Recommendation{fixture}, Options{}), []*Recommendation{fixture})
	})
	t.Run("keep defaults", func(t *testing.T) {
		keep := keepDefaultsBand(t)
		checkTunerFile(t, render(t, FormatTuner, []*Recommendation{keep}, Options{}), []*Recommendation{keep})
	})
	t.Run("two bands", func(t *testing.T) {
		bands := twoBands(t)
		checkTunerFile(t, render(t, FormatTuner, bands, Options{}), bands)
	})
	t.Run("overlapping bands, first wins", func(t *testing.T) {
		s6 := spark4Study(6, "1M-16M", map[string]string{"NCCL_ALGO": "Tree"})
		tree := studyWith(t, s6, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_algo_tree.log"))
		bands := []*Recommendation{fixture, tree}
		out := render(t, FormatTuner, bands, Options{})
		checkTunerFile(t, out, bands)
		rows, _ := parsePluginCSV(out)
		if r, _ := pluginMatch(rows, "allreduce", uint64(2*nccl.MiB), 4, 4, 1, 0); r.algo != "ring" || r.channels != 8 {
			t.Errorf("2M (both bands): %+v, want s3's ring/8", r)
		}
		if r, _ := pluginMatch(rows, "allreduce", uint64(8*nccl.MiB), 4, 4, 1, 0); r.algo != "tree" {
			t.Errorf("8M (s6 only): %+v, want s6's tree", r)
		}
		// Listed the other way round, s6 wins the overlap.
		out = render(t, FormatTuner, []*Recommendation{tree, fixture}, Options{})
		checkTunerFile(t, out, []*Recommendation{tree, fixture})
	})
	t.Run("two fabrics", func(t *testing.T) {
		s8 := spark4Study(8, "512K-4M", map[string]string{"NCCL_ALGO": "Tree"})
		s8.Platform.Nodes, s8.Platform.Ranks = 2, 2
		other := studyWith(t, s8, logChoices(t, "spark4_algo_tree.log"), logChoices(t, "spark4_proto_nchannels8.log"))
		bands := []*Recommendation{fixture, other}
		out := render(t, FormatTuner, bands, Options{})
		checkTunerFile(t, out, bands)
		if !bytes.Contains(out, []byte("allreduce,0,")) || !bytes.Contains(out, []byte(",2,2,-1,-1\n")) || !bytes.Contains(out, []byte(",4,4,-1,-1\n")) {
			t.Errorf("want rows for 4x4 and 2x2:\n%s", out)
		}
	})
	t.Run("unknown shape matches any", func(t *testing.T) {
		s9 := spark4Study(9, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128"})
		s9.Platform.Nodes, s9.Platform.Ranks = 0, 0
		b := studyWith(t, s9, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_proto_nchannels8.log"))
		out := render(t, FormatTuner, []*Recommendation{b}, Options{})
		rows, err := parsePluginCSV(out)
		if err != nil || checkCoverage(rows) != nil || rows[0].nodes != -1 || rows[0].ranks != -1 {
			t.Errorf("rows %+v, err %v", rows, err)
		}
	})
}

func TestTunerRefuses(t *testing.T) {
	fixture := fixtureBand(t)
	noExplain := studyWith(t, spark4Study(3, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128"}), nil, nil)
	real := fixtureBand(t)
	real.Study.Name, real.Study.Simulated = "s11-512K-4M", false
	odd := studyWith(t, spark4Study(12, "1M", map[string]string{"NCCL_PROTO": "^LL128"}), logChoices(t, "spark4_defaults.log"),
		[]benchfmt.Choice{{Collective: "AllReduce", Bytes: nccl.MiB, Algo: "UNDEF", Proto: "SIMPLE", Channels: 2}})
	a2a := fixtureBand(t)
	a2a.Study.Collective = "alltoall"
	for _, tc := range []struct {
		name  string
		bands []*Recommendation
		want  string
	}{
		{"no explain launch", []*Recommendation{noExplain}, "study s3-512K-4M has no record of NCCL's choices; re-run the search with this version of nccltune"},
		{"simulated and real", []*Recommendation{fixture, real}, "s3-512K-4M is SIMULATED and s11-512K-4M measured real hardware"},
		{"unknown algorithm", []*Recommendation{odd}, `algorithm "UNDEF"`},
		{"collective the plugin lacks", []*Recommendation{a2a}, "does not know"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(&bytes.Buffer{}, FormatTuner, tc.bands, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, FormatTuner, []*Recommendation{noExplain}, Options{}); !errors.Is(err, ErrNoChoices) {
		t.Errorf("err = %v, want ErrNoChoices", err)
	}
	// One band per env file: several are refused, not merged.
	if err := Write(&bytes.Buffer{}, FormatEnv, twoBands(t), Options{}); err == nil || !strings.Contains(err.Error(), "one file per band") {
		t.Errorf("two bands in one env file: %v", err)
	}
}

// TestPluginParserCatchesTraps shows the test's reading of the plugin's
// rules fails on each trap, so passing it means something.
func TestPluginParserCatchesTraps(t *testing.T) {
	const good = "allreduce,0,18446744073709551615,ring,simple,8,4,4,-1,-1\n"
	for _, tc := range []struct {
		name, csv, want string
	}{
		{"header row", TunerColumns + "\n" + good, "unknown to the plugin"},
		{"upper case", "allreduce,0,18446744073709551615,RING,simple,8,4,4,-1,-1\n", `algorithm "RING"`},
		{"channels -1", "allreduce,0,18446744073709551615,ring,simple,-1,4,4,-1,-1\n", "-1 runs ONE channel"},
		{"nine fields", "allreduce,0,18446744073709551615,ring,simple,8,4,4,-1\n", "9 fields"},
		{"empty field", "allreduce,0,,ring,simple,8,4,4,-1,-1,\n", "11 fields"},
		{"padded", "allreduce, 0,18446744073709551615,ring,simple,8,4,4,-1,-1\n", "padded"},
		{"indented comment", " # note\n" + good, "fields"},
		{"long comment", "# " + strings.Repeat("x", 260) + "\n" + good, "fgets(256)"},
		{"gap", "allreduce,0,100,ring,simple,8,4,4,-1,-1\nallreduce,102,18446744073709551615,ring,simple,8,4,4,-1,-1\n", "gap 101..101"},
		{"overlap", "allreduce,0,100,ring,simple,8,4,4,-1,-1\nallreduce,100,18446744073709551615,ring,simple,8,4,4,-1,-1\n", "overlap"},
		{"ends at 4G", "allreduce,0,4294967295,ring,simple,8,4,4,-1,-1\n", "above 4294967295"},
		{"wildcard shadows", good + "allreduce,0,18446744073709551615,tree,ll,8,-1,4,-1,-1\n", "can match the same call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := parsePluginCSV([]byte(tc.csv))
			if err == nil {
				err = checkCoverage(rows)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if rows, err := parsePluginCSV([]byte("# comment\n\n" + good)); err != nil || checkCoverage(rows) != nil || len(rows) != 1 {
		t.Errorf("good file: %v %v", rows, err)
	}
}

func TestTunerLinesFitThePluginBuffer(t *testing.T) {
	s := spark4Study(3, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128", "NCCL_IB_HCA": strings.Repeat("mlx5_", 80)})
	s.Recommendation.Reason = strings.Repeat("a long reason ", 40)
	b := studyWith(t, s, logChoices(t, "spark4_defaults.log"), logChoices(t, "spark4_proto_nchannels8.log"))
	out := render(t, FormatTuner, []*Recommendation{b}, Options{})
	for i, line := range strings.Split(string(out), "\n") {
		if len(line) > tunerLineMax {
			t.Errorf("line %d is %d bytes", i+1, len(line))
		}
	}
}

func TestChoicesTable(t *testing.T) {
	b := fixtureBand(t)
	var buf bytes.Buffer
	if err := benchfmt.ChoicesTable(&buf, b.Defaults, b.Recommended); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "choices.txt", buf.Bytes())

	rows := benchfmt.CompareChoices(b.Defaults, b.Recommended)
	changed := map[int64]bool{}
	for _, r := range rows {
		changed[r.Bytes] = r.Changed
	}
	if changed[32*nccl.KiB] || !changed[nccl.MiB] || !changed[256*nccl.MiB] {
		t.Errorf("changed flags %v", changed)
	}
	// A size only one side recorded is shown with a dash.
	buf.Reset()
	benchfmt.ChoicesTable(&buf, b.Defaults[:2], b.Recommended[1:3])
	if got := buf.String(); !strings.Contains(got, "32K   Tree LL, 4 channels  —") || !strings.Contains(got, "128K  —                    Tree LL, 8 channels\n") {
		t.Errorf("partial table:\n%s", got)
	}
	buf.Reset()
	benchfmt.ChoicesTable(&buf, nil, nil)
	if !strings.Contains(buf.String(), "not recorded") {
		t.Errorf("empty table: %q", buf.String())
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range FormatNames() {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	if f, _ := ParseFormat("Kubernetes"); f != FormatK8s {
		t.Errorf("kubernetes is %q", f)
	}
	// YAML is two formats: k8s's list and compose's map; no guess.
	if f, err := ParseFormat("YAML"); err == nil || !strings.Contains(err.Error(), "k8s") || !strings.Contains(err.Error(), "compose") {
		t.Errorf("yaml is %q, %v", f, err)
	}
	_, err := ParseFormat("jsn")
	if err == nil || !strings.Contains(err.Error(), "want one of env, sh, docker, compose, k8s, json, nccl-tuner") || !strings.Contains(err.Error(), "did you mean json?") {
		t.Errorf("err = %v", err)
	}
}

func TestFileName(t *testing.T) {
	b := fixtureBand(t)
	for f, want := range map[Format]string{FormatEnv: "nccl-512K-4M.env", FormatSh: "nccl-512K-4M.sh", FormatDocker: "nccl-512K-4M.docker",
		FormatK8s: "nccl-512K-4M.yaml", FormatJSON: "nccl-512K-4M.json", FormatTuner: "nccl-tuner.csv"} {
		if got := FileName(f, b); got != want {
			t.Errorf("%s: %s, want %s", f, got, want)
		}
	}
	b.Study.Band = "1M/../x"
	if got := FileName(FormatEnv, b); strings.Contains(got, "/") {
		t.Errorf("unsafe name %q", got)
	}
}

// kubeExpand is Kubernetes' expansion of an env value with no variables
// defined (k8s.io/kubernetes third_party/forked/golang/expansion): $$ is
// one $, and an unresolvable $(VAR) stays as written.
func kubeExpand(v string) string {
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '$' && i+1 < len(v) && v[i+1] == '$' {
			sb.WriteByte('$')
			i++
			continue
		}
		sb.WriteByte(v[i])
	}
	return sb.String()
}

// TestK8sDollarAndIndent: a value holding $(VAR) reaches the container as
// written, and --indent shifts every line.
func TestK8sDollarAndIndent(t *testing.T) {
	b := hostileBand(map[string]string{"V": "$(HOME) $$ $x"})
	out := string(render(t, FormatK8s, []*Recommendation{b}, Options{Indent: 6}))
	if !strings.Contains(out, `value: "$$(HOME) $$$$ $$x"`) {
		t.Errorf("$ not doubled for Kubernetes:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "      ") {
			t.Errorf("line not indented by 6: %q", l)
		}
	}
	if got := kubeExpand(`$$(HOME) $$$$ $$x`); got != "$(HOME) $$ $x" {
		t.Errorf("kubeExpand: %q", got)
	}
}

// TestComposeEnvironment: the compose format is an environment: map that
// YAML reads back with $ doubled (compose's own escape).
func TestComposeEnvironment(t *testing.T) {
	b := hostileBand(map[string]string{"NCCL_PROTO": "^LL128", "V": "a $HOME b", "YES": "8"})
	out := string(render(t, FormatCompose, []*Recommendation{b}, Options{}))
	for _, want := range []string{"environment:\n", `  NCCL_PROTO: "^LL128"`, `  V: "a $$HOME b"`, `  "YES": "8"`} {
		if !strings.Contains(out, want) {
			t.Errorf("compose output lacks %q:\n%s", want, out)
		}
	}
	checkComposeWithPyYAML(t, out, map[string]string{"NCCL_PROTO": "^LL128", "V": "a $$HOME b", "YES": "8"})
}

// TestComposeHostileRoundTrip: every hostile value reads back from the
// compose map byte for byte (with $ doubled, compose's escape), through
// a YAML parser other than the library that wrote it.
func TestComposeHostileRoundTrip(t *testing.T) {
	hostile := allHostile()
	hostile["V_CONTROL"] = "bell\a del\x7f nel\u0085 ls\u2028 bom\ufeff"
	hostile["YES"] = "8"
	want := map[string]string{}
	for k, v := range hostile {
		want[k] = strings.ReplaceAll(v, "$", "$$")
	}
	out := string(render(t, FormatCompose, []*Recommendation{hostileBand(hostile)}, Options{}))
	checkComposeWithPyYAML(t, out, want)
	if !strings.Contains(out, "environment:\n") || !strings.Contains(out, `  "YES": "8"`) {
		t.Errorf("compose map:\n%s", out)
	}
}

// TestDockerFlagsSurviveSubstitution: the flags are written bare, as
// $(…) hands them to docker; where a value holds what a typed command
// line reads (; quotes $), the use: line offers $(…) only and names the
// formats to type; a glob or backslash is refused (a file could replace
// it), pointing to --env-file.
func TestDockerFlagsSurviveSubstitution(t *testing.T) {
	for _, tc := range []struct {
		env       map[string]string
		line      string
		pasteable bool
	}{
		{map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, "-e NCCL_MAX_NCHANNELS=8 -e NCCL_PROTO=^LL128\n", true},
		{map[string]string{"NCCL_ALGO": "allreduce:Ring;allgather:Ring"}, "-e NCCL_ALGO=allreduce:Ring;allgather:Ring\n", false},
		{map[string]string{"V": "a$HOME'b"}, "-e V=a$HOME'b\n", false},
	} {
		out := string(render(t, FormatDocker, []*Recommendation{hostileBand(tc.env)}, Options{}))
		if !strings.HasSuffix(out, "\n"+tc.line) {
			t.Errorf("%v: want the line %q:\n%s", tc.env, tc.line, out)
		}
		use := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "# use:") {
				use = l
			}
		}
		if !strings.Contains(use, "docker run $(") || strings.Contains(use, "paste the flags") != tc.pasteable || strings.Contains(use, "--env-file") == tc.pasteable {
			t.Errorf("%v: use line %q", tc.env, use)
		}
	}
	for _, v := range []string{"a*", "a?", "[ab]", `a\b`} {
		err := Write(&bytes.Buffer{}, FormatDocker, []*Recommendation{hostileBand(map[string]string{"V": v})}, Options{})
		if err == nil || !strings.Contains(err.Error(), "--env-file") {
			t.Errorf("docker flags of %q: %v, want a refusal naming --env-file", v, err)
		}
	}
}

// checkComposeWithPyYAML reads a compose environment: map with PyYAML
// (when it is installed) and compares the values.
func checkComposeWithPyYAML(t *testing.T, doc string, want map[string]string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil || testing.Short() {
		return
	}
	cmd := exec.Command(py, "-c", `import sys, json
try:
    import yaml
except ImportError:
    sys.exit(3)
d = yaml.safe_load(sys.stdin.buffer.read().decode("utf-8"))
assert list(d) == ["environment"], d
print(json.dumps(d["environment"]))`)
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 {
		return
	}
	if err != nil {
		t.Fatalf("PyYAML: %v: %s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if s, ok := got[k].(string); !ok || s != v {
			t.Errorf("PyYAML reads %s as %#v, want %q", k, got[k], v)
		}
	}
}

// TestBaselineExport: a study against the user's settings exports the
// change to them (knobs to remove are named, and sh unsets them), and a
// study that kept them exports them, never an empty env that would drop
// the user's settings.
func TestBaselineExport(t *testing.T) {
	s := spark4Study(9, "512K-4M", map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"})
	s.BaselineEnv = map[string]string{"NCCL_ALGO": "Tree", "NCCL_MAX_NCHANNELS": "2"}
	b, err := NewRecommendation(s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.KeepBaseline || b.KeepDefaults || len(b.Unset) != 1 || b.Unset[0] != "NCCL_ALGO" || b.Env.Key() != "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128" {
		t.Fatalf("band %+v", b)
	}
	sh := string(render(t, FormatSh, []*Recommendation{b}, Options{}))
	if !strings.Contains(sh, "\nunset NCCL_ALGO\n") || !strings.Contains(sh, "over your baseline (NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=2)") {
		t.Errorf("sh export:\n%s", sh)
	}
	if env := string(render(t, FormatEnv, []*Recommendation{b}, Options{})); !strings.Contains(env, "# UNSET NCCL_ALGO:") {
		t.Errorf("env export does not name the knob to remove:\n%s", env)
	}
	kept := spark4Study(10, "512K-4M", map[string]string{"NCCL_PROTO": "Simple"})
	kept.Recommendation.Significant = false
	kept.BaselineEnv = map[string]string{"NCCL_PROTO": "^LL128"}
	b, err = NewRecommendation(kept, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := string(render(t, FormatEnv, []*Recommendation{b}, Options{}))
	if !b.KeepBaseline || !strings.Contains(env, "\nNCCL_PROTO=^LL128\n") || !strings.Contains(env, "keep your baseline (NCCL_PROTO=^LL128)") {
		t.Errorf("kept baseline exports:\n%s", env)
	}
}

// TestKeepWordsAreTheVerdicts: an export that keeps the defaults says why
// in the verdict's words (stored.Conclusion), as search and show do: a
// candidate refused by a guarded op was faster, so "no setting was
// significantly faster" would be false.
func TestKeepWordsAreTheVerdicts(t *testing.T) {
	s := spark4Study(4, "1M", map[string]string{"NCCL_MAX_NCHANNELS": "1"})
	s.Recommendation.Significant = false
	s.Recommendation.Speedup, s.Recommendation.SpeedupCI, s.Recommendation.PValue = 1.3, [2]float64{1.2, 1.4}, 0.002
	s.Recommendation.OpGuards = []store.OpGuard{{Op: nccl.Broadcast, Refused: true, WorstBytes: nccl.MiB}}
	keep := studyWith(t, s, logChoices(t, "spark4_defaults.log"), nil)
	out := string(render(t, FormatEnv, []*Recommendation{keep}, Options{}))
	want, _, _ := stored.ConclusionOf(s).Headline()
	if !strings.Contains(out, want) {
		t.Errorf("the export does not say the verdict %q:\n%s", want, out)
	}
	if strings.Contains(out, "no setting was significantly faster") {
		t.Errorf("the export says no setting was faster for a candidate a guard refused:\n%s", out)
	}
}

// The rows at the sizes a decode trace calls (issue 41): a size the band
// study measured covers the calls `nccltune workload` counts at it (512000
// and 2048000 bytes take the rows proven at 512K and 2M, 5000000 the one
// at 4M), with the channels measured there; every other size keeps NCCL's
// own choice and count (channels 0), never a measured neighbour's: 10240
// bytes is not stretched from 32K (the first row used to force 4 channels
// from 0 bytes up) and 327680 bytes (counted at 256K, outside the band) is
// not given the 512K row.
func TestTunerRowsAtCalledSizes(t *testing.T) {
	out := render(t, FormatTuner, []*Recommendation{fixtureBand(t)}, Options{})
	rows, err := parsePluginCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bytes uint64
		want  benchfmt.Pick
	}{
		{10240, benchfmt.Pick{Algo: "Tree", Proto: "LL", Channels: 0}},
		{81920, benchfmt.Pick{Algo: "Tree", Proto: "LL", Channels: 0}},
		{327680, benchfmt.Pick{Algo: "Ring", Proto: "LL128", Channels: 0}},
		{370727, benchfmt.Pick{Algo: "Ring", Proto: "LL128", Channels: 0}},
		{370728, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 8}},
		{512000, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 8}},
		{2048000, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 8}},
		{5000000, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 8}},
		{5931641, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 8}},
		{5931642, benchfmt.Pick{Algo: "Ring", Proto: "Simple", Channels: 0}},
	} {
		r, ok := pluginMatch(rows, "allreduce", tc.bytes, 4, 4, 1, 0)
		if !ok {
			t.Fatalf("%d bytes: no row: the plugin would run it on ONE channel\n%s", tc.bytes, out)
		}
		if got := rowPick(r); got != tc.want {
			t.Errorf("%d bytes: row %d gives %v, want %v", tc.bytes, r.line, got, tc.want)
		}
	}
}

// A collective the process calls (a part of the workload) with no record
// of NCCL's own choices cannot be kept by any row outside its proven sizes,
// and with no row the plugin runs it on one channel: the format is refused
// (exit 2), naming the env export.
func TestTunerRefusesAPartItCannotKeep(t *testing.T) {
	b := fixtureBand(t)
	b.Study.Workload = []store.Part{
		{Op: nccl.AllReduce, Band: "512K-4M", BandMin: 512 << 10, BandMax: 4 << 20, Weight: 1},
		{Op: nccl.AllGather, Band: "1M", BandMin: 1 << 20, BandMax: 1 << 20, Weight: 1},
	}
	b.Recommended = append(b.Recommended, benchfmt.Choice{Collective: "AllGather", Bytes: nccl.MiB, Algo: "RING", Proto: "SIMPLE", Channels: 8})
	err := Write(&bytes.Buffer{}, FormatTuner, []*Recommendation{b}, Options{})
	if !errors.Is(err, vocab.ErrUsage) || !errors.Is(err, ErrNoChoices) || !strings.Contains(err.Error(), "allgather") || !strings.Contains(err.Error(), "--format env") {
		t.Errorf("err = %v, want a usage error naming allgather and the env export", err)
	}
	// With NCCL's own all-gather choices recorded, the part gets its
	// proven row and NCCL's choice everywhere else.
	b.Defaults = append(b.Defaults, benchfmt.Choice{Collective: "AllGather", Bytes: nccl.MiB, Algo: "RING", Proto: "LL128", Channels: 4})
	out := render(t, FormatTuner, []*Recommendation{b}, Options{})
	for _, row := range []string{"\nallgather,0,741455,ring,ll128,0,4,4,-1,-1\n", "\nallgather,741456,1482910,ring,simple,8,4,4,-1,-1\n", "\nallgather,1482911,18446744073709551615,ring,ll128,0,4,4,-1,-1\n"} {
		if !bytes.Contains(out, []byte(row)) {
			t.Errorf("no row %q:\n%s", row, out)
		}
	}
}

// TestHeaderKeepsOutsideTextInComments (issue 38): a study name and a GPU
// name from a log holding a line break followed by a key stay in their
// comment line in every format with a comment header, shown escaped: the
// lines that are not comments are those of the same study without them,
// and no line terminator any reader honours is left in the file.
func TestHeaderKeepsOutsideTextInComments(t *testing.T) {
	breaks := []string{"\n", "\r", "\v", "\f", "\x00", "\x1b", "\u0085", "\u2028", "\u2029", "\u202e"}
	for _, f := range Formats {
		if f == FormatJSON {
			continue // no comments: encoding/json escapes the text
		}
		clean := nonComments(render(t, f, []*Recommendation{fixtureBand(t)}, Options{}))
		for _, brk := range breaks {
			b := fixtureBand(t)
			b.Study.Name += brk + "wrapper: /tmp/evil.sh"
			b.Study.Platform.GPU += brk + "NCCL_ALGO=Tree" + brk + "export LD_PRELOAD=/tmp/evil.so"
			out := render(t, f, []*Recommendation{b}, Options{})
			if i := bytes.IndexAny(out, "\r\v\f\x00\x1b\u0085\u2028\u2029\u202e"); i >= 0 {
				t.Errorf("%s %q: a raw %q at byte %d:\n%s", f, brk, out[i:i+1], i, out)
			}
			if got := nonComments(out); !reflect.DeepEqual(got, clean) {
				t.Errorf("%s %q: the lines that are not comments differ from the clean study's:\n%q\nwant\n%q", f, brk, got, clean)
			}
			// The tuner's comments wrap at spaces: the GPU name and the
			// key after it are one word.
			want := strconv.QuoteToASCII(brk)
			if want = "GB10" + want[1:len(want)-1] + "NCCL_ALGO=Tree"; !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s %q: no comment shows %q:\n%s", f, brk, want, out)
			}
		}
	}
}

// nonComments are a file's lines that do not start with '#'.
func nonComments(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestEnvFileSaysNotForAShell: the env file holds values verbatim, as
// docker reads them; where a value holds what a shell reads (the ; of a
// per-function NCCL_ALGO), its header says not to source it and names
// --format sh, since set -a; . FILE cuts the value at the ;.
func TestEnvFileSaysNotForAShell(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		note bool
	}{
		{map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, false},
		{map[string]string{"NCCL_ALGO": "allreduce:Ring;allgather:Ring"}, true},
		{map[string]string{"NCCL_PROTO": "LL,Simple;allreduce:^LL", "NCCL_MAX_NCHANNELS": "8"}, true},
	} {
		out := string(render(t, FormatEnv, []*Recommendation{hostileBand(tc.env)}, Options{}))
		has := strings.Contains(out, "# not for a shell: . FILE would cut or expand NCCL_") && strings.Contains(out, "use --format sh")
		if has != tc.note {
			t.Errorf("%v: note %v, want %v:\n%s", tc.env, has, tc.note, out)
		}
	}
}

// TestTimedStudyHeaderSaysItsCalls (issue 40): every format's header
// names a timed study by its calls and the sizes they are measured at,
// never the band around them it did not measure (was "band 32K-2M
// (32768-2097152 bytes)" for a study measured at 32K and 2M only); the json
// format lists the calls.
func TestTimedStudyHeaderSaysItsCalls(t *testing.T) {
	const line = "workload all_reduce 40960×760, 2048000×80 (OP BYTES×CALLS), measured at all_reduce 32K 2M"
	for _, f := range Formats {
		if f == FormatJSON {
			continue
		}
		t.Run(string(f), func(t *testing.T) {
			out := string(render(t, f, []*Recommendation{timedBand(t)}, Options{}))
			if !strings.Contains(out, line) {
				t.Errorf("%s header lacks %q:\n%s", f, line, out)
			}
			if strings.Contains(out, "32K-2M") || strings.Contains(out, "32768-2097152") {
				t.Errorf("%s names a band the study did not measure:\n%s", f, out)
			}
			if name := FileName(f, timedBand(t)); strings.Contains(name, "32K-2M") {
				t.Errorf("%s file %s is named by a band the study did not measure", f, name)
			}
		})
	}
	var doc Document
	if err := json.Unmarshal(render(t, FormatJSON, []*Recommendation{timedBand(t)}, Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	want := []stored.Call{{Op: "all_reduce", Bytes: 40960, Calls: 760, MeasuredAt: 32768}, {Op: "all_reduce", Bytes: 2048000, Calls: 80, MeasuredAt: 2097152}}
	if !reflect.DeepEqual(doc.Calls, want) {
		t.Errorf("json calls %+v, want %+v", doc.Calls, want)
	}
	if doc.Band != "32K-2M" {
		t.Errorf("json band %q: the existing field is kept", doc.Band)
	}
}

// KeepsNCCL is the rule the tuner CSV writes unproven sizes by, read back
// from a CSV: at each gap between a timed study's calls (40960 and
// 2048000 bytes: 64K-1M), its own CSV keeps NCCL's choice (equal by
// rule); a row put first over one size's bin that changes its channels,
// a file with a row the plugin reads otherwise than written, or a size no
// row matches, does not; alltoall never reaches the plugin.
func TestKeepsNCCL(t *testing.T) {
	b := timedBand(t)
	own := string(render(t, FormatTuner, []*Recommendation{b}, Options{}))
	lo, hi := binRange(256 << 10)
	gaps := []int64{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20}
	for _, tc := range []struct {
		name string
		op   nccl.Op
		csv  string
		want []bool
	}{
		{"the study's CSV", nccl.AllReduce, own, []bool{true, true, true, true, true}},
		{"one channel at 256K", nccl.AllReduce, fmt.Sprintf("allreduce,%d,%d,ring,ll128,1,4,4,-1,-1\n", lo, hi) + own, []bool{true, true, false, true, true}},
		{"a row for 8 nodes at 256K", nccl.AllReduce, fmt.Sprintf("allreduce,%d,%d,ring,ll,1,8,8,-1,-1\n", lo, hi) + own, []bool{true, true, true, true, true}},
		{"an unknown name", nccl.AllReduce, "allreduce,0,10,ring,LL,0,4,4,-1,-1\n" + own, []bool{false, false, false, false, false}},
		{"no row below 256K", nccl.AllReduce, fmt.Sprintf("allreduce,%d,18446744073709551615,ring,simple,0,4,4,-1,-1\n", lo), []bool{false, false, false, false, false}},
		{"alltoall", nccl.AllToAll, "allreduce,0,18446744073709551615,ring,ll,1,-1,-1,-1,-1\n", []bool{true, true, true, true, true}},
	} {
		got, err := KeepsNCCL(b, tc.csv, tc.op, gaps)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: keeps %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

// Where the study read the recommendation's plan at a size the process
// calls (its own-size check's debug launch, phase exact), the row that
// covers that size delivers that plan, not its power of two's stretched
// over it: timedBand's 40960-byte call is measured at 32K (Tree/LL with 4
// channels there), and NCCL ran Ring/LL with 6 channels at 40960 under
// the recommendation. A plan read by the baseline, or at another ladder's
// size, makes no row; a call whose own size reads as its bin's row needs
// none (2048000: Ring/Simple with 8 channels, as at 2M).
func TestTunerRowsCarryThePlanReadAtTheCalledSize(t *testing.T) {
	exact := func(id, trial uint64, seq int, cs ...benchfmt.Choice) *store.Launch {
		return &store.Launch{ID: id, TrialID: trial, Seq: seq, Phase: vocab.PhaseExact, Op: nccl.AllReduce, Outcome: benchfmt.OK, Facts: &benchfmt.Facts{Choices: cs}}
	}
	at := func(b int64, algo, proto string, ch int) benchfmt.Choice {
		return benchfmt.Choice{Collective: "AllReduce", Bytes: b, Algo: algo, Proto: proto, Channels: ch}
	}
	first := func(csv string, x uint64) string {
		rows, ok := tunerRowsOf(csv)
		if !ok {
			t.Fatalf("unreadable CSV:\n%s", csv)
		}
		for _, r := range rows {
			if r.Collective == "allreduce" && x >= r.MinBytes && x <= r.MaxBytes {
				return fmt.Sprintf("%s,%s,%d", r.Algo, r.Proto, r.Channels)
			}
		}
		return "no row"
	}
	for _, tc := range []struct {
		name     string
		launches []*store.Launch
		at40960  string
		rows     int
	}{
		{"read at the call", []*store.Launch{
			exact(20, 10, 30, at(40960, "TREE", "LL", 5)), // the baseline's: not the recommendation's plan
			exact(21, 12, 31, at(40960, "RING", "LL", 6)),
			exact(22, 12, 32, at(2048000, "RING", "SIMPLE", 8)),
			exact(23, 12, 33, at(36864, "RING", "SIMPLE", 2)), // another ladder's size, under 40960
		}, "ring,ll,6", 7},
		{"another ladder's size only", []*store.Launch{exact(23, 12, 33, at(36864, "RING", "SIMPLE", 2))}, "tree,ll,4", 6},
		{"the baseline's read only", []*store.Launch{exact(20, 10, 30, at(40960, "TREE", "LL", 5))}, "tree,ll,4", 6},
	} {
		csv := string(render(t, FormatTuner, []*Recommendation{timedBand(t, tc.launches...)}, Options{}))
		if got := first(csv, 40960); got != tc.at40960 {
			t.Errorf("%s: the row the plugin matches at 40960 bytes gives %s, want %s\n%s", tc.name, got, tc.at40960, csv)
		}
		if got := first(csv, 2048000); got != "ring,simple,8" {
			t.Errorf("%s: at 2048000 bytes %s, want ring,simple,8 (its bin's row)", tc.name, got)
		}
		if got := first(csv, 40964); got != "tree,ll,4" {
			t.Errorf("%s: at 40964 bytes (not a call) %s, want its bin's row tree,ll,4", tc.name, got)
		}
		if rows, _ := tunerRowsOf(csv); len(rows) != tc.rows {
			t.Errorf("%s: %d rows, want %d\n%s", tc.name, len(rows), tc.rows, csv)
		}
	}
}
