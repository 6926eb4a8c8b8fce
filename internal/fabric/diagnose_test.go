package fabric

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

func ptr[T any](v T) *T { return &v }

// rows makes a complete, correct table: size → busbw (time from algbw at
// factor 1.5, the 4-rank all-reduce's).
func rows(bw map[int64]float64) []benchfmt.Row {
	var out []benchfmt.Row
	for _, b := range nccl.PowersOfTwo(32*nccl.KiB, 256*nccl.MiB) {
		v, ok := bw[b]
		if !ok {
			continue
		}
		alg := v / 1.5
		out = append(out, benchfmt.Row{Bytes: b, Out: benchfmt.Measure{TimeUS: float64(b) / alg / 1e3, AlgBW: alg, BusBW: v, Wrong: ptr(int64(0))}})
	}
	return out
}

// ibFacts is a healthy 4-node RDMA fabric as NCCL logs it.
func ibFacts() *benchfmt.Facts {
	return &benchfmt.Facts{NCCLVersion: "2.30.7", NRanks: 4, NNodes: 4, Transport: "IB",
		NICs: []string{"rocep1s0f1:1/RoCE", "roceP2p1s0f1:1/RoCE"}, GDR: ptr(true), Channels: 8}
}

func twoRails() *benchfmt.NCCLInit {
	return &benchfmt.NCCLInit{IBDevices: []benchfmt.NetDevice{
		{Host: "a", Name: "rocep1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 100000},
		{Host: "a", Name: "roceP2p1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 100000},
		{Host: "b", Name: "rocep1s0f1", Port: 1, Link: "RoCE", SpeedMbps: 100000},
	}, ChannelNetDevs: []int{0, 1}, InitStarts: 4, InitCompletes: 4}
}

func result(f *benchfmt.Facts, r []benchfmt.Row, gpu string) *benchfmt.Result {
	return &benchfmt.Result{Collective: "all_reduce", NCCLVersion: "2.30.7", NRanks: 4, Rows: r, Facts: f,
		Complete: true, OutOfBounds: ptr(0), Devices: []benchfmt.Device{{Name: gpu}}}
}

var healthy = map[int64]float64{nccl.MiB: 11, 64 * nccl.MiB: 22.2, 256 * nccl.MiB: 22.3}

func TestDiagnoseWarnings(t *testing.T) {
	type tc struct {
		name  string
		res   *benchfmt.Result
		log   *benchfmt.NCCLInit
		c     Context
		codes []string
		// in are substrings the first warning's message and fix must hold.
		msg, fix []string
	}
	mod := func(f func(*benchfmt.Facts)) *benchfmt.Facts { x := ibFacts(); f(x); return x }
	socket := func(f func(*benchfmt.Facts)) *benchfmt.Facts {
		return mod(func(x *benchfmt.Facts) {
			x.Transport, x.NICs, x.GDR = "Socket", []string{"enP7s7:10.0.0.1<0>"}, ptr(false)
			if f != nil {
				f(x)
			}
		})
	}
	sockBW := map[int64]float64{nccl.MiB: 1.1, 256 * nccl.MiB: 2.15}
	tests := []tc{
		{name: "healthy RDMA fabric", res: result(ibFacts(), rows(healthy), "NVIDIA H200"), log: twoRails()},
		{name: "socket fallback: RDMA devices listed", res: result(socket(nil), rows(sockBW), "NVIDIA GB10"), log: twoRails(),
			codes: []string{CodeSocketFallback},
			msg:   []string{"Using network Socket", "NCCL found RDMA devices (rocep1s0f1, roceP2p1s0f1)", "2.15 GB/s (256M)"},
			fix:   []string{"NCCL_NET_PLUGIN=none", "NCCL_IB_MERGE_NICS=1", "NCCL_IB_HCA=="}},
		{name: "socket fallback: NCCL_IB_HCA in the base env", res: result(socket(nil), rows(sockBW), "NVIDIA GB10"),
			c:     Context{BaseEnv: map[string]string{"NCCL_IB_HCA": "==rocep1s0f1,roceP2p1s0f1"}},
			codes: []string{CodeSocketFallback}, msg: []string{"NCCL_IB_HCA===rocep1s0f1,roceP2p1s0f1 asks for RDMA devices"}},
		{name: "socket fallback: IB plugin failed without being disabled", res: result(socket(nil), rows(sockBW), "NVIDIA GB10"),
			log: &benchfmt.NCCLInit{IBInitFailed: true}, codes: []string{CodeSocketFallback},
			msg: []string{"Failed to initialize NET plugin IB"}},
		{name: "socket fallback: busbw far below the stated link", res: result(socket(nil), rows(sockBW), "NVIDIA GB10"),
			c: Context{LinkGbps: 200}, codes: []string{CodeSocketFallback}, msg: []string{"9 % of the 200 Gb/s link (25.0 GB/s)"}},
		{name: "socket on purpose: NCCL_IB_DISABLE=1 wins over the HCA list", res: result(socket(nil), rows(sockBW), "NVIDIA H200"),
			log:   &benchfmt.NCCLInit{IBInitFailed: true, Env: map[string]string{"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "mlx5_0"}},
			codes: []string{CodeSocketTransport}, msg: []string{"because NCCL_IB_DISABLE=1 is set", "TCP numbers"}},
		{name: "socket for want of a device", res: result(socket(nil), rows(sockBW), "NVIDIA H200"),
			log:   &benchfmt.NCCLInit{IBInitFailed: true, IBNoDevice: true},
			codes: []string{CodeSocketTransport}, msg: []string{"No device found"}},
		{name: "socket on one node carries nothing", res: result(socket(func(f *benchfmt.Facts) { f.NNodes = 1 }), rows(sockBW), "NVIDIA H200"),
			log: twoRails()},
		{name: "GDR off", res: result(mod(func(f *benchfmt.Facts) { f.GDR = ptr(false) }), rows(healthy), "NVIDIA H200"), log: twoRails(),
			codes: []string{CodeGDROff}, msg: []string{"GDR 0"}, fix: []string{"nvidia-peermem"}},
		{name: "GDR off on GB10 says it is expected", res: result(mod(func(f *benchfmt.Facts) { f.GDR = ptr(false) }), rows(healthy), "NVIDIA GB10"),
			log: twoRails(), codes: []string{CodeGDROff}, fix: []string{"GB10's unified memory", "24.6 GB/s"}},
		{name: "GDR unknown says nothing", res: result(mod(func(f *benchfmt.Facts) { f.GDR = nil }), rows(healthy), "NVIDIA H200"), log: twoRails()},
		{name: "one NIC of two carries the channels", res: result(ibFacts(), rows(healthy), "NVIDIA H200"),
			log:   func() *benchfmt.NCCLInit { l := twoRails(); l.ChannelNetDevs = []int{0}; return l }(),
			codes: []string{CodeOneNIC}, msg: []string{"2 RDMA devices (rocep1s0f1, roceP2p1s0f1)", "NET/IB/0"}, fix: []string{"NCCL_IB_MERGE_NICS=1"}},
		{name: "merged NICs use one virtual device", res: result(ibFacts(), rows(healthy), "NVIDIA H200"),
			log: func() *benchfmt.NCCLInit { l := twoRails(); l.ChannelNetDevs, l.MergedNICs = []int{2}, true; return l }()},
		{name: "NCCL_IB_HCA lists more than NCCL uses", res: result(mod(func(f *benchfmt.Facts) { f.NICs = f.NICs[:1] }), rows(healthy), "NVIDIA GB10"),
			log:   &benchfmt.NCCLInit{Env: map[string]string{"NCCL_IB_HCA": "=rocep1s0f1,rocep1s0f0:1"}},
			codes: []string{CodeOneNIC}, msg: []string{"lists 2 devices but NCCL uses 1 on a host (rocep1s0f1)"}, fix: []string{"==", "…f0"}},
		{name: "NCCL_IB_HCA exclusion is not a list of devices", res: result(mod(func(f *benchfmt.Facts) { f.NICs = f.NICs[:1] }), rows(healthy), "NVIDIA GB10"),
			c: Context{BaseEnv: map[string]string{"NCCL_IB_HCA": "^mlx5_2,mlx5_3"}}},
		{name: "two rails, no channel lines, no merge, one GPU per node", res: result(ibFacts(), rows(healthy), "NVIDIA GB10"),
			codes: []string{CodeOneNIC}, msg: []string{"no channel lines"}},
		{name: "two rails, no channel lines, merge asked", res: result(ibFacts(), rows(healthy), "NVIDIA GB10"),
			c: Context{BaseEnv: map[string]string{"NCCL_IB_MERGE_NICS": "1"}}},
		{name: "two rails, no channel lines, two GPUs per node", res: result(mod(func(f *benchfmt.Facts) { f.NNodes = 2 }), rows(healthy), "NVIDIA H200")},
		{name: "throttled link from the ports' speed", res: result(ibFacts(), rows(map[int64]float64{nccl.MiB: 0.9, 256 * nccl.MiB: 1.6}), "NVIDIA GB10"),
			log:   twoRails(),
			codes: []string{CodeThrottledLink}, msg: []string{"1.60 GB/s at 256M", "6 % of the 200 Gb/s link", "rocep1s0f1 100 Gb/s + roceP2p1s0f1 100 Gb/s"},
			fix: []string{"firmware", "power-drain", "MTU 9000", "ib_write_bw"}},
		{name: "throttled link against the stated speed", res: result(ibFacts(), rows(map[int64]float64{64 * nccl.MiB: 3}), "NVIDIA H200"),
			log: twoRails(), c: Context{LinkGbps: 400}, codes: []string{CodeThrottledLink}, msg: []string{"--link-gbps"}},
		{name: "small sizes only cannot show a throttle", res: result(ibFacts(), rows(map[int64]float64{nccl.MiB: 0.5}), "NVIDIA H200"),
			log: twoRails(), c: Context{LinkGbps: 400}},
		{name: "unknown link speed cannot show a throttle", res: result(ibFacts(), rows(map[int64]float64{256 * nccl.MiB: 0.5}), "NVIDIA H200"),
			log: &benchfmt.NCCLInit{ChannelNetDevs: []int{0, 1}}},
		{name: "hang after a size", res: result(ibFacts(), rows(map[int64]float64{32 * nccl.KiB: 0.6, 64 * nccl.KiB: 0.9}), "NVIDIA H200"),
			log: twoRails(), c: Context{Outcome: benchfmt.TimedOut, Timeout: 5 * time.Second},
			codes: []string{CodeNoProgress}, msg: []string{"within the 5s timeout", "after the 64K row", "next size (128K)"}, fix: []string{"NCCL_ALGO"}},
		{name: "hang during NCCL init", res: &benchfmt.Result{Collective: "all_reduce", Facts: &benchfmt.Facts{Transport: "IB"}},
			log:   &benchfmt.NCCLInit{InitStarts: 4},
			c:     Context{Outcome: benchfmt.TimedOut, Timeout: 2 * time.Second},
			codes: []string{CodeNoProgress}, msg: []string{"during NCCL initialisation", "4 rank(s) logged \"Init START\", 0 \"Init COMPLETE\""},
			fix: []string{"2.28.9", "sm_121"}},
		{name: "hang in the first collective", res: &benchfmt.Result{Collective: "all_reduce", Facts: &benchfmt.Facts{Transport: "IB"}},
			log:   &benchfmt.NCCLInit{InitStarts: 2, InitCompletes: 2},
			c:     Context{Outcome: benchfmt.TimedOut},
			codes: []string{CodeNoProgress}, msg: []string{"the first collective never did"}},
		{name: "hang with no NCCL log", res: &benchfmt.Result{Collective: "all_reduce"}, c: Context{Outcome: benchfmt.TimedOut},
			codes: []string{CodeNoProgress}, msg: []string{"no NCCL log to tell"}, fix: []string{"nccltune doctor"}},
		{name: "hang before anything printed", c: Context{Outcome: benchfmt.TimedOut},
			codes: []string{CodeNoProgress}, msg: []string{"before the benchmark printed anything"}, fix: []string{"oob_tcp_if_include"}},
		{name: "saved log that stops early", res: func() *benchfmt.Result {
			r := result(ibFacts(), rows(map[int64]float64{nccl.MiB: 11}), "NVIDIA H200")
			r.Complete = false
			return r
		}(), log: twoRails(), codes: []string{CodeNoProgress}, msg: []string{"stops before nccl-tests' closing lines", "after the 1M row"}},
		{name: "wrong results", res: func() *benchfmt.Result {
			r := result(ibFacts(), rows(healthy), "NVIDIA H200")
			r.Rows[0].Out.Wrong, r.OutOfBounds = ptr(int64(3)), ptr(3)
			return r
		}(), log: twoRails(), c: Context{Outcome: benchfmt.Invalid},
			codes: []string{CodeWrongResults}, msg: []string{"1M (#wrong 3)", "Out of bounds values : 3 FAILED"}, fix: []string{"never use"}},
		{name: "MPI wire-up over docker0", res: &benchfmt.Result{Errors: []string{"WARNING: Open MPI accepted a TCP connection from what appears to be a another Open MPI process but cannot find a corresponding process entry for that peer."}},
			c:     Context{Outcome: benchfmt.Failed, Reason: "exit status 1: Open MPI could not connect"},
			codes: []string{CodeMPIWireup}, msg: []string{"cannot find a corresponding process entry", "docker0"},
			fix: []string{"oob_tcp_if_include", "btl_tcp_if_include", "NCCL_SOCKET_IFNAME"}},
		{name: "other launch failure", res: &benchfmt.Result{Collective: "all_reduce"},
			c:     Context{Outcome: benchfmt.Failed, Reason: "exit status 134: NCCL reported \"unhandled system error\""},
			codes: []string{CodeLaunchFailed}, msg: []string{"unhandled system error"}},
		{name: "NCCL too old for GB10", res: func() *benchfmt.Result {
			r := result(ibFacts(), rows(healthy), "NVIDIA GB10")
			r.NCCLVersion = "2.27.7"
			return r
		}(), log: twoRails(), codes: []string{CodeNCCLVersion}, msg: []string{"NCCL 2.27.7 predates GB10"}, fix: []string{"v2.28.9-1"}},
		{name: "NCCL 2.27 is fine on an H200", res: func() *benchfmt.Result {
			r := result(ibFacts(), rows(healthy), "NVIDIA H200")
			r.NCCLVersion = "2.27.7"
			return r
		}(), log: twoRails()},
		{name: "no NCCL log", res: result(nil, rows(healthy), "NVIDIA H200"),
			codes: []string{CodeNoNCCLLog}, fix: []string{"NCCL_DEBUG=INFO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose(tt.res, tt.log, tt.c)
			if !reflect.DeepEqual(r.Codes(), tt.codes) {
				t.Fatalf("codes = %v, want %v\n%+v", r.Codes(), tt.codes, r.Warnings)
			}
			for _, w := range r.Warnings {
				if w.Message == "" || w.Fix == "" {
					t.Errorf("warning %s lacks a message or a fix: %+v", w.Code, w)
				}
			}
			if len(tt.codes) == 0 {
				return
			}
			w := r.Warnings[0]
			for _, s := range tt.msg {
				if !strings.Contains(w.Message, s) {
					t.Errorf("message lacks %q:\n%s", s, w.Message)
				}
			}
			for _, s := range tt.fix {
				if !strings.Contains(w.Fix, s) {
					t.Errorf("fix lacks %q:\n%s", s, w.Fix)
				}
			}
		})
	}
}

func TestDiagnoseFixtures(t *testing.T) {
	tests := []struct {
		file      string
		transport string
		gdr       *bool
		codes     []string
		choices   int
		channels  int
	}{
		{"ar2_mps_info.txt", "Socket", ptr(false), []string{CodeSocketTransport}, 0, 2},
		{"ar2_debug_tuning.txt", "Socket", ptr(false), []string{CodeSocketTransport}, 4, 2},
		// NCCL logs "Got async error event: local catastrophic error" on mlx5_1.
		{"ar4_ib_gdr_debug.txt", "IB", ptr(true), []string{CodeNICError}, 3, 4},
		{"ar2_mpi_docker0.txt", "", nil, []string{CodeMPIWireup}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := benchfmt.Parse(data) // a failed run is still a result to diagnose
			if res == nil {
				t.Fatalf("%s did not parse", tt.file)
			}
			r := Diagnose(res, benchfmt.ParseNCCLInit(data), Context{})
			if r.Transport != tt.transport || !reflect.DeepEqual(r.GDR, tt.gdr) {
				t.Errorf("transport %q GDR %v, want %q %v", r.Transport, r.GDR, tt.transport, tt.gdr)
			}
			if !reflect.DeepEqual(r.Codes(), tt.codes) {
				t.Errorf("codes = %v, want %v\n%+v", r.Codes(), tt.codes, r.Warnings)
			}
			if len(r.Choices) != tt.choices || r.Channels != tt.channels {
				t.Errorf("%d choices, %d channels; want %d, %d", len(r.Choices), r.Channels, tt.choices, tt.channels)
			}
		})
	}
}

// The ar2_mps_info fixture is the acceptance case: Socket and GDR 0,
// with the reason NCCL gives and the measured peak as evidence.
func TestDiagnoseMPSInfoEvidence(t *testing.T) {
	data, err := os.ReadFile("testdata/ar2_mps_info.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := benchfmt.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r := Diagnose(res, benchfmt.ParseNCCLInit(data), Context{})
	if r.NCCLVersion != "2.28.3" || r.NRanks != 2 || r.NNodes != 2 || len(r.Sizes) != 12 {
		t.Errorf("version %s ranks %d nodes %d sizes %d; want 2.28.3, 2, 2, 12", r.NCCLVersion, r.NRanks, r.NNodes, len(r.Sizes))
	}
	w := r.Warnings[0].Message
	for _, s := range []string{"NCCL_IB_DISABLE=1", "3.37 GB/s (64M)"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning lacks %q: %s", s, w)
		}
	}
}

func TestVersionLess(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"2.27.7", "2.28.9", true}, {"2.28.3", "2.28.9", true}, {"2.28.9", "2.28.9", false},
		{"2.30.7", "2.28.9", false}, {"3.0.0", "2.28.9", false}, {"2.28", "2.28.9", false}, {"x", "2.28.9", false},
	}
	for _, tt := range tests {
		if got := versionLess(tt.a, tt.b); got != tt.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// The real logs of nccltune's tuner CSV under NVIDIA's example plugin
// (benchfmt/testdata/tuner-real): the 2.28.3-source plugin's crash names the
// fix, the 2.30.7-source plugin's run is clean, and the all-gather that no
// row matches warns of its one channel.
func TestDiagnoseTunerPlugin(t *testing.T) {
	// The logs were taken with NCCL_DEBUG_SUBSYS=INIT,TUNING, without
	// NET's "No device found": the loopback's sockets read as a fallback.
	tests := []struct {
		file  string
		codes []string
		// want are texts the tuner warning must hold.
		want []string
	}{
		{"all_reduce_tuner_2.28.3.txt", []string{CodeTunerPluginCrash, CodeSocketFallback},
			[]string{"libnccl-tuner-example.so(+0x2569)", "NCCL < 2.30.3", "2.30.3 or newer source", "gcc -Inccl -fPIC -shared"}},
		{"all_reduce_tuner_2.30.7.txt", []string{CodeSocketFallback}, nil},
		{"all_gather_tuner_2.30.7.txt", []string{CodeTunerFallback, CodeSocketFallback},
			[]string{"300 of 300 calls", "ONE channel", "allgather at 128K-2M (no row for this collective)", "nccltune search --op"}},
		{"all_gather_tuner_2.28.3.txt", []string{CodeTunerFallback, CodeSocketFallback}, []string{"300 of 300 calls"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("../benchfmt/testdata/tuner-real/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := benchfmt.Parse(data)
			r := Diagnose(res, benchfmt.ParseNCCLInit(data), Context{})
			if !reflect.DeepEqual(r.Codes(), tt.codes) {
				t.Fatalf("codes = %v, want %v\n%+v", r.Codes(), tt.codes, r.Warnings)
			}
			if r.TunerPlugin == nil || r.TunerPlugin.Interface != 5 {
				t.Errorf("report's tuner plugin %+v, want the v5 Example", r.TunerPlugin)
			}
			if len(tt.want) == 0 {
				return
			}
			text := r.Warnings[0].Message + " fix: " + r.Warnings[0].Fix
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("warning lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// A launch that SIGSEGVs with NCCL_TUNER_PLUGIN set, without the debug
// log, is still the plugin's crash; on NCCL 2.27 the fix says no example
// plugin works.
func TestDiagnoseTunerCrashWithoutLog(t *testing.T) {
	for _, tt := range []struct {
		version, want string
	}{{"2.28.3", "2.30.3 or newer source"}, {"2.27.7", "loads only the v2-v4 tuner interfaces"}} {
		res := &benchfmt.Result{NCCLVersion: tt.version, Collective: "all_reduce"}
		r := Diagnose(res, nil, Context{BaseEnv: map[string]string{"NCCL_TUNER_PLUGIN": "/x/libnccl-tuner-example.so"},
			Outcome: benchfmt.Failed, Reason: "killed by signal 11 (segmentation fault): a rank exited early"})
		if !reflect.DeepEqual(r.Codes(), []string{CodeTunerPluginCrash}) {
			t.Fatalf("NCCL %s: codes = %v, want only %s", tt.version, r.Codes(), CodeTunerPluginCrash)
		}
		if !strings.Contains(r.Warnings[0].Fix, tt.want) {
			t.Errorf("NCCL %s: fix %q lacks %q", tt.version, r.Warnings[0].Fix, tt.want)
		}
	}
}

// A NIC NCCL's IB transport saw fail is a warning that fails the fabric,
// whatever the launch did; the fix names the device to check and to leave
// out with NCCL_IB_HCA.
func TestDiagnoseNICErrors(t *testing.T) {
	tests := []struct {
		name string
		errs []benchfmt.NICError
		// msg and fix are texts the warning must hold.
		msg, fix []string
	}{
		{"port error (link down)", []benchfmt.NICError{{Host: "b", Device: "mlx5_0:1", Kind: benchfmt.NICErrorEvent, Event: "port error",
			Line: "NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)"}},
			[]string{"mlx5_0:1 on b", "the port lost its link", "port error(10)"},
			[]string{"ibv_devinfo -d mlx5_0 -i 1", "ibstat mlx5_0", "switch port", "NCCL_IB_HCA=^=mlx5_0:1"}},
		{"fatal event", []benchfmt.NICError{{Host: "a", Device: "mlx5_1:1", Kind: benchfmt.NICFatalEvent, Event: "local catastrophic error",
			Line: "NET/IB : mlx5_1:1 async fatal event: local catastrophic error"}},
			[]string{"mlx5_1:1 on a", "unusable until it is reset"}, []string{"NCCL_IB_HCA=^=mlx5_1:1", "reset the HCA"}},
		{"failed completion, no device named", []benchfmt.NICError{{Host: "a", Kind: benchfmt.NICCompletion, Event: "IBV_WC_RETRY_EXC_ERR(12)",
			Line: "NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129 (Send)"}},
			[]string{"an RDMA device NCCL did not name on a", "IBV_WC_RETRY_EXC_ERR(12)", "no answer from the peer"},
			[]string{"NCCL_IB_HCA=^=<device>", "ibv_devinfo and ibstat"}},
		{"two devices", []benchfmt.NICError{
			{Host: "a", Device: "mlx5_0:1", Kind: benchfmt.NICErrorEvent, Event: "port error"},
			{Host: "b", Device: "mlx5_1", Kind: benchfmt.NICCompletion, Event: "IBV_WC_WR_FLUSH_ERR(5)"}},
			[]string{"mlx5_0:1 on a", "mlx5_1 on b", "completed with an error"}, []string{"NCCL_IB_HCA=^=mlx5_0:1,mlx5_1", "ibstat mlx5_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ibFacts()
			f.NICErrors = tt.errs
			r := Diagnose(result(f, rows(healthy), "NVIDIA H100 80GB HBM3"), twoRails(), Context{})
			if !reflect.DeepEqual(r.Codes(), []string{CodeNICError}) {
				t.Fatalf("codes = %v, want [%s]\n%+v", r.Codes(), CodeNICError, r.Warnings)
			}
			w := r.Warnings[0]
			for _, s := range tt.msg {
				if !strings.Contains(w.Message, s) {
					t.Errorf("message lacks %q:\n%s", s, w.Message)
				}
			}
			for _, s := range tt.fix {
				if !strings.Contains(w.Fix, s) {
					t.Errorf("fix lacks %q:\n%s", s, w.Fix)
				}
			}
			if got := r.FabricFailure(); !strings.HasPrefix(got, CodeNICError+": ") {
				t.Errorf("FabricFailure() = %q, want the nic-error", got)
			}
		})
	}
	// Other warnings leave the fabric's verdict to the launch.
	f := ibFacts()
	f.GDR = ptr(false)
	if r := Diagnose(result(f, rows(healthy), "NVIDIA H100 80GB HBM3"), twoRails(), Context{}); len(r.Warnings) == 0 || r.FabricFailure() != "" {
		t.Errorf("GDR off: warnings %v, FabricFailure %q; want a warning that does not fail the fabric", r.Codes(), r.FabricFailure())
	}
}

// The real 2.30.7-source plugin log (four H200 ranks as four hosts), its
// GPU and node count rewritten: only Blackwell at 3+ nodes with the
// example plugin loaded as v5 gets the warning of its rewritten constants.
func TestDiagnoseTunerExampleConstants(t *testing.T) {
	data, err := os.ReadFile("../benchfmt/testdata/tuner-real/all_reduce_tuner_2.30.7.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		gpu      string
		nodes    string // NCCL's "nNodes N"
		name2    string // the plugin's name in "Using …"
		want     bool
		cc       string
		wantText []string
	}{
		{"GB10 at 4 nodes", "NVIDIA GB10", "4", "Example", true, "12.1",
			[]string{"Using Example (v5)", "NVIDIA GB10 (compute capability 12.1, Blackwell) at 4 nodes", "Tree bandwidth per channel to 15 GB/s",
				"Ring LL128 per channel to 20 GB/s", "whatever its CSV holds"}},
		{"B200 at 3 nodes", "NVIDIA B200", "3", "Example", true, "10.0", []string{"at 3 nodes"}},
		{"GB10 at 2 nodes", "NVIDIA GB10", "2", "Example", false, "12.1", nil},
		{"H200 at 4 nodes", "NVIDIA H200", "4", "Example", false, "", nil},
		{"another plugin on GB10", "NVIDIA GB10", "4", "MyTuner", false, "12.1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nccl.BlackwellCC(tt.gpu); got != tt.cc {
				t.Errorf("nccl.BlackwellCC(%q) = %q, want %q", tt.gpu, got, tt.cc)
			}
			log := strings.ReplaceAll(string(data), "NVIDIA H200", tt.gpu)
			log = strings.ReplaceAll(log, " nNodes 4 ", " nNodes "+tt.nodes+" ")
			log = strings.ReplaceAll(log, "Using Example (v5)", "Using "+tt.name2+" (v5)")
			res, _ := benchfmt.Parse([]byte(log))
			r := Diagnose(res, benchfmt.ParseNCCLInit([]byte(log)), Context{})
			w, ok := Warning{}, false
			for _, x := range r.Warnings {
				if x.Code == CodeTunerExampleConstants {
					w, ok = x, true
				}
			}
			if ok != tt.want {
				t.Fatalf("warning %s shown %v, want %v: %v", CodeTunerExampleConstants, ok, tt.want, r.Codes())
			}
			for _, s := range tt.wantText {
				if !strings.Contains(w.Message, s) {
					t.Errorf("message lacks %q:\n%s", s, w.Message)
				}
			}
			if ok && !strings.Contains(w.Fix, "verify --tuner-plugin") {
				t.Errorf("fix %q does not say how to check the plugin's effect", w.Fix)
			}
		})
	}
}
