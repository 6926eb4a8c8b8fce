package nccl

import (
	"math/bits"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseSize: any text either fails with a message or gives a size that
// FormatSize writes back to a string ParseSize reads as the same size; a
// size already written canonically comes back as written.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512K", "4M", "1G", "1048576", "0", "1", "7", "2048K", "512k", "4m", " 1M ",
		"", "K", "-1M", "+1M", "1.5M", "1e6", "0x10", "512KB", "512KiB", "9223372036854775807",
		"9223372036854775808", "8589934591G", "8589934592G", "99999999999999999999", "1M-", "１M", "00001K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseSize(%q): empty error", s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		w := FormatSize(n)
		back, err := ParseSize(w)
		if err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, written %q, read back %d, %v", s, n, w, back, err)
		}
		if canonicalSize(s) && w != s {
			t.Fatalf("ParseSize(%q) = %d, written %q: a canonical size must round trip", s, n, w)
		}
	})
}

// canonicalSize reports whether s is written as FormatSize writes sizes: a
// decimal number without leading zeros and the largest whole unit.
func canonicalSize(s string) bool {
	if s == "" {
		return false
	}
	num, unit := s, int64(1)
	switch s[len(s)-1] {
	case 'K':
		num, unit = s[:len(s)-1], KiB
	case 'M':
		num, unit = s[:len(s)-1], MiB
	case 'G':
		num, unit = s[:len(s)-1], GiB
	}
	if num == "" || len(num) > 1 && num[0] == '0' || strings.Trim(num, "0123456789") != "" || len(num) > 18 {
		return false
	}
	var v int64
	for _, r := range num {
		v = v*10 + int64(r-'0')
	}
	if v == 0 {
		return unit == 1
	}
	// A count that is a whole number of the next unit is written in it.
	return unit == GiB || v%1024 != 0
}

// FuzzParseBand: a band that parses holds at least one size, every size is
// a power of two inside it, consecutive sizes double, none is missing at
// either end, and its text reads back as the same band.
func FuzzParseBand(f *testing.F) {
	for _, s := range []string{"512K-4M", "4M-512K", "abc", "0-0", "512k-4m", "1M", "1M-", "-1M", "3-3", "3-5",
		"1-1", "1-64G", "1-65G", "64G", "99999999999999999999-1M", "1M--4M", "1M-4M-16M", " 512K - 4M ", "513K-1023K", "1023-1025"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBand(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseBand(%q): empty error", s)
			}
			return
		}
		if b.Min < 1 || b.Min > b.Max || b.Max > MaxBandSize {
			t.Fatalf("ParseBand(%q) = %+v: out of range", s, b)
		}
		sizes := b.Sizes()
		if len(sizes) == 0 {
			t.Fatalf("ParseBand(%q) = %+v holds no size", s, b)
		}
		for i, p := range sizes {
			if bits.OnesCount64(uint64(p)) != 1 || !b.Contains(p) {
				t.Fatalf("ParseBand(%q): size %d is not a power of two inside %+v", s, p, b)
			}
			if i > 0 && p != 2*sizes[i-1] {
				t.Fatalf("ParseBand(%q): sizes %v skip a power of two", s, sizes)
			}
		}
		if sizes[0]/2 >= b.Min || sizes[len(sizes)-1]*2 <= b.Max {
			t.Fatalf("ParseBand(%q): sizes %v miss a power of two inside %+v", s, sizes, b)
		}
		back, err := ParseBand(b.String())
		if err != nil || back != b {
			t.Fatalf("ParseBand(%q) = %+v, written %q, read back %+v, %v", s, b, b.String(), back, err)
		}
	})
}

// FuzzParseConfig reads newline-separated K=V items. A config that parses
// is valid, holds only knobs, reads back from its own Env as itself, and
// its canonical form is valid and canonical already. A single knob value
// that Validate accepts also parses as a config.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"NCCL_PROTO=^LL128\nNCCL_MAX_NCHANNELS=8",
		"NCCL_PROTO=Bogus", "NCCL_PORTO=LL", "proto=ll128", "NCCL_MIN_NCHANNELS=8\nNCCL_MAX_NCHANNELS=4",
		"NCCL_MAX_NCHANNELS=0", "NCCL_MAX_NCHANNELS=65", "NCCL_MAX_NCHANNELS=64\nNCCL_MAX_CTAS=8",
		"NCCL_PROTO=LL,Simple;allreduce:^LL", "NCCL_PROTO=^LL,LL128,Simple", "NCCL_ALGO=allreduce:Tree;broadcast:Ring",
		"NCCL_SOCKET_NTHREADS=16\nNCCL_NSOCKS_PERTHREAD=8", "NCCL_BUFFSIZE=4194304\nNCCL_CROSS_NIC=2",
		"NCCL_PROTO=", "=x", "NCCL_PROTO", "NCCL_PROTO=LL\nNCCL_PROTO=Simple", "1X=2", "NCCL_NTHREADS=96",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items := strings.Split(s, "\n")
		c, err := ParseConfig(items)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("ParseConfig(%q) = %v, which does not validate: %v", items, c, verr)
			}
			for k, v := range c {
				if !IsKnob(k) || v == "" {
					t.Fatalf("ParseConfig(%q) holds %s=%q", items, k, v)
				}
			}
			back, err := ParseConfig(c.Env())
			if err != nil || !reflect.DeepEqual(back, c) {
				t.Fatalf("ParseConfig(%q) = %v, its Env %q reads back as %v, %v", items, c, c.Env(), back, err)
			}
			can := c.Canonical()
			if err := can.Validate(); err != nil {
				t.Fatalf("Canonical(%v) = %v does not validate: %v", c, can, err)
			}
			if again := can.Canonical(); !reflect.DeepEqual(again, can) {
				t.Fatalf("Canonical is not idempotent: %v then %v", can, again)
			}
		}
		// One item alone: Validate and ParseConfig agree.
		k, v, kerr := ParseKeyValue(items[0])
		if kerr != nil {
			return
		}
		knob, lerr := LookupKnob(k)
		if lerr != nil {
			if !strings.Contains(lerr.Error(), "unknown knob") {
				t.Fatalf("LookupKnob(%q): %v", k, lerr)
			}
			return
		}
		if knob.Validate(v) == nil {
			if _, err := ParseConfig(items[:1]); err != nil {
				t.Fatalf("%s accepts %q but ParseConfig(%q) fails: %v", knob.Name, v, items[0], err)
			}
		}
	})
}
