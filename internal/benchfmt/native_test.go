package benchfmt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// realNative reads NCCL's plan from a real debug log.
func realNative(t *testing.T, path string) nccl.Native {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := ParseFacts(data).Native("")
	if !ok {
		t.Fatalf("%s: no plan in the log", path)
	}
	return n
}

func TestNativeFromRealLogs(t *testing.T) {
	tests := []struct {
		file       string
		channels   int
		nics       int
		at1M       nccl.Choice
		at32K      nccl.Choice
		ll128      nccl.Status
		tree       nccl.Status
		collective string
	}{
		{"testdata/real/ar4_explain_tuning.txt", 2, 1,
			nccl.Choice{Algo: "RING", Proto: "SIMPLE", Channels: 2},
			nccl.Choice{Algo: "RING", Proto: "LL", Channels: 2},
			nccl.Disabled, nccl.Enabled, "AllReduce"},
		{"testdata/fixtures/x2_mpirun_p2p_debug.txt", 24, 0,
			nccl.Choice{Algo: "RING", Proto: "LL", Channels: 24},
			nccl.Choice{Algo: "RING", Proto: "LL", Channels: 4},
			nccl.Enabled, nccl.Enabled, "AllReduce"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			n := realNative(t, tt.file)
			if n.Collective != tt.collective || n.Channels != tt.channels || n.NICs != tt.nics {
				t.Errorf("collective %q channels %d nics %d, want %q %d %d", n.Collective, n.Channels, n.NICs, tt.collective, tt.channels, tt.nics)
			}
			if got := n.Plan[1<<20]; got != tt.at1M {
				t.Errorf("1M: %v, want %v", got, tt.at1M)
			}
			if got := n.Plan[32<<10]; got != tt.at32K {
				t.Errorf("32K: %v, want %v", got, tt.at32K)
			}
			if got := n.ProtoStatus("LL128"); got != tt.ll128 {
				t.Errorf("LL128 %v, want %v", got, tt.ll128)
			}
			if got := n.AlgoStatus("Tree"); got != tt.tree {
				t.Errorf("Tree %v, want %v", got, tt.tree)
			}
			if got := n.AlgoStatus("NVLS"); got != nccl.Unavailable {
				t.Errorf("NVLS %v, want unavailable", got)
			}
		})
	}
}

func TestNativeWithoutTuningLines(t *testing.T) {
	if _, ok := ParseFacts([]byte("host:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.2\n")).Native(""); ok {
		t.Error("a log without TUNING lines has no plan")
	}
	var f *Facts
	if _, ok := f.Native(""); ok {
		t.Error("nil facts have no plan")
	}
}

// NCCL_CROSS_NIC is about the NICs of one host: a Socket fabric of four
// hosts lists four "eth0" devices, each with its host's address, and still
// has one NIC per host (issue: the merging rule "CROSS_NIC with one NIC"
// never fired on real multi-host Socket fabrics).
func TestNativeCountsNICsPerHost(t *testing.T) {
	line := func(host, nics string) string {
		return host + ":100:100 [0] NCCL INFO NET/Socket : Using " + nics
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  int
	}{
		{"one per host, four hosts", []string{
			line("h0", "[0]eth0:10.1.0.1<0>"), line("h1", "[0]eth0:10.1.0.2<0>"),
			line("h2", "[0]eth0:10.1.0.3<0>"), line("h3", "[0]eth0:10.1.0.4<0>")}, 1},
		{"two per host, two hosts", []string{
			line("h0", "[0]eth0:10.1.0.1<0> [1]eth1:10.2.0.1<0>"), line("h1", "[0]eth0:10.1.0.2<0> [1]eth1:10.2.0.2<0>")}, 2},
		{"loopback", []string{line("h0", "[0]lo:127.0.0.1<0>"), line("h1", "[0]lo:127.0.0.1<0>")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := strings.Join(append(tc.lines,
				"h0:100:100 [0] NCCL INFO Using network Socket",
				"h0:100:100 [0] NCCL INFO comm 0xabc rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0",
				"h0:100:100 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [receive] via NET/Socket/0",
				"h0:100:100 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}",
			), "\n")
			n, ok := ParseFacts([]byte(log)).Native("")
			if !ok || n.NICs != tc.want {
				t.Errorf("Native().NICs = %d (ok %v), want %d per host", n.NICs, ok, tc.want)
			}
		})
	}
}

