package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/benchfmt"
	"github.com/nccltune/nccltune/nccl"
)

// TestCollectiveNamesItsBenchmark: --collective makes the simulator the
// op's *_perf, in the text and the -J output, so the parser reads the op.
func TestCollectiveNamesItsBenchmark(t *testing.T) {
	for _, op := range nccl.Ops {
		t.Run(string(op), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.json")
			r := runMain(t, nil, "--profile", "h200-loopback", "--collective", string(op), "-b", "1M", "-e", "2M", "-f", "2", "-n", "5", "-J", path)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			res, err := benchfmt.Parse([]byte(r.stdout))
			if err != nil || res.Op() != op {
				t.Fatalf("text: op %q (collective %q), %v; want %s", res.Op(), res.Collective, err, op)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			jr, err := benchfmt.ParseJSON(data)
			if err != nil || jr.Op() != op {
				t.Fatalf("JSON: op %q, %v; want %s", jr.Op(), err, op)
			}
		})
	}
	if r := runMain(t, nil, "--profile", "flat", "--collective", "gather"); r.code != 2 {
		t.Errorf("--collective gather: exit %d, want 2", r.code)
	}
}
