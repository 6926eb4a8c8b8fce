package benchfmt

import (
	"reflect"
	"strings"
	"testing"
)

// TestTransportLineForms holds the parser to every form of NCCL's channel
// connection line (p2p.cc, shm.cc, net.cc of NCCL 2.18–2.28), one test
// each, including a line glued to a results row.
func TestTransportLineForms(t *testing.T) {
	tests := []struct {
		name string
		line string
		want *Path // nil: the line is not a connection line
	}{
		{"P2P/CUMEM (NVLink, one process per GPU)", "vm:1380:1380 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/CUMEM"}, Connections: 1}},
		{"P2P/CUMEM/read", "gpu-a:5101:5101 [0] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/CUMEM/read"}, Connections: 1}},
		{"P2P/direct pointer (one process driving both GPUs, -g 2)", "vm:1600:1600 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/direct pointer",
			&Path{From: 1, To: 0, Kind: KindP2P, Via: []string{"P2P/direct pointer"}, Connections: 1}},
		{"P2P/direct pointer/read", "vm:1600:1600 [0] NCCL INFO Channel 01/1 : 0[0] -> 1[1] via P2P/direct pointer/read",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/direct pointer/read"}, Connections: 1}},
		{"P2P/IPC (legacy CUDA IPC, NCCL_CUMEM_ENABLE=0)", "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/IPC"}, Connections: 1}},
		{"P2P/IPC/read with bus ids (NCCL 2.18)", "h:1:1 [0] NCCL INFO Channel 00/1 : 0[7000] -> 1[8f000] via P2P/IPC/read",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/IPC/read"}, Connections: 1}},
		{"P2P/IPC/CE (copy engine)", "h:1:1 [0] NCCL INFO Channel 02/0 : 2[2] -> 3[3] via P2P/IPC/CE",
			&Path{From: 2, To: 3, Kind: KindP2P, Via: []string{"P2P/IPC/CE"}, Connections: 1}},
		{"P2P/MNNVL", "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] via P2P/MNNVL",
			&Path{From: 0, To: 4, Kind: KindP2P, Via: []string{"P2P/MNNVL"}, Connections: 1}},
		{"P2P/indirect through a third GPU", "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 3[3] via P2P/indirect/1[1]",
			&Path{From: 0, To: 3, Kind: KindP2P, Via: []string{"P2P/indirect/1[1]"}, Connections: 1}},
		{"SHM/direct/direct (NCCL_P2P_DISABLE=1)", "vm:1700:1700 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct",
			&Path{From: 1, To: 0, Kind: KindSHM, Via: []string{"SHM/direct/direct"}, Connections: 1}},
		{"SHM without a connection index (NCCL 2.28)", "vm:1606:1606 [0] NCCL INFO Channel 03 : 0[0] -> 1[1] via SHM/direct/direct",
			&Path{From: 0, To: 1, Kind: KindSHM, Via: []string{"SHM/direct/direct"}, Connections: 1}},
		{"P2P/direct pointer from a thread of one process", "vm:1412:1493 [1] NCCL INFO Channel 23/0 : 1[1] -> 0[0] via P2P/direct pointer",
			&Path{From: 1, To: 0, Kind: KindP2P, Via: []string{"P2P/direct pointer"}, Connections: 1}},
		{"SHM/CE/CE", "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/CE/CE",
			&Path{From: 0, To: 1, Kind: KindSHM, Via: []string{"SHM/CE/CE"}, Connections: 1}},
		{"NET/Socket send", "vm:1499:1499 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0",
			&Path{From: 0, To: 1, Kind: KindNET, Via: []string{"NET/Socket/0"}, Connections: 1}},
		{"NET/Socket receive", "vm:1500:1500 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [receive] via NET/Socket/0",
			&Path{From: 0, To: 1, Kind: KindNET, Via: []string{"NET/Socket/0"}, Connections: 1}},
		{"NET/IB with GPUDirect RDMA", "gpu-a:5102:5102 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[0] [send] via NET/IB/1/GDRDMA",
			&Path{From: 1, To: 2, Kind: KindNET, Via: []string{"NET/IB/1/GDRDMA"}, Connections: 1}},
		{"NET/IB through a proxy rank (PXN), shared buffers", "h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0(0)/GDRDMA/Shared",
			&Path{From: 1, To: 2, Kind: KindNET, Via: []string{"NET/IB/0(0)/GDRDMA/Shared"}, Connections: 1}},
		{"glued to a results row", "      524288        131072     float     sum      -1vm:1380:1380 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
			&Path{From: 0, To: 1, Kind: KindP2P, Via: []string{"P2P/CUMEM"}, Connections: 1}},
		{"ring line is not a connection", "vm:1380:1380 [0] NCCL INFO Channel 00/24 : 0 1", nil},
		{"tree line is not a connection", "vm:1380:1380 [0] NCCL INFO Tree 0 : -1 -> 0 -> 1/-1/-1", nil},
		{"broken ranks", "h:1:1 [0] NCCL INFO Channel 00/0 : x[0] -> 1[1] via P2P/CUMEM", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ParseFacts([]byte(tt.line + "\n"))
			if f == nil {
				t.Fatal("no facts from an NCCL line")
			}
			if tt.want == nil {
				if len(f.Paths) != 0 {
					t.Errorf("paths %+v from a line that connects nothing", f.Paths)
				}
				return
			}
			if len(f.Paths) != 1 || !reflect.DeepEqual(f.Paths[0], *tt.want) {
				t.Errorf("paths %+v, want %+v", f.Paths, *tt.want)
			}
			if len(f.Routes) != 1 || f.Routes[0].Kind != tt.want.Kind {
				t.Errorf("routes %+v", f.Routes)
			}
		})
	}
}

