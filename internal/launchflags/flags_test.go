package launchflags

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/studyrun"
	"github.com/nccltune/nccltune/internal/vocab"
)

// run parses args as nccltune does (no slice separator) with the launch
// and baseline flags and --env, and calls read with the context.
func run(t *testing.T, args []string, read func(*cli.Context)) error {
	t.Helper()
	app := &cli.App{Name: "x", Writer: io.Discard, ErrWriter: io.Discard, DisableSliceFlagSeparator: true,
		Flags:  append(append(Flags(), BaselineFlags()...), EnvFlag("")),
		Action: func(c *cli.Context) error { read(c); return nil }}
	return app.Run(append([]string{"x"}, args...))
}

// read is Read of the launch flags args.
func read(t *testing.T, args ...string) (l studyrun.LaunchSettings, err error) {
	t.Helper()
	if perr := run(t, args, func(c *cli.Context) { l, err = Read(c) }); perr != nil {
		t.Fatalf("%q: %v", args, perr)
	}
	return l, err
}

func TestRead(t *testing.T) {
	l, err := read(t, "--launcher", "mpirun", "--hosts", "a:1, b:1", "--prefix", "docker exec 'my lane'", "--wrapper", "w.sh", "--iters", "3")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a:1", "b:1"}; !reflect.DeepEqual(l.Spec.Hosts, want) {
		t.Errorf("hosts %q, want %q", l.Spec.Hosts, want)
	}
	if want := []string{"docker", "exec", "my lane", "w.sh"}; !reflect.DeepEqual(l.Spec.Prefix, want) {
		t.Errorf("prefix %q, want %q", l.Spec.Prefix, want)
	}
	if l.Simulated || l.Spec.Sim != nil || l.Spec.Iters != 3 || !l.Spec.PerIter || l.Seed != 1 {
		t.Errorf("got %+v", l)
	}
	l, err = read(t, "--sim", "spark4", "--noise", "0", "--seed", "9")
	if err != nil || !l.Simulated || l.Spec.Sim == nil || l.Spec.Sim.Profile != "spark4" || l.Spec.Sim.Noise != 0 || l.Spec.Sim.Seed != 9 {
		t.Errorf("--sim spark4: %+v, %v", l, err)
	}
}

// TestReadOp: --op picks the collective (all_reduce unless given), in
// nccl-tests' spelling or its benchmark's name.
func TestReadOp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want nccl.Op
	}{
		{nil, nccl.AllReduce},
		{[]string{"--op", "all_gather"}, nccl.AllGather},
		{[]string{"--op", "alltoall_perf"}, nccl.AllToAll},
		{[]string{"--op", "sendrecv", "--sim", "h200-loopback"}, nccl.SendRecv},
	} {
		l, err := read(t, tc.args...)
		if err != nil || l.Spec.Op != tc.want {
			t.Errorf("%q: op %q, %v; want %q", tc.args, l.Spec.Op, err, tc.want)
		}
	}
}

// TestReadRefuses: each bad launch flag is a usage error naming it.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--iters", "-1"}, "--iters and --warmup cannot be negative"},
		{[]string{"--prefix", "docker 'exec"}, "--prefix: "},
		{[]string{"--noise", "0.5"}, "--noise only applies to the simulated fabric (--sim PROFILE)"},
		{[]string{"--sim", "spark4", "--bench", "/b"}, "--sim replaces the benchmark; drop --bench"},
		{[]string{"--sim", "spark4", "--launcher", "srun"}, "--sim runs the simulated fabric as one local process; drop --launcher srun"},
		{[]string{"--sim", "spark4", "--noise", "-1"}, "--noise -1: the noise scale cannot be negative"},
		{[]string{"--sim", "sprak4"}, "--sim sprak4: did you mean spark4?"},
		{[]string{"--sim", "replay:/nonexistent/x.json"}, "--sim replay:/nonexistent/x.json: "},
		{[]string{"--base-env", "NCCL_PROTO=bogus"}, "--base-env: "},
		{[]string{"--op", "allgathr"}, `--op: unknown collective "allgathr" (did you mean all_gather?)`},
		{[]string{"--op", "gather"}, `--op: unknown collective "gather"`},
	} {
		_, err := read(t, tc.args...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, vocab.ErrUsage) {
			t.Errorf("%q: %v, want a usage error starting %q", tc.args, err, tc.want)
		}
	}
}

func TestReadBaseEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lane.env")
	if err := os.WriteFile(file, []byte("# the lane\n\nNCCL_IB_HCA=mlx5_0\nNCCL_SOCKET_IFNAME=eth0\nNCCL_DEBUG=WARN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, _, err := ReadBaseEnv([]string{"NCCL_DEBUG=INFO"}, file)
	want := map[string]string{"NCCL_IB_HCA": "mlx5_0", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_DEBUG": "INFO"}
	if err != nil || !reflect.DeepEqual(env, want) {
		t.Errorf("ReadBaseEnv = %v, %v; want %v (--base-env last)", env, err, want)
	}
	if err := os.WriteFile(file, []byte("NCCL_DEBUG=WARN\nnot a setting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadBaseEnv(nil, file); err == nil || !strings.HasPrefix(err.Error(), file+":2: ") {
		t.Errorf("a bad line: %v, want it named %s:2", err, file)
	}
	if _, _, err := ReadBaseEnv([]string{"NCCL_MIN_NCHANNELS=8", "NCCL_MAX_NCHANNELS=4"}, ""); err == nil || !strings.HasPrefix(err.Error(), "--base-env: ") {
		t.Errorf("MIN above MAX: %v, want a --base-env error", err)
	}
}

// TestEnvFileReadsAsDocker: each line of a --base-env-file means what it
// means to docker's --env-file (docker/cli pkg/kvfile): leading
// whitespace trimmed, # lines and blank lines skipped, VAR=VAL literal
// (quotes, an inline "# …" and trailing blanks are the value's), a bare
// VAR from the environment or left out. Where a shell reads the line
// otherwise, a warning says so (was: quotes stripped and an inline
// comment kept, unlike docker, with no word).
func TestEnvFileReadsAsDocker(t *testing.T) {
	t.Setenv("NCCLTUNE_TEST_FROM_ENV", "eth9")
	os.Unsetenv("NCCLTUNE_TEST_UNSET")
	for _, tc := range []struct {
		line string
		want map[string]string // docker's meaning; nil: refused
		warn string            // in a warning; "" none
	}{
		{"NCCL_SOCKET_IFNAME=eth0", map[string]string{"NCCL_SOCKET_IFNAME": "eth0"}, ""},
		{"   NCCL_SOCKET_IFNAME=eth0", map[string]string{"NCCL_SOCKET_IFNAME": "eth0"}, ""},
		{"# NCCL_SOCKET_IFNAME=eth0", map[string]string{}, ""},
		{"   # indented comment", map[string]string{}, ""},
		{"", map[string]string{}, ""},
		{"NCCL_IB_HCA=\"mlx5_0\"", map[string]string{"NCCL_IB_HCA": "\"mlx5_0\""}, "keeps its quotes"},
		{"NCCL_IB_HCA='mlx5_0'", map[string]string{"NCCL_IB_HCA": "'mlx5_0'"}, "keeps its quotes"},
		{"NCCL_IB_HCA=\"mlx5_0", map[string]string{"NCCL_IB_HCA": "\"mlx5_0"}, ""},
		{"NCCL_SOCKET_IFNAME=eth0 # the lane's NIC", map[string]string{"NCCL_SOCKET_IFNAME": "eth0 # the lane's NIC"}, "no inline comments"},
		{"NCCL_SOCKET_IFNAME=eth0#1", map[string]string{"NCCL_SOCKET_IFNAME": "eth0#1"}, ""},
		{"NCCL_SOCKET_IFNAME=eth0  ", map[string]string{"NCCL_SOCKET_IFNAME": "eth0  "}, ""},
		{"NCCL_SOCKET_IFNAME=eth0\r", map[string]string{"NCCL_SOCKET_IFNAME": "eth0"}, ""},
		{"NCCL_SOCKET_IFNAME=", map[string]string{"NCCL_SOCKET_IFNAME": ""}, ""},
		{"NCCL_IB_HCA==mlx5_0", map[string]string{"NCCL_IB_HCA": "=mlx5_0"}, ""},
		{"\xEF\xBB\xBFNCCL_DEBUG=WARN", map[string]string{"NCCL_DEBUG": "WARN"}, ""},
		{"NCCLTUNE_TEST_FROM_ENV", map[string]string{"NCCLTUNE_TEST_FROM_ENV": "eth9"}, ""},
		{"NCCLTUNE_TEST_UNSET", map[string]string{}, ""},
		{"export NCCL_DEBUG=WARN", map[string]string{"NCCL_DEBUG": "WARN"}, "docker's --env-file refuses this line"},
		{"NCCL DEBUG=WARN", nil, ""},
		{"=WARN", nil, ""},
		{"NCCL_DEBUG=\xff", nil, ""},
	} {
		file := filepath.Join(t.TempDir(), "lane.env")
		if err := os.WriteFile(file, []byte(tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env, warnings, err := readEnvFile("--base-env-file", file)
		if tc.want == nil {
			if err == nil || !strings.HasPrefix(err.Error(), file+":1: ") {
				t.Errorf("%q: %v, %v; want refused, naming line 1", tc.line, env, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(env, tc.want) {
			t.Errorf("%q: %q, %v; docker reads %q", tc.line, env, err, tc.want)
		}
		var got []string
		for _, w := range warnings {
			if w.Code != CodeEnvFile || !strings.HasPrefix(w.Message, file+":1: ") || w.Fix == "" {
				t.Errorf("%q: warning %+v lacks its code, line or fix", tc.line, w)
			}
			got = append(got, w.Message)
		}
		if tc.warn == "" && len(got) > 0 || tc.warn != "" && (len(got) != 1 || !strings.Contains(got[0], tc.warn)) {
			t.Errorf("%q: warnings %q, want %q", tc.line, got, tc.warn)
		}
	}
}

// TestReadConfigAndBaseline: --env and --baseline-env give known knobs
// that the base env does not fix.
func TestReadConfigAndBaseline(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		env, basel nccl.Config
		want       string // the error; "" none
	}{
		{args: []string{"--env", "NCCL_PROTO=Simple", "--baseline-env", "NCCL_ALGO=Ring"},
			env: nccl.Config{"NCCL_PROTO": "Simple"}, basel: nccl.Config{"NCCL_ALGO": "Ring"}},
		{args: []string{"--env", "NCCL_PROTO=Simple", "--base-env", "NCCL_PROTO=LL"}, want: "NCCL_PROTO is set by both --env and --base-env; keep one"},
		{args: []string{"--baseline-env", "NCCL_PROTO=LL", "--base-env", "NCCL_PROTO=LL"},
			want: "NCCL_PROTO is in both --baseline-env and --base-env: the base env is held constant, the baseline is where the search starts; keep it in one"},
	} {
		var env, basel nccl.Config
		var err error
		perr := run(t, tc.args, func(c *cli.Context) {
			base, _, _ := ReadBaseEnv(nil, "")
			if l, lerr := Read(c); lerr == nil {
				base = l.Spec.BaseEnv
			}
			if env, err = ReadConfig(c, "env", base); err == nil {
				basel, err = ReadBaseline(c, base)
			}
		})
		if perr != nil {
			t.Fatalf("%q: %v", tc.args, perr)
		}
		if tc.want != "" {
			if err == nil || err.Error() != tc.want || !errors.Is(err, vocab.ErrUsage) {
				t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(env, tc.env) || !reflect.DeepEqual(basel, tc.basel) {
			t.Errorf("%q: env %v baseline %v (%v), want %v and %v", tc.args, env, basel, err, tc.env, tc.basel)
		}
	}
}

// TestBaselineRefusesFixedSettings: an NCCL variable nccltune does not
// tune goes in --base-env, refused as the flag is set.
func TestBaselineRefusesFixedSettings(t *testing.T) {
	err := run(t, []string{"--baseline-env", "NCCL_IB_HCA=mlx5"}, func(*cli.Context) {})
	want := "--baseline-env NCCL_IB_HCA=mlx5: not a knob nccltune tunes; a lane's fixed setting such as NCCL_IB_HCA goes in --base-env"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
