package benchfmt

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// FuzzParseNCCLInit feeds arbitrary logs to ParseNCCLInit: it must never
// panic, find nothing where no NCCL line is, and keep its promises —
// channel devices sorted, distinct and in range, devices named and listed
// once per host, at most 64 distinct rings, counts no larger than the
// lines that hold them, env names that are words — and give the same
// answer twice.
func FuzzParseNCCLInit(f *testing.F) {
	for _, dir := range []string{"testdata/fixtures", "testdata/real", "../fabric/testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
		files2, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, name := range append(files, files2...) {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) > 64<<10 {
				data = data[:64<<10]
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		"host:1:2 [0] NCCL INFO NCCL_IB_HCA set by environment to =mlx5_0\n",
		"host:1:2 [0] NCCL INFO NET/IB : [0] mlx5_0:uverbs0:1/RoCE provider=Mlx5 speed=200000 context=0x1 pciPath=x ar=0\n",
		"host:1:2 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/IB/1/GDRDMA\n",
		"host:1:2 [0] NCCL INFO Channel 00/02 : 0 1\nhost:1:2 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 2 - Init START\n",
		"#       size  count\nhost:1:2 [0] NCCL INFO NET/IB : [99999999999999999999] x:1/IB speed=-1\n",
		"host:1:2 [0] NCCL WARN NET/IB : No device found.\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fl := ParseNCCLInit(data)
		if fl == nil {
			return
		}
		if !bytes.Contains(data, []byte("NCCL")) {
			t.Fatalf("a log without the word NCCL gave %+v", fl)
		}
		if !sort.IntsAreSorted(fl.ChannelNetDevs) {
			t.Fatalf("channel devices %v not sorted", fl.ChannelNetDevs)
		}
		for i, d := range fl.ChannelNetDevs {
			if d < 0 || d >= 4096 || i > 0 && d == fl.ChannelNetDevs[i-1] {
				t.Fatalf("channel devices %v", fl.ChannelNetDevs)
			}
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if fl.InitStarts < 0 || fl.InitCompletes < 0 || fl.InitStarts > lines || fl.InitCompletes > lines {
			t.Fatalf("init starts %d, completes %d in %d lines", fl.InitStarts, fl.InitCompletes, lines)
		}
		if len(fl.Rings) > 64 {
			t.Fatalf("%d rings", len(fl.Rings))
		}
		seenRing := map[string]bool{}
		for _, r := range fl.Rings {
			if r == "" || seenRing[r] || strings.ContainsAny(r, "\n\r") {
				t.Fatalf("rings %q", fl.Rings)
			}
			seenRing[r] = true
		}
		type key struct{ host, name string }
		seenDev := map[key]bool{}
		for _, d := range fl.IBDevices {
			k := key{d.Host, d.Name}
			if d.Name == "" || seenDev[k] || strings.ContainsAny(d.Name, "\n\r") {
				t.Fatalf("IB devices %+v", fl.IBDevices)
			}
			seenDev[k] = true
		}
		for k, v := range fl.Env {
			if !isWord(k) || strings.ContainsAny(v, "\n") {
				t.Fatalf("env %q=%q", k, v)
			}
		}
		if again := ParseNCCLInit(data); !reflect.DeepEqual(again, fl) {
			t.Fatalf("two parses differ:\n%+v\n%+v", fl, again)
		}
	})
}
