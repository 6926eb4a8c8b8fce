package benchfmt

import (
	"os"
	"reflect"
	"testing"
)

func TestParseNCCLInitLines(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want *NCCLInit
	}{
		{"no NCCL line", "# nccl-tests version 2.19.6\n", nil},
		{"env, integer with period and string",
			"h:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n" +
				"h:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to ==rocep1s0f1,roceP2p1s0f1\n" +
				"h:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n",
			&NCCLInit{Env: map[string]string{"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "==rocep1s0f1,roceP2p1s0f1"}}},
		{"devices with and without the space, deduplicated per host",
			"a:1:1 [0] NCCL INFO NET/IB: [0] rocep1s0f1:uverbs0:1/RoCE provider=Mlx5 speed=100000 context=0x1 pciPath=/x ar=0\n" +
				"a:1:1 [0] NCCL INFO NET/IB : [1] roceP2p1s0f1:uverbs1:1/RoCE provider=Mlx5 speed=100000 context=0x2 pciPath=/y ar=0\n" +
				"a:1:1 [0] NCCL INFO NET/IB: [0] rocep1s0f1:uverbs0:1/RoCE provider=Mlx5 speed=100000 context=0x1 pciPath=/x ar=0\n" +
				"b:2:2 [0] NCCL INFO NET/IB : [0] mlx5_0:uverbs0:1/IB provider=Mlx5 speed=400000 context=0x1 pciPath=/x ar=1\n" +
				"a:1:1 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB enP7s7:10.0.0.1<0>\n",
			&NCCLInit{IBDevices: []NetDevice{
				{Host: "a", Name: "rocep1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 100000},
				{Host: "a", Name: "roceP2p1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 100000},
				{Host: "b", Name: "mlx5_0", Port: 1, Link: "IB", SpeedMbps: 400000},
			}}},
		{"plugin failure, no device, merge",
			"a:1:1 [0] NCCL INFO NET/IB : No device found.\n" +
				"a:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\n" +
				"a:1:1 [0] NCCL INFO NET/IB : Made virtual device [2] name=a+b speed=200000 ndevs=2\n",
			&NCCLInit{IBInitFailed: true, IBNoDevice: true, MergedNICs: true}},
		{"channel devices, init progress, rings; WARN lines ignored",
			"a:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x2 - Init START\n" +
				"b:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x2 - Init START\n" +
				"a:1:1 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x2 - Init COMPLETE\n" +
				"a:1:1 [0] NCCL INFO Channel 00/02 : 0 1\n" +
				"a:1:1 [0] NCCL INFO Channel 01/02 : 1 0\n" +
				"a:1:1 [0] NCCL INFO Channel 02/02 : 0 1\n" +
				"a:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/1/GDRDMA\n" +
				"a:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/0\n" +
				"a:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n" +
				"a:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/x\n" +
				"a:1:1 [0] misc.cc:1 NCCL WARN NET/IB : No device found.\n",
			&NCCLInit{ChannelNetDevs: []int{0, 1}, InitStarts: 2, InitCompletes: 1, Rings: []string{"0 1", "1 0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseNCCLInit([]byte(tt.log))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseNCCLInit =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseNCCLInitFixtures(t *testing.T) {
	data, err := os.ReadFile("testdata/fixtures/ar2_mps_info.txt")
	if err != nil {
		t.Fatal(err)
	}
	fl := ParseNCCLInit(data)
	if fl == nil {
		t.Fatal("no fabric log found in ar2_mps_info.txt")
	}
	if fl.Env["NCCL_IB_DISABLE"] != "1" || fl.Env["NCCL_SOCKET_IFNAME"] != "lo" {
		t.Errorf("Env = %v, want NCCL_IB_DISABLE=1 and NCCL_SOCKET_IFNAME=lo", fl.Env)
	}
	if !fl.IBInitFailed || fl.IBNoDevice || len(fl.IBDevices) != 0 {
		t.Errorf("IB plugin: failed %v, no device %v, devices %v; want failed, no 'No device', none", fl.IBInitFailed, fl.IBNoDevice, fl.IBDevices)
	}
	if fl.InitStarts != 2 || fl.InitCompletes != 2 {
		t.Errorf("init START/COMPLETE = %d/%d, want 2/2", fl.InitStarts, fl.InitCompletes)
	}
	if !reflect.DeepEqual(fl.ChannelNetDevs, []int{0}) || !reflect.DeepEqual(fl.Rings, []string{"0 1"}) {
		t.Errorf("channel devs %v rings %v, want [0] and [0 1]", fl.ChannelNetDevs, fl.Rings)
	}
}
