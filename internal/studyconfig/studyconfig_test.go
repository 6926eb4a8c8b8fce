package studyconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/vocab"
	"github.com/nccltune/nccltune/internal/workload"
)

// TestConfigValues: a scalar is one value, a list repeats a repeatable
// flag, a map gives K=V per entry; the rest is refused with the reason.
func TestConfigValues(t *testing.T) {
	for _, tc := range []struct {
		yaml       string
		repeatable bool
		want       []string
		err        string
	}{
		{"512K-4M", false, []string{"512K-4M"}, ""},
		{"[NCCL_NTHREADS, 'NCCL_MAX_NCHANNELS=unset,2,4']", true, []string{"NCCL_NTHREADS", "NCCL_MAX_NCHANNELS=unset,2,4"}, ""},
		{"{NCCL_IB_HCA: '=mlx5_0', B: 2}", true, []string{"NCCL_IB_HCA==mlx5_0", "B=2"}, ""},
		{"[1M, 2M]", false, nil, "takes one value, not a list"},
		{"{A: 1}", false, nil, "takes one value, not a map"},
		{"~", false, nil, "no value"},
		{"[[a]]", true, nil, "each item must be one value"},
		{"{A: [1]}", true, nil, "A must map to one value"},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tc.yaml), &doc); err != nil {
			t.Fatal(err)
		}
		got, err := configValues(doc.Content[0], tc.repeatable)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.yaml, got, err, tc.want)
		}
	}
}

func TestRepeatableAndNearestKey(t *testing.T) {
	flags := map[string]cli.Flag{
		"band":     &cli.StringFlag{Name: "band"},
		"base-env": &cli.StringSliceFlag{Name: "base-env"},
		"budget":   &cli.IntFlag{Name: "budget"},
	}
	if Repeatable(flags["band"]) || !Repeatable(flags["base-env"]) {
		t.Error("Repeatable: want base-env only")
	}
	for key, want := range map[string]string{"bugdet": "budget", "base_env": "base-env", "--band": "band"} {
		if got := nearestKey(key, flags); got != "; the nearest valid key is "+want {
			t.Errorf("nearestKey(%s) = %q, want %s", key, got, want)
		}
	}
}

// setByConfig runs a search-like command with --config holding text and
// returns the flags the file set, by name, with their values.
func setByConfig(t *testing.T, text string) (map[string]string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set := map[string]string{}
	cmd := With(&cli.Command{Name: "search",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "part"}, &cli.StringSliceFlag{Name: "calls"}, &cli.StringFlag{Name: "band"}, &cli.StringFlag{Name: "wrapper"},
			&cli.StringFlag{Name: "prefix"}, &cli.StringFlag{Name: "bench"}, &cli.IntFlag{Name: "budget"},
			&cli.StringSliceFlag{Name: "base-env"},
		},
		Action: func(c *cli.Context) error {
			for _, name := range c.FlagNames() {
				switch {
				case name == configFlagName || !c.IsSet(name):
				case name == "part" || name == "calls" || name == "base-env":
					set[name] = fmt.Sprint(c.StringSlice(name))
				default:
					set[name] = fmt.Sprint(c.Value(name))
				}
			}
			return nil
		}}, nil)
	app := &cli.App{Name: "nccltune", Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run([]string{"nccltune", "search", "--config", path})
	return set, err
}

// TestGeneratedConfigHoldsOnlyTheWorkload (issue 38): a config written by
// nccltune workload from a log whose communicator id or file name holds a
// line break and "wrapper: …" sets the workload (calls, since issue 40)
// and nothing else.
func TestGeneratedConfigHoldsOnlyTheWorkload(t *testing.T) {
	inspector := func(id string, ranks, calls int) string {
		var b strings.Builder
		for sn := range calls {
			for r := range ranks {
				fmt.Fprintf(&b, `{"header":{"id":%q,"rank":%d,"n_ranks":%d,"nnodes":1},"metadata":{"hostname":"h","pid":%d},`+
					`"coll_perf":{"coll":"AllReduce","coll_sn":%d,"coll_msg_size_bytes":1048576,"coll_exec_time_us":100,"coll_timing_source":"kernel_gpu"}}`+"\n",
					id, r, ranks, 100*ranks+r, sn)
			}
		}
		return b.String()
	}
	for _, brk := range []string{"\n", "\r", "\v", "\f", "\u0085", "\u2028", "\u2029"} {
		evil := "x" + brk + "wrapper: /tmp/evil.sh" + brk + "prefix: sh -c 'touch /tmp/pwned'" + brk + "budget: 7"
		for name, in := range map[string]workload.Input{
			"comm id":   {Name: "inspector.json", Log: parseCalls(t, inspector("0xgood", 4, 8)+inspector(evil, 2, 2))},
			"file name": {Name: evil, Log: parseCalls(t, inspector("0xgood", 4, 8))},
		} {
			s, err := workload.Summarize([]workload.Input{in}, workload.Options{})
			if err != nil {
				t.Fatal(err)
			}
			set, err := setByConfig(t, string(s.ConfigYAML(time.Now(), evil)))
			if err != nil || len(set) != 1 || set["calls"] == "" {
				t.Errorf("%s %q: the config set %v (%v), want calls only", name, brk, set, err)
			}
		}
	}
}

