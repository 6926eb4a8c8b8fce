package sim

import (
	"errors"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// The per-function form takes NCCL's function names only (ncclFuncStr):
// a prefix for send/recv or all-to-all fails as NCCL fails it.
func TestPerFunctionPrefixes(t *testing.T) {
	p, err := LoadProfile("spark4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		value string
		ok    bool
	}{
		{"allreduce:^LL128", true},
		{"AllGather:Simple;broadcast:LL", true},
		{"sendrecv:Simple", false},
		{"alltoall:^LL", false},
		{"send:LL", false},
	} {
		_, err := p.SampleLaunch(nccl.Config{"NCCL_PROTO": tt.value}, []int64{1 << 20}, 2, 0, 1, 1)
		// A refused value fails as NCCL's invalid usage; an accepted one
		// does not fail at all.
		var ue *UsageError
		if tt.ok && err != nil || !tt.ok && !errors.As(err, &ue) {
			t.Errorf("NCCL_PROTO=%s: err %v, want ok %v", tt.value, err, tt.ok)
		}
	}
}
