package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/fabric"
)

// doctorJSON is the part of doctor's JSON the tests read.
type doctorJSON struct {
	Transport   string `json:"transport"`
	GDR         *bool  `json:"gdr"`
	NCCLVersion string `json:"nccl_version"`
	NRanks      int    `json:"nranks"`
	NNodes      int    `json:"nnodes"`
	Channels    int    `json:"channels"`
	Choices     []struct {
		Bytes    int64  `json:"bytes"`
		Algo     string `json:"algo"`
		Proto    string `json:"proto"`
		Channels int    `json:"channels"`
	} `json:"choices"`
	Warnings   []fabric.Warning `json:"warnings"`
	Simulated  bool             `json:"simulated"`
	SimProfile string           `json:"sim_profile"`
	Source     string           `json:"source"`
	Failed     bool             `json:"failed"`
	Sizes      []fabric.SizeBW  `json:"sizes"`
}

func (d doctorJSON) codes() []string {
	var out []string
	for _, w := range d.Warnings {
		out = append(out, w.Code)
	}
	return out
}

func (d doctorJSON) warning(code string) (fabric.Warning, bool) {
	for _, w := range d.Warnings {
		if w.Code == code {
			return w, true
		}
	}
	return fabric.Warning{}, false
}

func decodeDoctor(t *testing.T, stdout string) doctorJSON {
	t.Helper()
	var d doctorJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
	}
	return d
}

func doctorLog(name string) string { return filepath.Join("testdata", "doctor", name) }

// realLog is a capture from real hardware kept with the runner's tests.
func realLog(name string) string {
	return filepath.Join("..", "..", "internal", "benchfmt", "testdata", "real", name)
}

func TestDoctorLogGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		golden string
		args   []string
		code   int
	}{
		{"doctor/mps_info.golden", []string{"doctor", "--log", doctorLog("ar2_mps_info.txt")}, exitOK},
		{"doctor/mps_info.json.golden", []string{"doctor", "--json", "--log", doctorLog("ar2_mps_info.txt")}, exitOK},
		{"doctor/debug_tuning.golden", []string{"doctor", "--log", doctorLog("ar2_debug_tuning.txt")}, exitOK},
		{"doctor/ib_gdr.golden", []string{"doctor", "--log", doctorLog("ar4_ib_gdr_debug.txt"), "--link-gbps", "400"}, exitFabric},
		{"doctor/mpi_docker0.golden", []string{"doctor", "--log", doctorLog("ar2_mpi_docker0.txt")}, exitFabric},
		{"doctor/x2_p2p.golden", []string{"doctor", "--log", doctorLog("x2_mpirun_p2p_debug.txt")}, exitOK},
		{"doctor/x2_net.golden", []string{"doctor", "--log", doctorLog("x2_mpirun_net_debug.txt")}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			checkGolden(t, tt.golden, []byte(stdout))
		})
	}
}