func parseCalls(t *testing.T, text string) *benchfmt.CallLog {
	t.Helper()
	cl, err := benchfmt.ParseCalls([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestConfigRefusals: a generated file holding any key but calls or part, keys
// that are aliases or tagged, and tagged or aliased values are usage
// errors that say why.
func TestConfigRefusals(t *testing.T) {
	const mark = "generated-by: nccltune workload\n"
	for _, tc := range []struct{ name, text, want string }{
		{"generated with prefix", mark + "part: [all_reduce:1M:1]\nprefix: sh -c 'touch /tmp/pwned'\n", `line 3: "prefix": this file was generated by nccltune workload from a log and may only hold the workload (part)`},
		{"generated with wrapper", mark + "wrapper: /tmp/evil.sh\npart: [all_reduce:1M:1]\n", `"wrapper": this file was generated by nccltune workload`},
		{"generated with budget", mark + "part: [all_reduce:1M:1]\nbudget: 7\n", `"budget": this file was generated`},
		{"generated calls with wrapper", mark + "calls: [all_reduce:10240:760]\nwrapper: /tmp/evil.sh\n", `line 3: "wrapper": this file was generated by nccltune workload from a log and may only hold the workload (part), or its calls (calls)`},
		{"generated, the mark last", "bench: /tmp/evil\npart: [all_reduce:1M:1]\n" + mark, `line 1: "bench": this file was generated`},
		{"generated twice", mark + mark + "part: [all_reduce:1M:1]\n", "generated-by is given twice"},
		{"another mark", "generated-by: me\nband: 1M\n", `generated-by must be "nccltune workload"`},
		{"alias key", "&wrapper band: 1M\n*wrapper : /tmp/evil.sh\n", "line 2: a key must be a flag's name as plain text, not an alias"},
		{"merge key", "<<: {wrapper: /tmp/evil.sh}\n", "a key must be a flag's name as plain text"},
		{"tagged key", "!x wrapper: /tmp/evil.sh\n", "a key must be a flag's name as plain text"},
		{"binary value", "bench: !!binary L3RtcC9ldmls\n", "bench: the YAML tag !!binary is not supported"},
		{"custom tag in a list", "part: [!x all_reduce:1M:1]\n", "the YAML tag !x is not supported"},
		{"alias env name", "base-env: {&n A: 1, *n : 2}\n", "aliases are not supported"},
	} {
		set, err := setByConfig(t, tc.text)
		if err == nil || !errors.Is(err, vocab.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: set %v, err %v; want a usage error with %q", tc.name, set, err, tc.want)
		}
	}
	// What a generated file holds is read: its calls (issue 40), or the
	// part of a file written before.
	for _, tc := range []struct {
		name, text string
		want       map[string]string
	}{
		{"calls", mark + "# from x\ncalls: [\"all_reduce:10240:760\", \"all_reduce:2048000:80\"]\n", map[string]string{"calls": "[all_reduce:10240:760 all_reduce:2048000:80]"}},
		{"part, written before calls", mark + "# from x\npart: [\"all_reduce:1M:1\"]\n", map[string]string{"part": "[all_reduce:1M:1]"}},
	} {
		set, err := setByConfig(t, tc.text)
		if err != nil || !reflect.DeepEqual(set, tc.want) {
			t.Errorf("a generated file of %s: set %v, %v; want %v", tc.name, set, err, tc.want)
		}
	}
	set, err := setByConfig(t, "band: !!str 1M\nbudget: !!int 8\n")
	if err != nil || set["band"] != "1M" || set["budget"] != "8" {
		t.Errorf("explicit plain tags: %v, %v", set, err)
	}
}