// Every NET channel line gives one channel-to-NIC route, the end that
// logged it and the NIC without the transport's flags (NCCL_CROSS_NIC's
// rule compares them); P2P and SHM lines give none.
func TestNetRoutes(t *testing.T) {
	data, err := os.ReadFile("testdata/text/ar4_ib_gdr_debug.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := ParseFacts(data)
	if len(f.NetRoutes) != 8 {
		t.Fatalf("%d routes, want the log's 8 NET lines: %q", len(f.NetRoutes), f.NetRoutes)
	}
	for _, want := range []string{"00/0 1[1]-2[0] send IB/0", "01/0 1[1]-2[0] send IB/1"} {
		if !strings.Contains(strings.Join(f.NetRoutes, "\n"), want) {
			t.Errorf("routes %q lack %q", f.NetRoutes, want)
		}
	}
	n, _ := f.Native("")
	if len(n.NetRoutes) != 8 {
		t.Errorf("Native carries %d routes, want 8", len(n.NetRoutes))
	}
	for _, tc := range []struct{ line, want string }{
		{"h:1:1 [0] NCCL INFO Channel 03/0 : 3[1] -> 0[0] [receive] via NET/IB/1/GDRDMA", "03/0 3[1]-0[0] receive IB/1"},
		{"h:1:1 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0(1)/GDRDMA/Shared", "00/0 1[1]-2[0] send IB/0(1)"},
		{"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0", "00/0 0[0]-1[0] send Socket/0"},
		{"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", ""},
	} {
		got := strings.Join(ParseFacts([]byte(tc.line+"\n")).NetRoutes, "|")
		if got != tc.want {
			t.Errorf("%s: routes %q, want %q", tc.line, got, tc.want)
		}
	}
}

// NCCL's TUNING line prints count × element size, one rank's part for
// all-gather and reduce-scatter: the real 4-rank captures log 131072 Bytes
// for nccl-tests' 512K. Choices are keyed by nccl-tests' size, so the plan
// of every op covers exactly the sizes the sweep measured (32K-8M).
func TestRealOpChoicesAtTestSizes(t *testing.T) {
	want := nccl.PowersOfTwo(32<<10, 8<<20)
	for _, op := range []nccl.Op{nccl.AllReduce, nccl.AllGather, nccl.ReduceScatter, nccl.Broadcast, nccl.Reduce} {
		data, err := os.ReadFile(filepath.Join("testdata", "ops", string(op)+"_4r_debug.txt"))
		if err != nil {
			t.Fatal(err)
		}
		n, ok := ParseFacts(data).Native(op.Function())
		if !ok {
			t.Fatalf("%s: no plan", op)
		}
		if got := n.Plan.Sizes(); !slices.Equal(got, want) {
			t.Errorf("%s: plan sizes %v, want %v", op, got, want)
		}
	}
}

// A study of several collectives reads NCCL's plan per op from the real
// loopback's debug logs: broadcast's own TUNING lines, and for alltoall
// (send/recv: no TUNING line) the channels the communicator set up; on
// both, the configs the loopback study wasted launches on
// (NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=8, a list scoped to other functions)
// run NCCL's defaults' plan, and a cap below the channels does not.
func TestNativeOpFromRealLogs(t *testing.T) {
	sizes := nccl.PowersOfTwo(512<<10, 8<<20)
	for _, tc := range []struct {
		file     string
		op       nccl.Op
		sendRecv bool
	}{
		{"testdata/ops/broadcast_4r_debug.txt", nccl.Broadcast, false},
		{"testdata/ops/alltoall_4r_debug.txt", nccl.AllToAll, true},
	} {
		t.Run(string(tc.op), func(t *testing.T) {
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			n, ok := ParseFacts(data).NativeOp(tc.op, sizes)
			if !ok || n.SendRecv != tc.sendRecv || !n.Plan.Covers(sizes) || n.Plan[1<<20].Channels != 2 {
				t.Fatalf("NativeOp(%s) = %+v, %v; want the plan at every size on 2 channels, send/recv %v", tc.op, n, ok, tc.sendRecv)
			}
			for _, c := range []struct {
				cfg     nccl.Config
				certain bool
			}{
				{nccl.Config{"NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "8"}, true},
				{nccl.Config{"NCCL_ALGO": "allreduce:Ring", "NCCL_PROTO": "allreduce:^LL128"}, true},
				{nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, false},
			} {
				r := n.Explain(c.cfg)
				if r.Certain != c.certain || c.certain && !r.Plan.Equal(n.Plan) {
					t.Errorf("%s under %s: certain %v (want %v), plan %s; defaults %s", tc.op, c.cfg, r.Certain, c.certain, r.Plan.Key(), n.Plan.Key())
				}
			}
		})
	}
}