// The acceptance case: a saved log of a loopback run over sockets.
func TestDoctorLogFindsSocketAndGDR0(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "doctor", "--json", "--log", doctorLog("ar2_mps_info.txt"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := decodeDoctor(t, stdout)
	if d.Transport != "Socket" || d.GDR == nil || *d.GDR {
		t.Errorf("transport %q gdr %v, want Socket and false", d.Transport, d.GDR)
	}
	if d.NCCLVersion != "2.28.3" || d.NRanks != 2 || d.NNodes != 2 || d.Channels != 2 || d.Source != "log" || d.Simulated {
		t.Errorf("facts %+v", d)
	}
	w, ok := d.warning(fabric.CodeSocketTransport)
	if !ok || !strings.Contains(w.Message, "NCCL_IB_DISABLE=1") {
		t.Errorf("warnings %+v, want socket-transport naming NCCL_IB_DISABLE=1", d.Warnings)
	}
	text, _, _ := runCLI(t, db, "doctor", "--log", doctorLog("ar2_mps_info.txt"))
	for _, s := range []string{"transport       Socket", "GPUDirect RDMA  off (GDR 0)", "[socket-transport]", "Diagnosed, with 1 warning(s)"} {
		if !strings.Contains(text, s) {
			t.Errorf("text output lacks %q:\n%s", s, text)
		}
	}
}

// The acceptance cases: two H200s of one host under mpirun -np 2.
// NVLink carries everything (NCCL initialises the socket network and logs
// "GDR 1" all the same), and with P2P and SHM disabled the two ranks of one
// host talk TCP while NCCL counts two nodes.
func TestDoctorLogTwoGPUHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		log       string
		transport string
		routes    []string // kind/network per route
		warnings  []string
		msg       string
		text      []string
		notText   []string
	}{
		{log: "x2_mpirun_p2p_debug.txt", transport: "P2P", routes: []string{"P2P/"},
			text: []string{"2 ranks on 1 node (NVIDIA H200)", "transport       P2P (the Socket network NCCL initialised carries no data)",
				"P2P over NVLink (P2P/CUMEM) between ranks 0-1 within a host"},
			notText: []string{"NICs", "GPUDirect RDMA", "1 nodes", "eth0"}},
		{log: "x2_mpirun_net_debug.txt", transport: "Socket", routes: []string{"NET/Socket"},
			warnings: []string{fabric.CodeP2PDisabled}, msg: "NCCL_P2P_DISABLE=1 in the environment: ranks 0→1, 1→0 on host vm talk over the network (NET/Socket/0)",
			text: []string{"2 ranks on 2 nodes by NCCL's count, 1 host", "transport       Socket", "NICs            eth0:192.0.2.2<0>",
				"GPUDirect RDMA  off (GDR 0)", "NCCL counts 2 nodes on 1 host"},
			notText: []string{"[socket-transport]"}},
		// Captured on the same host, one per transport form (benchfmt/testdata/real).
		{log: realLog("x2_p2p_cumem.txt"), transport: "P2P", routes: []string{"P2P/"},
			text: []string{"P2P over NVLink (P2P/CUMEM)"}, notText: []string{"NICs", "GPUDirect RDMA"}},
		{log: realLog("x2_g2_direct.txt"), transport: "P2P", routes: []string{"P2P/"},
			text: []string{"P2P over NVLink (P2P/direct pointer)", "2 ranks on 1 node"}, notText: []string{"NICs", "GPUDirect RDMA"}},
		{log: realLog("x2_p2p_ipc.txt"), transport: "P2P", routes: []string{"P2P/"},
			text: []string{"P2P over NVLink (P2P/IPC)"}, notText: []string{"NICs", "GPUDirect RDMA"}},
		{log: realLog("x2_shm.txt"), transport: "SHM", routes: []string{"SHM/"}, warnings: []string{fabric.CodeP2PDisabled},
			msg:  "NCCL_P2P_DISABLE=1 in the environment: ranks 0→1, 1→0 on host vm copy through host shared memory (SHM/direct/direct)",
			text: []string{"shared memory (SHM/direct/direct)"}, notText: []string{"NICs", "GPUDirect RDMA"}},
		{log: realLog("x2_g2_p2pdisabled.txt"), transport: "SHM", routes: []string{"SHM/"}, warnings: []string{fabric.CodeP2PDisabled},
			msg: "NCCL_P2P_DISABLE=1 in the environment"},
		{log: realLog("x2_net_socket.txt"), transport: "Socket", routes: []string{"NET/Socket"}, warnings: []string{fabric.CodeP2PDisabled},
			msg:  "NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 in the environment: ranks 0→1, 1→0 on host vm talk over the network (NET/Socket/0)",
			text: []string{"2 ranks on 2 nodes by NCCL's count, 1 host", "GPUDirect RDMA  off (GDR 0)"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.log), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			if !strings.Contains(tt.log, "/") {
				tt.log = doctorLog(tt.log)
			}
			stdout, stderr, code := runCLI(t, db, "doctor", "--json", "--log", tt.log)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			d := decodeDoctor(t, stdout)
			var rep fabric.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if d.Transport != tt.transport || d.NRanks != 2 {
				t.Errorf("transport %q, %d ranks; want %q, 2", d.Transport, d.NRanks, tt.transport)
			}
			var routes []string
			for _, r := range rep.Routes {
				routes = append(routes, r.Kind+"/"+r.Network)
			}
			if strings.Join(routes, " ") != strings.Join(tt.routes, " ") || rep.TransportSummary == "" {
				t.Errorf("routes %q summary %q, want %q", routes, rep.TransportSummary, tt.routes)
			}
			if tt.transport == "P2P" && (d.GDR != nil || len(rep.NICs) != 0) {
				t.Errorf("GDR %v NICs %q where the network carries nothing", d.GDR, rep.NICs)
			}
			if strings.Join(d.codes(), " ") != strings.Join(tt.warnings, " ") {
				t.Errorf("warnings %q, want %q", d.codes(), tt.warnings)
			}
			if tt.msg != "" {
				if w, _ := d.warning(tt.warnings[0]); !strings.Contains(w.Message, tt.msg) {
					t.Errorf("warning %q lacks %q", w.Message, tt.msg)
				}
			}
			text, _, _ := runCLI(t, db, "doctor", "--log", tt.log)
			for _, s := range tt.text {
				if !strings.Contains(text, s) {
					t.Errorf("text output lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tt.notText {
				if strings.Contains(text, s) {
					t.Errorf("text output has %q:\n%s", s, text)
				}
			}
		})
	}
}

