package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/flagvalue"
	"github.com/nccltune/nccltune/internal/studyconfig"
)

// TestTypedFlagValues: sizes, bands and K=V lists are refused as they are
// set, in nccltune's words (not package flag's "invalid value … for flag
// -min"), with exit code 2, from the command line and from --config.
func TestTypedFlagValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "lane.yaml")
	if err := os.WriteFile(config, []byte("env: [NCCL_PROTO=LL, NCCL_PROTO=Simple]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--sim", "spark4", "--min", "3X"}, `nccltune: --min: size "3X" is not a number of bytes with an optional K, M or G suffix (e.g. 512K, 4M, 1G)` + "\n"},
		{[]string{"sweep", "--sim", "spark4", "--max", "1KB"}, `nccltune: --max: size "1KB": write 512K, not 512KiB or 512KB (nccl-tests' units are K, M, G = 1024ⁿ)` + "\n"},
		{[]string{"search", "--sim", "spark4", "--band", "1X"}, `nccltune: --band: band "1X": size "1X" is not a number of bytes with an optional K, M or G suffix (e.g. 512K, 4M, 1G)` + "\n"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--guard", "2"}, "nccltune: --guard: 2 bytes is below one element (4 bytes, a float); nccl-tests cannot measure it — use 4 or more\n"},
		{[]string{"sweep", "--sim", "spark4", "--env", "NCCL_PROTO=LL", "--env", "NCCL_PROTO=Simple"}, `nccltune: NCCL_PROTO is given twice to --env ("NCCL_PROTO=LL" and "NCCL_PROTO=Simple"); give it once` + "\n"},
		{[]string{"sweep", "--sim", "spark4", "--env", "garbage"}, `nccltune: --env: "garbage" is not KEY=VALUE (e.g. NCCL_PROTO=^LL128)` + "\n"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--base-env", "1X=2"}, `nccltune: --base-env: "1X=2": "1X" is not an environment variable name` + "\n"},
		{[]string{"search", "--sim", "spark4", "--band", "1M", "--baseline-env", "NCCL_IB_HCA=x"}, "nccltune: --baseline-env NCCL_IB_HCA=x: not a knob nccltune tunes; a lane's fixed setting such as NCCL_IB_HCA goes in --base-env\n"},
		{[]string{"gate", "--sim", "spark4", "--at", "1M:9", "--at", "1048576:10"}, `nccltune: --at: "1M:9" and "1048576:10" name the same size 1M: keep one threshold per size` + "\n"},
		{[]string{"history", "--label", "a=1", "--label", "a=2"}, "nccltune: --label a is given twice; give it once\n"},
		{[]string{"import", "--env", "9=1", "x.txt"}, `nccltune: --env "9=1": "9" is not an environment variable name` + "\n"},
		{[]string{"sweep", "--sim", "spark4", "--config", config}, "nccltune: --config " + config + `: line 1: NCCL_PROTO is given twice to --env ("NCCL_PROTO=LL" and "NCCL_PROTO=Simple"); give it once` + "\n"},
	} {
		db := filepath.Join(t.TempDir(), "db")
		stdout, stderr, code := runCLI(t, db, tc.args...)
		if code != exitUsage || stderr != tc.want || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q (stdout %q)", tc.args, code, stderr, tc.want, stdout)
		}
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%v: a refused flag created the database", tc.args)
		}
	}
}

// TestTypedListFlagsReadAsRepeatable: the typed K=V lists show in help,
// and read from a study config, as repeatable flags.
func TestTypedListFlagsReadAsRepeatable(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "search", "--help")
	for _, want := range []string{"--base-env K=V [ --base-env K=V ]", "--label K=V [ --label K=V ]", "--guard value [ --guard value ]"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("search --help (exit %d) lacks %q", code, want)
		}
	}
	for _, f := range newApp(nil, nil).Command("search").Flags {
		if _, typed := f.(*flagvalue.List); typed && !studyconfig.Repeatable(f) {
			t.Errorf("--%s is a list but a config cannot give it one", f.Names()[0])
		}
	}
}
