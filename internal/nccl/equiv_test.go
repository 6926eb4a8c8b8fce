package nccl

import "testing"

// TestCapPairBinding pins which knob of a cap pair NCCL applies, the
// tie-breaks included: one spelling for one limit, the one Canonical keys
// trials by and every export writes.
func TestCapPairBinding(t *testing.T) {
	maxPair, minPair := CapPairs[0], CapPairs[1]
	for _, tc := range []struct {
		name        string
		pair        CapPair
		cfg         Config
		kept, loose string
		ok          bool
	}{
		{"max: ctas smaller", maxPair, Config{"NCCL_MAX_NCHANNELS": "64", "NCCL_MAX_CTAS": "16"}, "NCCL_MAX_CTAS", "NCCL_MAX_NCHANNELS", true},
		{"max: nchannels smaller", maxPair, Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "16"}, "NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS", true},
		{"max: tie keeps ctas", maxPair, Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "8"}, "NCCL_MAX_CTAS", "NCCL_MAX_NCHANNELS", true},
		{"min: ctas larger", minPair, Config{"NCCL_MIN_NCHANNELS": "2", "NCCL_MIN_CTAS": "4"}, "NCCL_MIN_CTAS", "NCCL_MIN_NCHANNELS", true},
		{"min: nchannels larger", minPair, Config{"NCCL_MIN_NCHANNELS": "8", "NCCL_MIN_CTAS": "2"}, "NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS", true},
		{"min: tie keeps ctas", minPair, Config{"NCCL_MIN_NCHANNELS": "4", "NCCL_MIN_CTAS": "4"}, "NCCL_MIN_CTAS", "NCCL_MIN_NCHANNELS", true},
		{"one of the pair", maxPair, Config{"NCCL_MAX_CTAS": "16"}, "", "", false},
		{"the other pair", maxPair, Config{"NCCL_MIN_NCHANNELS": "2", "NCCL_MIN_CTAS": "4"}, "", "", false},
		{"not a number", maxPair, Config{"NCCL_MAX_NCHANNELS": "x", "NCCL_MAX_CTAS": "4"}, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, loose, ok := tc.pair.Binding(tc.cfg)
			if kept != tc.kept || loose != tc.loose || ok != tc.ok {
				t.Errorf("Binding(%s) = %q, %q, %v; want %q, %q, %v", tc.cfg, kept, loose, ok, tc.kept, tc.loose, tc.ok)
			}
		})
	}
}

func TestCapPartner(t *testing.T) {
	for knob, want := range map[string]string{
		"NCCL_MAX_NCHANNELS": "NCCL_MAX_CTAS", "NCCL_MAX_CTAS": "NCCL_MAX_NCHANNELS",
		"NCCL_MIN_NCHANNELS": "NCCL_MIN_CTAS", "NCCL_MIN_CTAS": "NCCL_MIN_NCHANNELS",
		"NCCL_PROTO": "",
	} {
		if got := CapPartner(knob); got != want {
			t.Errorf("CapPartner(%s) = %q, want %q", knob, got, want)
		}
	}
}

func TestCapsAsCTAs(t *testing.T) {
	for _, tc := range []struct{ in, want Config }{
		{Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_PROTO": "LL"}, Config{"NCCL_MAX_CTAS": "8", "NCCL_PROTO": "LL"}},
		{Config{"NCCL_MIN_NCHANNELS": "2"}, Config{"NCCL_MIN_CTAS": "2"}},
		{Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "4"}, Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "4"}},
		{Config{"NCCL_MAX_CTAS": "4"}, Config{"NCCL_MAX_CTAS": "4"}},
	} {
		if got := tc.in.CapsAsCTAs(); got.Key() != tc.want.Key() {
			t.Errorf("%s.CapsAsCTAs() = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestIsDefault(t *testing.T) {
	for _, tc := range []struct {
		knob, value string
		want        bool
	}{
		{"NCCL_CROSS_NIC", "2", true},
		{"NCCL_CROSS_NIC", "02", true},
		{"NCCL_CROSS_NIC", "0", false},
		{"NCCL_BUFFSIZE", "4194304", true},
		{"NCCL_BUFFSIZE", "8388608", false},
		{"NCCL_BUFFSIZE", "", false},
		{"NCCL_PROTO", "Simple", false},
		{"NCCL_UNKNOWN", "2", false},
	} {
		if got := IsDefault(tc.knob, tc.value); got != tc.want {
			t.Errorf("IsDefault(%s, %q) = %v, want %v", tc.knob, tc.value, got, tc.want)
		}
	}
}
