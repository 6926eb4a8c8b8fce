package nccl

import (
	"reflect"
	"testing"
)

func TestCommSettingsOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        Config
		want       CommSettings
		perProcess []string
	}{
		{"defaults", Config{}, CommSettings{Env: map[string]string{}}, nil},
		{"protocol and algorithm in the env", Config{"NCCL_PROTO": "^LL128", "NCCL_ALGO": "allreduce:tree"},
			CommSettings{Env: map[string]string{"NCCL_PROTO": "^LL128", "NCCL_ALGO": "allreduce:tree"}}, nil},
		{"a channel cap is maxCTAs", Config{"NCCL_MAX_NCHANNELS": "8"}, CommSettings{Env: map[string]string{}, MaxCTAs: 8}, nil},
		{"the smaller cap binds", Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "4"}, CommSettings{Env: map[string]string{}, MaxCTAs: 4}, nil},
		{"the larger floor binds", Config{"NCCL_MIN_NCHANNELS": "2", "NCCL_MIN_CTAS": "4", "NCCL_MAX_CTAS": "16"},
			CommSettings{Env: map[string]string{}, MinCTAs: 4, MaxCTAs: 16}, nil},
		{"knobs read once per process", Config{"NCCL_PROTO": "LL", "NCCL_CROSS_NIC": "1", "NCCL_BUFFSIZE": "8388608"},
			CommSettings{}, []string{"NCCL_BUFFSIZE", "NCCL_CROSS_NIC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, perProcess, ok := CommSettingsOf(tc.cfg)
			if ok != (tc.perProcess == nil) || !reflect.DeepEqual(perProcess, tc.perProcess) {
				t.Fatalf("CommSettingsOf(%v): per process %v (ok %v), want %v", tc.cfg, perProcess, ok, tc.perProcess)
			}
			if ok && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CommSettingsOf(%v) = %+v, want %+v", tc.cfg, got, tc.want)
			}
		})
	}
}
