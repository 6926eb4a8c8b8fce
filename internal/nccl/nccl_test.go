package nccl

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"512K", 524288, ""},
		{"4M", 4194304, ""},
		{"1G", 1073741824, ""},
		{"512k", 524288, ""}, // nccl-tests' parsesize accepts lower case too
		{"1048576", 1048576, ""},
		{" 8 ", 8, ""},
		{"", 0, "empty"},
		{"abc", 0, "not a number"},
		{"-1M", 0, "not a number"},
		{"1.5M", 0, "not a number"},
		{"512KB", 0, "not 512KiB"},
		{"512KiB", 0, "not 512KiB"},
		{"99999999999999999999", 0, "too large"},
		{"9999999999999G", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSize(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{8: "8", 1024: "1K", 524288: "512K", 1 << 20: "1M", 3 << 20: "3M", 1 << 30: "1G", 1536: "1536", 524256: "524256"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseBand(t *testing.T) {
	tests := []struct {
		in      string
		sizes   []int64
		wantErr string
	}{
		{"512K-4M", []int64{512 << 10, 1 << 20, 2 << 20, 4 << 20}, ""},
		{"1M", []int64{1 << 20}, ""},
		{"300K-1M", []int64{512 << 10, 1 << 20}, ""},
		{"512k-4m", []int64{512 << 10, 1 << 20, 2 << 20, 4 << 20}, ""},
		{"4M-512K", nil, "did you mean 512K-4M"},
		{"0-0", nil, "at least 1 byte"},
		{"abc", nil, "not a number"},
		{"3-3", nil, "no power-of-two"},
		{"1K-99999999999999999999", nil, "too large"},
		{"1K-128G", nil, "not supported"},
		{"1M-", nil, "empty"},
	}
	for _, tt := range tests {
		b, err := ParseBand(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseBand(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseBand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(b.Sizes(), tt.sizes) {
			t.Errorf("ParseBand(%q).Sizes() = %v, want %v", tt.in, b.Sizes(), tt.sizes)
		}
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in      []string
		key     string
		wantErr string
	}{
		{[]string{"NCCL_PROTO=^LL128", "NCCL_MAX_NCHANNELS=8"}, "NCCL_MAX_NCHANNELS=8 NCCL_PROTO=^LL128", ""},
		{[]string{"proto=Simple"}, "NCCL_PROTO=Simple", ""},
		{[]string{"NCCL_PROTO=LL,Simple;allreduce:^LL"}, "NCCL_PROTO=LL,Simple;allreduce:^LL", ""},
		{[]string{"NCCL_ALGO=ring"}, "NCCL_ALGO=ring", ""},
		{[]string{"NCCL_PROTO="}, "", ""},
		{[]string{"NCCL_PROTO=Bogus"}, "", "not one of LL, LL128, Simple"},
		{[]string{"NCCL_PROTO=Simpel"}, "", "did you mean Simple"},
		{[]string{"NCCL_PROTO=^LL,LL128,Simple"}, "", "excludes every choice"},
		{[]string{"NCCL_PROTO=foo:LL"}, "", "unknown collective"},
		{[]string{"NCCL_PORTO=LL"}, "", "did you mean NCCL_PROTO"},
		{[]string{"NCCL_MAX_NCHANNELS=0"}, "", "1 to 64"},
		{[]string{"NCCL_MAX_NCHANNELS=65"}, "", "1 to 64"},
		{[]string{"NCCL_MAX_NCHANNELS=eight"}, "", "1 to 64"},
		{[]string{"NCCL_MIN_CTAS=16", "NCCL_MAX_CTAS=4"}, "", "larger than"},
		{[]string{"NCCL_SOCKET_NTHREADS=16", "NCCL_NSOCKS_PERTHREAD=8"}, "", "at most 64"},
		{[]string{"NCCL_BUFFSIZE=3000000"}, "", "power of two"},
		{[]string{"NCCL_NTHREADS=100"}, "", "64, 128, 256, 512"},
		{[]string{"NCCL_CROSS_NIC=3"}, "", "0 to 2"},
		{[]string{"NOEQUALS"}, "", "not KEY=VALUE"},
		{[]string{"1X=2"}, "", "not an environment variable name"},
	}
	for _, tt := range tests {
		c, err := ParseConfig(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseConfig(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.Key() != tt.key {
			t.Errorf("ParseConfig(%q) = %q, %v; want %q", tt.in, c.Key(), err, tt.key)
		}
	}
}

func TestDefaultChoicesAreValid(t *testing.T) {
	for _, k := range Knobs {
		if len(k.Choices) == 0 || k.Choices[0] != "" {
			t.Errorf("%s: choices must start with \"\" (unset)", k.Name)
		}
		for _, v := range k.Choices {
			if err := k.Validate(v); err != nil {
				t.Errorf("%s: default choice %q invalid: %v", k.Name, v, err)
			}
		}
	}
}

func TestConfigString(t *testing.T) {
	if got := (Config{}).String(); got != "NCCL defaults" {
		t.Errorf("empty config String = %q", got)
	}
	c := Config{"NCCL_PROTO": "LL", "NCCL_ALGO": "", "NCCL_CROSS_NIC": "0"}
	if got := c.Key(); got != "NCCL_CROSS_NIC=0 NCCL_PROTO=LL" {
		t.Errorf("Key = %q", got)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want Config }{
		{Config{"NCCL_MAX_NCHANNELS": "64", "NCCL_MAX_CTAS": "16"}, Config{"NCCL_MAX_CTAS": "16"}},
		{Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "16"}, Config{"NCCL_MAX_NCHANNELS": "8"}},
		{Config{"NCCL_MAX_NCHANNELS": "8", "NCCL_MAX_CTAS": "8"}, Config{"NCCL_MAX_CTAS": "8"}},
		{Config{"NCCL_MIN_NCHANNELS": "2", "NCCL_MIN_CTAS": "4"}, Config{"NCCL_MIN_CTAS": "4"}},
		{Config{"NCCL_CROSS_NIC": "2", "NCCL_PROTO": "Simple"}, Config{"NCCL_PROTO": "Simple"}},
		{Config{"NCCL_CROSS_NIC": "0", "NCCL_BUFFSIZE": "4194304"}, Config{"NCCL_CROSS_NIC": "0"}},
		{Config{}, Config{}},
	}
	for _, tt := range tests {
		if got := tt.in.Canonical(); got.Key() != tt.want.Key() {
			t.Errorf("%s.Canonical() = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestCheckEnvName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"NCCL_PROTO", ""},
		{"NCCL_IB_HCA", ""},
		{"NCCL_SOCKET_IFNAME", ""},
		{"NCCL_IB_GID_INDEX", ""},
		{"NCCL_MIN_NRINGS", ""},
		{"NCCL_NVLS_ENABLE", ""},
		{"NCCL_DEBUG", ""},
		{"MY_VAR", ""},
		{"NCCL_PORTO", "did you mean NCCL_PROTO?"},
		{"NCCL_BUFSIZE", "did you mean NCCL_BUFFSIZE?"},
		{"NCCL_MAX_NCHANNEL", "did you mean NCCL_MAX_NCHANNELS?"},
		{"nccl_proto", "write NCCL_PROTO"},
		{"PROTO", "write NCCL_PROTO"},
		{"max_ctas", "write NCCL_MAX_CTAS"},
	} {
		err := CheckEnvName(tc.name)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckEnvName(%q) = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckEnvName(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestBandSweep: nccl-tests is asked for the band's powers of two, which
// are what the band scores; from the band's own ends (-b 3M) it doubles
// past them (3M, 6M) and measures none.
func TestBandSweep(t *testing.T) {
	for _, tc := range []struct {
		band   string
		lo, hi int64
	}{
		{"3M-5M", 4 << 20, 4 << 20},
		{"512K-4M", 512 << 10, 4 << 20},
		{"1M", 1 << 20, 1 << 20},
		{"3M-20M", 4 << 20, 16 << 20},
		{"1000-1M", 1024, 1 << 20},
	} {
		b, err := ParseBand(tc.band)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := b.Sweep()
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%s sweeps %s-%s, want %s-%s", tc.band, FormatSize(lo), FormatSize(hi), FormatSize(tc.lo), FormatSize(tc.hi))
		}
		// Doubling from lo reaches every size the band scores.
		got := map[int64]bool{}
		for s := lo; s <= hi; s *= 2 {
			got[s] = true
		}
		for _, s := range b.Sizes() {
			if !got[s] {
				t.Errorf("%s: %s is scored but not swept", tc.band, FormatSize(s))
			}
		}
	}
	if err := CheckPowerOfTwo(3 << 20); err == nil || !strings.Contains(err.Error(), "did you mean 2M or 4M?") {
		t.Errorf("3M: %v", err)
	}
	if err := CheckPowerOfTwo(4 << 20); err != nil {
		t.Errorf("4M: %v", err)
	}
}

func TestWorkloadBeyondOnePart(t *testing.T) {
	one := Workload{{Op: AllReduce, Band: Band{Min: 512 << 10, Max: 4 << 20}, Weight: 1}}
	two := append(one[:1:1], Part{Op: Broadcast, Band: Band{Min: 512 << 10, Max: 8 << 20}, Weight: 1})
	tests := []struct {
		name    string
		w       Workload
		guarded []Op
		want    bool
	}{
		{"one part", one, nil, false},
		{"one part, guarded", one, []Op{AllToAll}, true},
		{"two parts", two, nil, true},
	}
	for _, tc := range tests {
		if got := tc.w.BeyondOnePart(tc.guarded); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