func TestDoctorLogTuningChoices(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "doctor", "--json", "--log", doctorLog("ar2_debug_tuning.txt"))
	d := decodeDoctor(t, stdout)
	if code != exitOK || len(d.Choices) != 4 {
		t.Fatalf("exit %d, %d choices; want 0 and 4 (512K..4M)", code, len(d.Choices))
	}
	for _, c := range d.Choices {
		if c.Algo != "RING" || c.Proto != "SIMPLE" || c.Channels != 2 {
			t.Errorf("choice %+v, want RING/SIMPLE on 2 channels", c)
		}
	}
}

func TestDoctorUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "--log", doctorLog("nonexistent.txt")}, "nonexistent.txt: no such file; give the path"},
		{[]string{"doctor", "--log", filepath.Dir(doctorLog("x"))}, "is a directory"},
		{[]string{"doctor", "--log", doctorLog("spark4-throttled.json")}, "no nccl-tests output and no NCCL_DEBUG line"},
		{[]string{"doctor", "--log", doctorLog("ar2_mps_info.txt"), "--sim", "spark4"}, "--sim only applies to a launch"},
		{[]string{"doctor", "--log", doctorLog("ar2_mps_info.txt"), "--max", "1M"}, "--max only applies to a launch"},
		{[]string{"doctor", "--log", doctorLog("ar2_mps_info.txt"), "--env", "NCCL_ALGO=Ring"}, "--env only applies to a launch"},
		{[]string{"doctor", "--sim", "spark4", "--min", "4M", "--max", "1M"}, "--min/--max"},
		{[]string{"doctor", "--sim", "spark4", "--link-gbps", "-5"}, "--link-gbps"},
		{[]string{"doctor", "extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" || strings.Contains(stderr, "stat ") {
				t.Errorf("exit %d stderr %q stdout %q; want exit 2 naming %q (and no raw stat error)", code, stderr, stdout, tt.want)
			}
		})
	}
}

