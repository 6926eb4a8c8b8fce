package sim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
)

// netRoutes runs one debug launch of profile under env and returns the
// channel-to-NIC routes its log prints.
func netRoutes(t *testing.T, profile string, env ...string) []string {
	t.Helper()
	environ := append([]string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING"}, env...)
	var out bytes.Buffer
	if code := sim.Main([]string{"--profile", profile, "--noise", "0", "-b", "1M", "-e", "1M"}, environ, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return benchfmt.ParseFacts(out.Bytes()).NetRoutes
}

// The simulated fabric prints every channel's route, and NCCL_CROSS_NIC
// moves a route exactly where it changes the time: on spark4 (two rails,
// no cross-rail cost) every value routes as the defaults do; with a
// profile where crossing rails costs bandwidth, NCCL_CROSS_NIC=1 sends
// through the other rail, and its time is slower.
func TestCrossNICRoutes(t *testing.T) {
	def := netRoutes(t, "spark4")
	if len(def) == 0 {
		t.Fatal("spark4's debug log prints no network routes")
	}
	for _, v := range []string{"0", "1", "2"} {
		if got := netRoutes(t, "spark4", "NCCL_CROSS_NIC="+v); !slices.Equal(got, def) {
			t.Errorf("spark4 NCCL_CROSS_NIC=%s routes differ from the defaults'", v)
		}
	}
	// The same fabric where crossing rails costs 20 % of the bandwidth.
	data, err := os.ReadFile("profiles/spark4.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["transports"].(map[string]any)["IB"].(map[string]any)["cross_nic_penalty"] = 0.2
	data, _ = json.Marshal(raw)
	file := filepath.Join(t.TempDir(), "spark4-cross.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := netRoutes(t, file, "NCCL_CROSS_NIC=0"); !slices.Equal(got, def) {
		t.Error("NCCL_CROSS_NIC=0 moved a route")
	}
	if got := netRoutes(t, file, "NCCL_CROSS_NIC=1"); slices.Equal(got, def) {
		t.Error("NCCL_CROSS_NIC=1 with a cross-rail cost routes as the defaults do")
	}
	p, err := sim.LoadProfile(file)
	if err != nil {
		t.Fatal(err)
	}
	at := func(env nccl.Config) float64 {
		s, err := p.SampleLaunch(env, []int64{4 << 20}, 1, 0, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		return s[4<<20][0]
	}
	if slow, base := at(nccl.Config{"NCCL_CROSS_NIC": "1"}), at(nccl.Config{}); !(slow > base) {
		t.Errorf("NCCL_CROSS_NIC=1 takes %.1f µs at 4M, the defaults %.1f: the route moved but the time did not", slow, base)
	}
}
