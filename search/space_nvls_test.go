package search

import (
	"strings"
	"testing"
)

// On a shared multi-GPU host NVLink SHARP stays off (NCCL_NVLS_ENABLE=0 in
// the base env); a search must then never try NCCL_ALGO=NVLS.
func TestCheckBaseRefusesNVLSWhenDisabled(t *testing.T) {
	nvlsOff := map[string]string{"NCCL_NVLS_ENABLE": "0"}
	tests := []struct {
		name  string
		space []string
		base  map[string]string
		want  string // "" = accepted
	}{
		{"default space with NVLS off", nil, nvlsOff, ""},
		{"NVLS searched with NVLS off", []string{"NCCL_ALGO=unset,Ring,NVLS"}, nvlsOff, "NCCL_ALGO=NVLS is in the search space"},
		{"NVLSTree in a list", []string{"NCCL_ALGO=Ring|Ring,nvlstree"}, nvlsOff, "NCCL_ALGO=Ring,nvlstree"},
		{"per-collective NVLS", []string{"NCCL_ALGO=allreduce:NVLS;allgather:Ring"}, nvlsOff, "allreduce:NVLS"},
		{"NVLS excluded is fine", []string{"NCCL_ALGO=unset|^NVLS|^NVLS,NVLSTree"}, nvlsOff, ""},
		{"NVLS searched where it is on", []string{"NCCL_ALGO=unset,NVLS"}, map[string]string{"NCCL_NVLS_ENABLE": "1"}, ""},
		{"NVLS searched, no base env", []string{"NCCL_ALGO=unset,NVLS"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSpace(tt.space, false)
			if err != nil {
				t.Fatal(err)
			}
			err = s.CheckBase(tt.base)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}