// TestDoctorSimulated runs doctor on the simulated fabric with each fault
// it can diagnose.
func TestDoctorSimulated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		code      int
		transport string
		codes     []string // exactly these warnings
		msg       map[string]string
	}{
		{name: "spark4 healthy but GDR off", args: []string{"--sim", "spark4"}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeGDROff}},
		{name: "socket fallback", args: []string{"--sim", "spark4", "--base-env", "NCCLTUNE_SIM_FAULT=socket-fallback"}, code: exitOK,
			transport: "Socket", codes: []string{fabric.CodeSocketFallback},
			msg: map[string]string{fabric.CodeSocketFallback: "Failed to initialize NET plugin IB"}},
		{name: "hang at init", args: []string{"--sim", "spark4", "--timeout", "1s", "--base-env", "NCCLTUNE_SIM_FAULT=init-hang"}, code: exitFabric,
			transport: "IB", codes: []string{fabric.CodeNoProgress},
			msg: map[string]string{fabric.CodeNoProgress: "within the 1s timeout and was killed: it hung during NCCL initialisation"}},
		{name: "hang after a size", args: []string{"--sim", "spark4", "--timeout", "1s", "--base-env", "NCCLTUNE_SIM_FAULT=hang"}, code: exitFabric,
			transport: "IB", codes: []string{fabric.CodeNoProgress, fabric.CodeGDROff},
			msg: map[string]string{fabric.CodeNoProgress: "it hung after the"}},
		{name: "wrong results", args: []string{"--sim", "spark4", "--base-env", "NCCLTUNE_SIM_FAULT=wrong"}, code: exitFabric,
			transport: "IB", codes: []string{fabric.CodeWrongResults, fabric.CodeGDROff},
			msg: map[string]string{fabric.CodeWrongResults: "Out of bounds values"}},
		{name: "MPI wire-up", args: []string{"--sim", "spark4", "--base-env", "NCCLTUNE_SIM_FAULT=mpi-wireup"}, code: exitFabric,
			codes: []string{fabric.CodeMPIWireup},
			msg:   map[string]string{fabric.CodeMPIWireup: "cannot find a corresponding process"}},
		{name: "crash", args: []string{"--sim", "spark4", "--base-env", "NCCLTUNE_SIM_FAULT=crash"}, code: exitFabric,
			transport: "IB", codes: []string{fabric.CodeLaunchFailed, fabric.CodeGDROff},
			msg: map[string]string{fabric.CodeLaunchFailed: "killed by signal 6"}},
		{name: "one rail of two", args: []string{"--sim", "spark2"}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeOneNIC, fabric.CodeGDROff},
			msg:   map[string]string{fabric.CodeOneNIC: "every channel connects through NET/IB/0"}},
		{name: "both rails merged", args: []string{"--sim", "spark2", "--base-env", "NCCL_IB_MERGE_NICS=1"}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeGDROff}},
		{name: "throttled link", args: []string{"--sim", doctorLog("spark4-throttled.json")}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeThrottledLink, fabric.CodeGDROff},
			msg:   map[string]string{fabric.CodeThrottledLink: "6 % of the 200 Gb/s link"}},
		{name: "a stated link replaces the ports' speed", args: []string{"--sim", "spark4", "--link-gbps", "800"}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeThrottledLink, fabric.CodeGDROff},
			msg:   map[string]string{fabric.CodeThrottledLink: "of the 800 Gb/s link (100.0 GB/s; --link-gbps)"}},
		{name: "healthy against a stated link", args: []string{"--sim", "spark4", "--link-gbps", "200"}, code: exitOK, transport: "IB",
			codes: []string{fabric.CodeGDROff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"doctor", "--json"}, tt.args...)
			stdout, stderr, code := runCLI(t, filepath.Join(t.TempDir(), "db"), args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			d := decodeDoctor(t, stdout)
			if !d.Simulated || d.Transport != tt.transport {
				t.Errorf("simulated %v transport %q, want true and %q", d.Simulated, d.Transport, tt.transport)
			}
			if strings.Join(d.codes(), ",") != strings.Join(tt.codes, ",") {
				t.Errorf("warnings %v, want %v\n%+v", d.codes(), tt.codes, d.Warnings)
			}
			for code, s := range tt.msg {
				if w, ok := d.warning(code); !ok || !strings.Contains(w.Message, s) {
					t.Errorf("warning %s lacks %q: %+v", code, s, w)
				}
			}
			if d.Failed != (tt.code == exitFabric) {
				t.Errorf("failed = %v with exit %d", d.Failed, code)
			}
		})
	}
}

