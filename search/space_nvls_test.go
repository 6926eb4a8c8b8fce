package search

import (
	"strings"
	"testing"
)

// On a shared multi-GPU host NVLink SHARP stays off (NCCL_NVLS_ENABLE=0 in
// the base env); a search must then never try NCCL_ALGO=NVLS.
func TestCheckBaseRefusesNVLSWhenDisabled(t *testing.T) {
	t.Parallel()
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

// TestCheckHasCandidates: a space whose every config is NCCL's defaults
// or invalid under the base env has nothing to try.
func TestCheckHasCandidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		items []string
		base  map[string]string
		want  string // "" passes
	}{
		{"default space", nil, nil, ""},
		{"min above max", []string{"NCCL_MAX_NCHANNELS=4", "NCCL_MIN_NCHANNELS=8"}, nil, "no config in it besides NCCL's defaults is valid (NCCL_MIN_NCHANNELS=8 is larger than NCCL_MAX_NCHANNELS=4)"},
		{"only unset", []string{"NCCL_PROTO=unset"}, nil, "every config in it is NCCL's defaults"},
		{"a valid one", []string{"NCCL_MAX_NCHANNELS=4,16", "NCCL_MIN_NCHANNELS=8"}, nil, ""},
		{"base env in the way", []string{"NCCL_MIN_NCHANNELS=8"}, map[string]string{"NCCL_MAX_NCHANNELS": "4"}, "NCCL_MIN_NCHANNELS=8 is larger than NCCL_MAX_NCHANNELS=4"},
	} {
		var space Space
		if tc.items != nil {
			var err error
			if space, err = ParseSpace(tc.items, true); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		err := space.CheckHasCandidates(tc.base)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
