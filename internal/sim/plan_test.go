package sim_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/sim"
)

// The simulator's debug log tells nccltune NCCL's plan: its per-size lines
// must be what its cost model runs, and its TUNING table must say which
// protocols its NCCL enabled by default.
func TestDebugLogPlanMatchesModel(t *testing.T) {
	tests := []struct {
		profile string
		env     map[string]string
		ll128   nccl.Status
	}{
		{"spark4", nil, nccl.Enabled},
		{"spark4", map[string]string{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"}, nccl.Enabled},
		{"spark2", nil, nccl.Enabled},
		{"h200-loopback", nil, nccl.Disabled},
		{"flat", nil, nccl.Disabled},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			p, err := sim.LoadProfile(tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			environ := []string{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH,TUNING"}
			for k, v := range tt.env {
				environ = append(environ, k+"="+v)
			}
			var out bytes.Buffer
			if code := sim.Main([]string{"--profile", tt.profile, "--noise", "0", "-b", "32K", "-e", "64M", "-f", "2"}, environ, &out, io.Discard); code != 0 {
				t.Fatalf("exit %d", code)
			}
			n, ok := benchfmt.ParseFacts(out.Bytes()).Native("")
			if !ok {
				t.Fatal("no plan in the simulated debug log")
			}
			for _, size := range nccl.PowersOfTwo(32<<10, 64<<20) {
				c, err := p.Choose(tt.env, size)
				if err != nil {
					t.Fatal(err)
				}
				want := nccl.Choice{Algo: nccl.NormName(c.Algo), Proto: nccl.NormName(c.Proto), Channels: c.Channels}
				if got := n.Plan[size]; got != want {
					t.Errorf("%s: log says %v, the model runs %v", nccl.FormatSize(size), got, want)
				}
			}
			if len(tt.env) == 0 {
				if got := n.ProtoStatus("LL128"); got != tt.ll128 {
					t.Errorf("LL128 %v by default, want %v", got, tt.ll128)
				}
			}
		})
	}
}