// The text output labels the simulated fabric and shows NCCL's choice per size.
func TestDoctorSimulatedText(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, filepath.Join(t.TempDir(), "db"), "doctor", "--sim", "spark4", "--min", "512K", "--max", "2M")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{"[SIMULATED fabric: spark4]", "transport       IB", "GPUDirect RDMA  off (GDR 0)",
		"channels        64", "rings           0 1 2 3", "     1M  RING    LL128         64", "[gdr-off]", "fix: nothing to switch on"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	if strings.Contains(stdout, "    4M  ") {
		t.Errorf("--max 2M measured 4M:\n%s", stdout)
	}
}

// TestDoctorEnvSideBySide: doctor --env launches once more with the
// settings and shows what NCCL chose with and without them; on spark4 the
// seed fix turns LL128 with up to 64 channels into Simple with 8.
func TestDoctorEnvSideBySide(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "db")
	stdout, stderr, code := runCLI(t, db, "doctor", "--sim", "spark4", "--env", "NCCL_PROTO=^LL128", "--env", "NCCL_MAX_NCHANNELS=8", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep struct {
		CompareEnv map[string]string `json:"compare_env"`
		Compare    []struct {
			Bytes   int64 `json:"bytes"`
			Default *struct {
				Proto    string `json:"proto"`
				Channels int    `json:"channels"`
			} `json:"default"`
			Recommended *struct {
				Proto    string `json:"proto"`
				Channels int    `json:"channels"`
			} `json:"recommended"`
			Changed bool `json:"changed"`
		} `json:"compare"`
	}
	decodeOneJSON(t, stdout, &rep)
	if rep.CompareEnv["NCCL_PROTO"] != "^LL128" || len(rep.Compare) == 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Compare {
		if r.Bytes != 1<<20 {
			continue
		}
		if r.Default == nil || r.Recommended == nil || !r.Changed ||
			r.Default.Proto != "LL128" || r.Recommended.Proto != "Simple" || r.Recommended.Channels != 8 {
			t.Fatalf("1M: %+v → %+v (changed %v), want LL128 → Simple with 8 channels", r.Default, r.Recommended, r.Changed)
		}
		return
	}
	t.Fatal("no 1M row in the comparison")
}

// doctor --log reads the tuner plugin's lines of a real log: the JSON
// names the plugin, counts the calls that fell back, and warns; the
// crashed run exits 3 with the fix.
func TestDoctorLogTunerPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	stdout, stderr, code := runCLI(t, db, "doctor", "--json", "--log", "../../internal/benchfmt/testdata/tuner-real/all_gather_tuner_2.30.7.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Tuner struct {
			Interface int `json:"interface"`
			NoMatch   int `json:"no_match"`
		} `json:"tuner_plugin"`
		Warnings []struct{ Code string } `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tuner.Interface != 5 || doc.Tuner.NoMatch != 300 || len(doc.Warnings) == 0 || doc.Warnings[0].Code != "tuner-fallback" {
		t.Errorf("tuner %+v, warnings %+v", doc.Tuner, doc.Warnings)
	}
	stdout, _, code = runCLI(t, db, "doctor", "--log", "../../internal/benchfmt/testdata/tuner-real/all_reduce_tuner_2.28.3.txt")
	if code != 3 || !strings.Contains(stdout, "[tuner-plugin-crash]") || !strings.Contains(stdout, "2.30.3 or newer source") {
		t.Errorf("exit %d, want 3 with the crash and its fix:\n%s", code, stdout)
	}
}