// TestTransportFixtures reads whole logs: what carries the data, between
// which ranks, and that NICs and GDR appear only where the network does.
func TestTransportFixtures(t *testing.T) {
	tests := []struct {
		file      string
		transport string
		network   string
		routes    string
		gdr       *bool
		nics      []string
		nvlink    bool
		nnodes    int
	}{
		// Two H200s joined by NVLink, mpirun -np 2: NCCL initialises the socket
		// network, logs "GDR 1", and never sends a byte over it.
		{"fixtures/x2_mpirun_p2p_debug.txt", "P2P", "Socket",
			"P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host, 48 connections", nil, nil, true, 1},
		// The same host with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: TCP
		// between two ranks of one host, which NCCL counts as two nodes.
		{"fixtures/x2_mpirun_net_debug.txt", "Socket", "Socket",
			"network Socket (NET/Socket/0) between ranks 0-1 within a host, 4 connections", new(false), []string{"eth0:192.0.2.2<0>"}, true, 2},
		// Two hosts of two GPUs: NVLink-less P2P inside, IB with GDR between.
		{"text/ar4_ib_gdr_debug.txt", "IB", "IB",
			"P2P (P2P/CUMEM/read) between ranks 0-3 within a host, 8 connections; " +
				"network IB with GPUDirect RDMA (NET/IB/0/GDRDMA, NET/IB/1/GDRDMA) between ranks 0-3 across hosts, 8 connections",
			new(true), []string{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE"}, false, 2},
		// Two hosts over loopback sockets, one GPU each.
		{"fixtures/ar2_debug_tuning.txt", "Socket", "Socket",
			"network Socket (NET/Socket/0) between ranks 0-1 across hosts, 4 connections", new(false), []string{"lo:127.0.0.1<0>"}, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := ParseFacts(readTestdata(t, tt.file))
			if f == nil {
				t.Fatal("no facts")
			}
			if f.Transport != tt.transport || f.Network != tt.network {
				t.Errorf("transport %q network %q, want %q %q", f.Transport, f.Network, tt.transport, tt.network)
			}
			if got := RoutesText(f.Routes); got != tt.routes {
				t.Errorf("routes\n got %s\nwant %s", got, tt.routes)
			}
			if !reflect.DeepEqual(f.GDR, tt.gdr) || !reflect.DeepEqual(f.NICs, tt.nics) {
				t.Errorf("GDR %v NICs %q, want %v %q", ptrBool(f.GDR), f.NICs, ptrBool(tt.gdr), tt.nics)
			}
			if f.NVLink != tt.nvlink || f.NNodes != tt.nnodes {
				t.Errorf("NVLink %v nNodes %d, want %v %d", f.NVLink, f.NNodes, tt.nvlink, tt.nnodes)
			}
		})
	}
}

func ptrBool(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}

// TestTransportPlacesAndLinks: ranks are placed on hosts and GPUs by the
// init lines, and the topology decides NVLink or PCIe per pair.
func TestTransportPlacesAndLinks(t *testing.T) {
	log := strings.Join([]string{
		"a:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9 - Init START",
		"a:2:2 [1] NCCL INFO ncclCommInitRankConfig comm 0x2 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x9 - Init START",
		"a:3:3 [2] NCCL INFO ncclCommInitAll comm 0x3 rank 2 nranks 4 cudaDev 2 nvmlDev 2 busId 3A000 commId 0x9 - Init START",
		"b:4:4 [0] NCCL INFO comm 0x4 rank 3 nRanks 4 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
		"a:1:1 [0] NCCL INFO GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) GPU/0-2a000 (1/20.0/NVL) GPU/0-3a000 (2/24.0/PXB) CPU/0-0 (1/24.0/PHB)",
		"a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
		"a:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
		"a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[2] via P2P/CUMEM",
		"a:3:3 [2] NCCL INFO Channel 00/0 : 2[2] -> 3[0] [send] via NET/IB/0",
		"b:4:4 [0] NCCL INFO Channel 00/0 : 2[2] -> 3[0] [receive] via NET/IB/0",
		"b:4:4 [0] NCCL INFO Channel 00/0 : 3[0] -> 0[0] [send] via NET/IB/0/GDRDMA",
	}, "\n")
	f := ParseFacts([]byte(log))
	wantPlaces := []RankPlace{{0, "a", "18000"}, {1, "a", "2a000"}, {2, "a", "3a000"}, {3, "b", ""}}
	if !reflect.DeepEqual(f.RankPlaces, wantPlaces) {
		t.Errorf("places %+v, want %+v", f.RankPlaces, wantPlaces)
	}
	wantRoutes := "P2P over NVLink and PCIe (P2P/CUMEM, P2P/CUMEM/read) between ranks 0-2 within a host, 3 connections; " +
		"network IB with GPUDirect RDMA (NET/IB/0, NET/IB/0/GDRDMA) between ranks 0,2-3 across hosts, 2 connections"
	if got := RoutesText(f.Routes); got != wantRoutes {
		t.Errorf("routes\n got %s\nwant %s", got, wantRoutes)
	}
	if !f.NVLink || f.Transport != "IB" {
		t.Errorf("NVLink %v transport %q", f.NVLink, f.Transport)
	}
}

func TestTransportWord(t *testing.T) {
	tests := []struct {
		kinds []Route
		want  string
	}{
		{nil, ""},
		{[]Route{{Kind: KindP2P}}, "P2P"},
		{[]Route{{Kind: KindSHM}}, "SHM"},
		{[]Route{{Kind: KindP2P}, {Kind: KindSHM}}, "P2P+SHM"},
		{[]Route{{Kind: KindP2P}, {Kind: KindNET, Network: "IB"}}, "IB"},
		{[]Route{{Kind: KindNET, Network: "IB"}, {Kind: KindNET, Network: "Socket"}}, "IB+Socket"},
	}
	for _, tt := range tests {
		if got := transportWord(tt.kinds); got != tt.want {
			t.Errorf("transportWord(%+v) = %q, want %q", tt.kinds, got, tt.want)
		}
		if TransportNetwork(tt.want) != (tt.want != "" && !strings.HasPrefix(tt.want, "P2P") && tt.want != "SHM") {
			t.Errorf("TransportNetwork(%q) = %v", tt.want, TransportNetwork(tt.want))
		}
	}
}

func TestRankList(t *testing.T) {
	for _, tt := range []struct {
		ranks []int
		want  string
	}{{nil, ""}, {[]int{0}, "0"}, {[]int{0, 1}, "0-1"}, {[]int{0, 2, 5, 6, 7}, "0,2,5-7"}} {
		if got := RankList(tt.ranks); got != tt.want {
			t.Errorf("RankList(%v) = %q, want %q", tt.ranks, got, tt.want)
		}
	}
}

// TestOneProcessTwoGPUs: nccl-tests -g 2 (one process driving both GPUs,
// --launcher local) prints two device lines with one pid, NCCL connects
// the GPUs by direct pointer, and the ranks and busbw read as under mpirun
// -np 2. The input is the x2 mpirun capture rewritten to -g 2's form
// (nGpus 2, one pid, ncclCommInitAll, P2P/direct pointer).
func TestOneProcessTwoGPUs(t *testing.T) {
	r, err := Parse(readTestdata(t, "text/x2_g2_direct_pointer.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.NRanks != 2 || len(r.Devices) != 2 || r.Devices[0].Pid != r.Devices[1].Pid {
		t.Fatalf("%d ranks, devices %+v; want 2 GPUs of one process", r.NRanks, r.Devices)
	}
	// nccl-tests computes busbw with nranks = processes × GPUs per process
	// (2 for a 2-rank all-reduce: busbw = algbw × 2(n-1)/n = algbw).
	for _, row := range r.Rows {
		if row.Out.BusBW != row.Out.AlgBW {
			t.Errorf("%d: busbw %v algbw %v; a 2-rank all-reduce has busbw = algbw", row.Bytes, row.Out.BusBW, row.Out.AlgBW)
		}
	}
	f := r.Facts
	want := "P2P over NVLink (P2P/direct pointer) between ranks 0-1 within a host, 48 connections"
	if f == nil || f.Transport != KindP2P || RoutesText(f.Routes) != want || f.GDR != nil || len(f.NICs) != 0 {
		t.Fatalf("facts %+v\nwant transport P2P: %s", f, want)
	}
	if f.NRanks != 2 || f.NNodes != 1 || len(f.RankPlaces) != 2 || f.RankPlaces[1].BusID != "70" {
		t.Errorf("facts say %d ranks on %d nodes, places %+v", f.NRanks, f.NNodes, f.RankPlaces)
	}
}

// TestRealTransportCaptures holds the parser to logs captured on a host
// with two H200s joined by NVLink (docs/VALIDATION.md; nccl-tests 2.19.6,
// NCCL 2.28.3, Open MPI 4.1.6), one per transport form NCCL used there.
func TestRealTransportCaptures(t *testing.T) {
	tests := []struct {
		file      string
		transport string
		routes    string
		nnodes    int
		onePid    bool // -g 2: one process drives both GPUs
	}{
		{"real/x2_p2p_cumem.txt", "P2P", "P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host, 48 connections", 1, false},
		{"real/x2_g2_direct.txt", "P2P", "P2P over NVLink (P2P/direct pointer) between ranks 0-1 within a host, 48 connections", 1, true},
		{"real/x2_p2p_ipc.txt", "P2P", "P2P over NVLink (P2P/IPC) between ranks 0-1 within a host, 48 connections", 1, false},
		{"real/x2_shm.txt", "SHM", "shared memory (SHM/direct/direct) between ranks 0-1 within a host, 8 connections", 1, false},
		{"real/x2_g2_p2pdisabled.txt", "SHM", "shared memory (SHM/direct/direct) between ranks 0-1 within a host, 8 connections", 1, true},
		{"real/x2_net_socket.txt", "Socket", "network Socket (NET/Socket/0) between ranks 0-1 within a host, 4 connections", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Parse(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Complete || r.NRanks != 2 || len(r.Rows) != 6 || r.Invalid() != "" {
				t.Fatalf("complete %v, %d ranks, %d rows, invalid %q", r.Complete, r.NRanks, len(r.Rows), r.Invalid())
			}
			if onePid := r.Devices[0].Pid == r.Devices[1].Pid; onePid != tt.onePid {
				t.Errorf("one process for both GPUs: %v, want %v", onePid, tt.onePid)
			}
			f := r.Facts
			if f == nil || f.Transport != tt.transport || f.Network != "Socket" || f.NNodes != tt.nnodes {
				t.Fatalf("facts %+v; want transport %s, network Socket, %d nodes", f, tt.transport, tt.nnodes)
			}
			if got := RoutesText(f.Routes); got != tt.routes {
				t.Errorf("routes\n got %s\nwant %s", got, tt.routes)
			}
			// GDR and the NICs only where the network carries data.
			if network := TransportNetwork(f.Transport); (f.GDR != nil) != network || (len(f.NICs) > 0) != network {
				t.Errorf("GDR %s NICs %q for transport %s", ptrBool(f.GDR), f.NICs, f.Transport)
			}
			if !f.NVLink || len(f.RankPlaces) != 2 || f.RankPlaces[0].Host != "vm" || f.RankPlaces[1].Host != "vm" {
				t.Errorf("NVLink %v places %+v", f.NVLink, f.RankPlaces)
			}
		})
	}
}
