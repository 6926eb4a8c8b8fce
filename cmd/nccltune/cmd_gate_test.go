package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// gateJSON is the part of gate's JSON the tests read.
type gateJSON struct {
	Pass     bool   `json:"pass"`
	JudgedOn string `json:"judged_on"`
	Checks   []struct {
		Bytes    int64    `json:"bytes"`
		MinBusBW float64  `json:"min_busbw"`
		BusBW    *float64 `json:"busbw"`
		BusBWLo  *float64 `json:"busbw_lo"`
		BusBWHi  *float64 `json:"busbw_hi"`
		Launches int      `json:"launches"`
		Pass     bool     `json:"pass"`
	} `json:"checks"`
	Study        string            `json:"study"`
	Simulated    bool              `json:"simulated"`
	SimProfile   string            `json:"sim_profile"`
	Env          map[string]string `json:"env"`
	Launches     int               `json:"launches"`
	FabricFailed bool              `json:"fabric_failed"`
	Error        *struct {
		Code    int    `json:"code"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
}

func decodeGate(t *testing.T, stdout string) gateJSON {
	t.Helper()
	var g gateJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&g); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
	}
	return g
}

var seedGate = []string{"--at", "1M:9", "--at", "256M:22"}

var tunedEnv = []string{"--env", "NCCL_PROTO=^LL128", "--env", "NCCL_MAX_NCHANNELS=8"}

// The README example on the simulated spark4: NCCL's defaults fall into
// the 512K–4M hole and fail at 1M; the seed's two knobs pass both sizes.
func TestGateSpark4SeedExample(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, append([]string{"gate", "--sim", "spark4", "--json"}, seedGate...)...)
	if code != exitCheckFailed {
		t.Fatalf("defaults: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	g := decodeGate(t, stdout)
	if g.Pass || !g.Simulated || g.SimProfile != "spark4" || g.JudgedOn != "median" || g.Launches != 5 || len(g.Checks) != 2 {
		t.Fatalf("defaults: %+v", g)
	}
	one, big := g.Checks[0], g.Checks[1]
	if one.Bytes != 1<<20 || one.Pass || one.BusBW == nil || *one.BusBW < 1 || *one.BusBW > 2 {
		t.Errorf("defaults at 1M: %+v, want a failing ≈1.4 GB/s", one)
	}
	if big.Bytes != 256<<20 || !big.Pass || *big.BusBW < 22 || *big.BusBWLo > *big.BusBW || *big.BusBWHi < *big.BusBW {
		t.Errorf("defaults at 256M: %+v, want a passing ≈22 GB/s inside its interval", big)
	}

	stdout, stderr, code = runCLI(t, db, append(append([]string{"gate", "--sim", "spark4", "--json"}, seedGate...), tunedEnv...)...)
	if code != exitOK {
		t.Fatalf("tuned: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	g = decodeGate(t, stdout)
	if !g.Pass || g.Env["NCCL_PROTO"] != "^LL128" || g.Env["NCCL_MAX_NCHANNELS"] != "8" {
		t.Fatalf("tuned: %+v", g)
	}
	for _, c := range g.Checks {
		if !c.Pass || c.BusBW == nil || *c.BusBW < c.MinBusBW || c.Launches != 5 {
			t.Errorf("tuned check %+v, want a pass over 5 launches", c)
		}
	}

	// Both gates are studies of kind "gate": 1 warm-up + 5 launches each.
	hist, _, code := runCLI(t, db, "history", "--json")
	if code != exitOK {
		t.Fatalf("history: exit %d", code)
	}
	var h struct {
		Studies []struct {
			Study     string `json:"study"`
			Kind      string `json:"kind"`
			Simulated bool   `json:"simulated"`
			Launches  int    `json:"launches"`
		} `json:"studies"`
	}
	if err := json.Unmarshal([]byte(hist), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Studies) != 2 {
		t.Fatalf("history holds %d studies, want the 2 gates:\n%s", len(h.Studies), hist)
	}
	for _, s := range h.Studies {
		if s.Kind != "gate" || !s.Simulated || s.Launches != 6 {
			t.Errorf("stored gate %+v, want kind gate, simulated, 6 launches", s)
		}
	}
}

// The text output says what it judged on and why, and labels the fabric.
func TestGateText(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, _, code := runCLI(t, db, append([]string{"gate", "--sim", "spark4"}, seedGate...)...)
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, s := range []string{"[SIMULATED fabric: spark4]", "Judged on the median busbw", "--judge lower-bound", "FAIL: 1M median 1."} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	stdout, _, code = runCLI(t, db, append(append([]string{"gate", "--sim", "spark4", "--judge", "lower-bound"}, seedGate...), tunedEnv...)...)
	if code != exitCheckFailed {
		t.Errorf("lower bound on seed 1: exit %d, want 1 (see TestGateJudgeLowerBound)", code)
	}
	for _, s := range []string{"Judged on the lower bound (one-sided 95 %)", "protects production", "FAIL: 256M lower bound 21."} {
		if !strings.Contains(stdout, s) {
			t.Errorf("lower-bound output lacks %q:\n%s", s, stdout)
		}
	}
}

// The same launches judged two ways: the tuned config's 256M median holds
// 22 GB/s, its lower bound (the slowest of 5 launches) does not.
func TestGateJudgeLowerBound(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	args := append(append([]string{"gate", "--sim", "spark4", "--json", "--judge", "lower-bound"}, seedGate...), tunedEnv...)
	stdout, _, code := runCLI(t, db, args...)
	g := decodeGate(t, stdout)
	if g.JudgedOn != "lower_bound" {
		t.Fatalf("judged_on %q", g.JudgedOn)
	}
	big := g.Checks[1]
	wantPass := *big.BusBWLo >= big.MinBusBW
	if big.Pass != wantPass || (code == exitOK) != (wantPass && g.Checks[0].Pass) {
		t.Errorf("256M lower bound %.2f vs %g: pass %v exit %d", *big.BusBWLo, big.MinBusBW, big.Pass, code)
	}
	if wantPass || *big.BusBW < big.MinBusBW {
		t.Errorf("seed 1 should put the 256M median (%.2f) above 22 and its lower bound (%.2f) below: the case this test exists for", *big.BusBW, *big.BusBWLo)
	}
}

func TestGateFabricFailed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault string
		code  string
	}{
		{"crash", "launch-failed"},
		{"wrong", "wrong-results"},
		{"mpi-wireup", "mpi-wireup"},
		{"hang", "no-progress"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			args := append([]string{"gate", "--sim", "spark4", "--json", "--timeout", "1s", "--base-env", "NCCLTUNE_SIM_FAULT=" + tt.fault}, seedGate...)
			stdout, stderr, code := runCLI(t, db, args...)
			if code != exitFabric {
				t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
			}
			g := decodeGate(t, stdout)
			if g.Pass || !g.FabricFailed || g.Error == nil || g.Error.Code != exitFabric || g.Error.Kind != "fabric" ||
				!strings.HasPrefix(g.Error.Message, "gate s1-gate: launch 1 ") || len(g.Checks) != 0 {
				t.Errorf("report %+v (error %+v), want no pass, fabric_failed, an error {3, fabric} naming the first launch", g, g.Error)
			}
			found := false
			for _, w := range g.Warnings {
				found = found || w.Code == tt.code
			}
			if !found {
				t.Errorf("warnings %+v lack %s", g.Warnings, tt.code)
			}
			if !strings.Contains(stderr, "gate s1-gate: launch 1") {
				t.Errorf("stderr does not name the failed launch: %s", stderr)
			}
		})
	}
}

func TestGateUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "no threshold given"},
		{[]string{"--at", "1M"}, "write SIZE:GBPS"},
		{[]string{"--at", "1X:9"}, "not a number of bytes"},
		{[]string{"--at", "3M:9"}, "not a power of two"},
		{[]string{"--at", "1M:0"}, "more than 0"},
		{[]string{"--at", "1M:-9"}, "more than 0"},
		{[]string{"--at", "1M:fast"}, "not a bus bandwidth"},
		{[]string{"--at", "1M:9", "--at", "1048576:10"}, "same size 1M"},
		{[]string{"--at", "1M:9", "--judge", "mean"}, "judge on median or lower-bound"},
		{[]string{"--at", "1M:9", "--judge", "lower-bound", "--repeats", "3"}, "needs at least 5 launches"},
		{[]string{"--at", "1M:9", "--repeats", "0"}, "measure at least once"},
		{[]string{"--at", "1M:9", "--env", "NCCL_PROTO=^LL128", "--base-env", "NCCL_PROTO=Simple"}, "set by both"},
		{[]string{"--at", "1M:9", "stray"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{"gate", "--sim", "spark4"}, tt.args...)
			stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d stderr %q stdout %q; want exit 2 naming %q", code, stderr, stdout, tt.want)
			}
		})
	}
}
