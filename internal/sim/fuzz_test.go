package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// FuzzParseProfile feeds arbitrary JSON to ParseProfile. A profile it
// accepts must validate, write back to JSON that reads as the same
// profile, and give every configuration below a positive, non-NaN time
// and per-iteration samples at every size: what a user's profile file
// passes, the simulator must be able to run.
func FuzzParseProfile(f *testing.F) {
	for _, name := range BuiltinProfiles() {
		data, err := builtinFS.ReadFile("profiles/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	custom, err := os.ReadFile(filepath.Join("testdata", "custom.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(custom)
	for _, s := range []string{`{}`, `{"name": "x"}`, `null`, `[]`, `{"name": "x", "nranks": -1}`, `{"name": "x", "unknown": 1}`} {
		f.Add([]byte(s))
	}
	configs := []nccl.Config{
		{},
		{"NCCL_PROTO": "^LL128", "NCCL_MAX_NCHANNELS": "8"},
		{"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL"},
		{"NCCL_NET": "Socket", "NCCL_SOCKET_NTHREADS": "16", "NCCL_NSOCKS_PERTHREAD": "4"},
		{"NCCL_IB_MERGE_NICS": "1", "NCCL_MIN_NCHANNELS": "32", "NCCL_NTHREADS": "64", "NCCL_BUFFSIZE": "1048576"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseProfile accepted a profile that does not validate: %v", err)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		q, err := ParseProfile(out)
		if err != nil {
			t.Fatalf("the profile written back does not parse: %v\n%s", err, out)
		}
		if again, _ := json.Marshal(q); !bytes.Equal(again, out) {
			t.Fatalf("the profile changed on a round trip:\n%s\n%s", out, again)
		}
		sizes := []int64{1, 8, 4096, 1 << 20, 1 << 30, 64 << 30}
		for _, cfg := range configs {
			for _, b := range sizes {
				us, err := p.TrueTimeUS(cfg, b)
				if err != nil {
					continue // NCCL refuses this config on this fabric
				}
				if !(us > 0) {
					t.Fatalf("%v at %d bytes: time %g µs", cfg, b, us)
				}
			}
			samples, err := p.SampleLaunch(cfg, sizes[:4], 3, 1, 7, 0)
			if err != nil {
				continue
			}
			for b, xs := range samples {
				for _, x := range xs {
					if math.IsNaN(x) || x < 0 {
						t.Fatalf("%v at %d bytes: sample %g µs", cfg, b, x)
					}
				}
			}
		}
	})
}

// FuzzProfileNumbers changes the numbers of the spark4 profile (mutating
// JSON text rarely yields a valid profile with new numbers): whatever
// Validate accepts, the model must turn into positive, non-NaN times.
func FuzzProfileNumbers(f *testing.F) {
	f.Add(200.0, 22.0, 0.0, 4.0, 1.86, 3.5, 1.0, 16384.0, 64, 4)
	f.Add(1e-300, 1e300, 1e300, 1e300, 1e300, 1e-300, 1e-300, 1e-300, 1, 4096)
	f.Add(1.0, 1e-9, 1e9, 1.0, 0.0, 1e-9, 0.5, 1.0, 1, 2)
	base, err := LoadProfile("spark4")
	if err != nil {
		f.Fatal(err)
	}
	sizes := []int64{1, 4096, 1 << 20, 1 << 30, 64 << 30}
	cfgs := []nccl.Config{{}, {"NCCL_PROTO": "Simple", "NCCL_MAX_NCHANNELS": "1"}, {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL"}, {"NCCL_NET": "Socket"}, {"NCCL_IB_QPS_PER_CONNECTION": "128", "NCCL_NTHREADS": "64"}}
	f.Fuzz(func(t *testing.T, modelGBps, linkGBps, proxyGBps, overlap, opUS, chanGBps, throttle, chanBytes float64, commChannels, nranks int) {
		data, _ := json.Marshal(base)
		p, _ := ParseProfile(data) // a deep copy
		p.Throttle, p.NRanks = throttle, nranks
		for _, proto := range protoNames {
			p.ChannelBytes[proto] = chanBytes
		}
		for _, tr := range p.Transports {
			tr.LinkGBps, tr.ProxyGBps, tr.Overlap, tr.CommChannels = linkGBps, proxyGBps, overlap, commChannels
			for _, m := range tr.NCCLModel {
				for k, pr := range m {
					pr.GBps = modelGBps
					m[k] = pr
				}
			}
			for k, pc := range tr.Protocols {
				pc.OpUS, pc.ChannelGBps = opUS, chanGBps
				tr.Protocols[k] = pc
			}
		}
		if p.Validate() != nil {
			return
		}
		for _, cfg := range cfgs {
			for _, b := range sizes {
				us, err := p.TrueTimeUS(cfg, b)
				if err == nil && !(us > 0) {
					t.Fatalf("%v at %d bytes: time %g µs", cfg, b, us)
				}
			}
		}
	})
}
