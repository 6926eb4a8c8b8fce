package fabric

import (
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
)

// hostLog builds an NCCL log of one host "vm" with two GPUs joined by
// NVLink (when nvlink) and the given channel lines, plus extra lines.
func hostLog(nvlink bool, nNodes int, lines ...string) []byte {
	link := "PHB"
	if nvlink {
		link = "NVL"
	}
	head := []string{
		"vm:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x9 - Init START",
		"vm:2:2 [1] NCCL INFO ncclCommInitRankConfig comm 0x2 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 70 commId 0x9 - Init START",
		"vm:1:1 [0] NCCL INFO GPU/0-60 :GPU/0-60 (0/5000.0/LOC) GPU/0-70 (2/370.8/" + link + ") CPU/0-0 (1/48.0/PHB)",
		"vm:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes " + itoa(nNodes) + " localRanks 1 localRank 0 MNNVL 0",
		"vm:2:2 [1] NCCL INFO comm 0x2 rank 1 nRanks 2 nNodes " + itoa(nNodes) + " localRanks 1 localRank 0 MNNVL 0",
	}
	return []byte(strings.Join(append(head, lines...), "\n") + "\n")
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestHostWarnings(t *testing.T) {
	shm := []string{
		"vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct",
		"vm:2:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct",
	}
	net := []string{
		"vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0",
		"vm:2:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via NET/Socket/0",
	}
	tests := []struct {
		name      string
		log       []byte
		baseEnv   map[string]string
		transport string
		codes     []string
		msg       string
	}{
		{"NVLink P2P: nothing to say", hostLog(true, 1,
			"vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
			"vm:2:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM"), nil, "P2P", nil, ""},
		{"P2P disabled: SHM", hostLog(true, 1, append(shm, "vm:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1")...), nil,
			"SHM", []string{CodeP2PDisabled}, "NCCL_P2P_DISABLE=1 in the environment: ranks 0→1, 1→0 on host vm copy through host shared memory (SHM/direct/direct)"},
		{"P2P and SHM disabled by the base env: the network", hostLog(true, 2, net...),
			map[string]string{"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"},
			"Socket", []string{CodeP2PDisabled}, "NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 in the environment: ranks 0→1, 1→0 on host vm talk over the network (NET/Socket/0) instead of NVLink or PCIe. NCCL counts 2 nodes on 1 host"},
		{"NVLink but SHM, nothing disables P2P", hostLog(true, 1, shm...), nil,
			"SHM", []string{CodeP2PUnavailable}, "ranks 0→1, 1→0 on host vm use SHM/direct/direct, not P2P, although nothing in the environment disables P2P: NCCL's topology shows NVLink"},
		{"NCCL says P2P failed", hostLog(false, 1, append(shm,
			"vm:1:1 [0] p2p.cc:1 NCCL WARN P2P is disabled between NVLINK connected GPUs 0 and 1. This should not be the case given their connectivity")...), nil,
			"SHM", []string{CodeP2PUnavailable}, `NCCL logged "P2P is disabled between NVLINK connected GPUs 0 and 1.`},
		{"PCIe GPUs on SHM: NCCL's own choice", hostLog(false, 1, shm...), nil, "SHM", nil, ""},
		{"one pair over the network, the other over P2P", hostLog(false, 1,
			"vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
			"vm:2:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via NET/Socket/0"), nil,
			"Socket", []string{CodeMixedFabric}, "ranks 1→0 on host vm talk over the network (NET/Socket/0) while ranks 0→1 on host vm use P2P/CUMEM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := benchfmt.Parse(tt.log)
			r := Diagnose(res, benchfmt.ParseNCCLInit(tt.log), Context{BaseEnv: tt.baseEnv})
			if r.Transport != tt.transport {
				t.Errorf("transport %q, want %q (%s)", r.Transport, tt.transport, r.TransportSummary)
			}
			if strings.Join(r.Codes(), " ") != strings.Join(tt.codes, " ") {
				t.Fatalf("warnings %+v, want %q", r.Warnings, tt.codes)
			}
			if tt.msg != "" && !strings.Contains(r.Warnings[0].Message, tt.msg) {
				t.Errorf("message\n%s\nlacks\n%s", r.Warnings[0].Message, tt.msg)
			}
			if len(r.Hosts) != 1 || r.Hosts[0] != "vm" {
				t.Errorf("hosts %q, want vm", r.Hosts)
			}
		})
	}
}

func TestNetworkCarriesData(t *testing.T) {
	tests := []struct {
		r    Report
		want bool
	}{
		{Report{NNodes: 1}, false},
		{Report{NNodes: 2}, true},
		{Report{}, true}, // unknown: it may
		{Report{NNodes: 2, Routes: []benchfmt.Route{{Kind: benchfmt.KindP2P}}}, false},
		{Report{NNodes: 1, Routes: []benchfmt.Route{{Kind: benchfmt.KindP2P}, {Kind: benchfmt.KindNET, Network: "Socket"}}}, true},
	}
	for i, tt := range tests {
		if got := tt.r.NetworkCarriesData(); got != tt.want {
			t.Errorf("%d: NetworkCarriesData = %v, want %v", i, got, tt.want)
		}
	}
}
