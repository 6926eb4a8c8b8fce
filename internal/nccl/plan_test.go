package nccl_test

import (
	"os"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
)

// nativeOf reads NCCL's plan of the defaults from a real debug log,
// restricted to sizes (the band and guard sizes of a study).
func nativeOf(t *testing.T, path string, sizes []int64) nccl.Native {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := benchfmt.ParseFacts(data).Native("")
	if !ok {
		t.Fatalf("%s: no plan", path)
	}
	n.Plan = n.Plan.Restrict(sizes)
	return n
}

func cfg(items ...string) nccl.Config {
	c := nccl.Config{}
	for _, it := range items {
		k, v, _ := strings.Cut(it, "=")
		c[k] = v
	}
	return c
}

// The real 4-rank loopback (NCCL 2.28.3, Socket, one "NIC"): Ring/Simple on
// 2 channels from 128K up, LL below; LL128 disabled by NCCL's defaults.
func TestResolveLoopback4(t *testing.T) {
	band := append(nccl.PowersOfTwo(512<<10, 4<<20), 8<<20)
	n := nativeOf(t, "../benchfmt/testdata/real/ar4_explain_tuning.txt", band)
	native := n.Plan.Key()
	tests := []struct {
		name    string
		cfg     nccl.Config
		certain bool
		same    bool // the plan is NCCL's own
		reduced string
		enables string // a substring of Enables, "" for none
	}{
		{"defaults", cfg(), true, true, "", ""},
		{"cross nic with one NIC", cfg("NCCL_CROSS_NIC=0"), true, true, "", ""},
		{"cap at the channels", cfg("NCCL_MAX_CTAS=2"), true, true, "", ""},
		{"cap above", cfg("NCCL_MAX_NCHANNELS=64"), true, true, "", ""},
		{"ring holds every choice", cfg("NCCL_ALGO=Ring"), true, true, "", ""},
		{"simple holds every choice", cfg("NCCL_PROTO=Simple"), true, true, "", ""},
		{"excluding LL128 which is off", cfg("NCCL_PROTO=^LL128"), true, true, "", ""},
		{"seed 2 of issue 16 minus the cap", cfg("NCCL_ALGO=Ring", "NCCL_CROSS_NIC=0", "NCCL_PROTO=^LL128"), true, true, "", ""},
		{"cap below", cfg("NCCL_MAX_CTAS=1"), false, false, "NCCL_MAX_CTAS=1", ""},
		{"cap below with no-ops", cfg("NCCL_MAX_CTAS=1", "NCCL_CROSS_NIC=0", "NCCL_MAX_NCHANNELS=4"), false, false, "NCCL_MAX_CTAS=1", ""},
		{"^LL switches LL128 on", cfg("NCCL_PROTO=^LL"), false, true, "NCCL_PROTO=^LL", "LL128"},
		{"LL128 forced", cfg("NCCL_PROTO=LL128"), false, false, "NCCL_PROTO=LL128", "LL128"},
		{"LL forced", cfg("NCCL_PROTO=LL"), false, false, "NCCL_PROTO=LL", ""},
		{"tree forced", cfg("NCCL_ALGO=Tree"), false, false, "NCCL_ALGO=Tree", ""},
		{"other collectives only", cfg("NCCL_PROTO=allgather:LL"), true, true, "", ""},
		{"this collective", cfg("NCCL_PROTO=allreduce:LL;allgather:Simple"), false, false, "NCCL_PROTO=allreduce:LL;allgather:Simple", ""},
		{"threads", cfg("NCCL_NTHREADS=256"), false, true, "NCCL_NTHREADS=256", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := n.Explain(tt.cfg)
			if r.Certain != tt.certain {
				t.Errorf("certain %v, want %v (dropped %v)", r.Certain, tt.certain, r.Dropped)
			}
			if same := r.Plan.Key() == native; same != tt.same {
				t.Errorf("plan %s; same as NCCL's %v, want %v", r.Plan.Key(), same, tt.same)
			}
			if r.Reduced.Key() != tt.reduced {
				t.Errorf("reduced %q, want %q", r.Reduced.Key(), tt.reduced)
			}
			if got := strings.Join(r.Enables, "; "); (tt.enables == "") != (got == "") || !strings.Contains(got, tt.enables) {
				t.Errorf("enables %q, want %q", got, tt.enables)
			}
			for _, d := range r.Dropped {
				if d.Reason == "" || d.Value == "" {
					t.Errorf("dropped %+v without value or reason", d)
				}
			}
			p, certain := n.Resolve(tt.cfg)
			if certain != r.Certain || !p.Equal(r.Plan) {
				t.Errorf("Resolve disagrees with Explain")
			}
		})
	}
	// Configs proved to run NCCL's plan share its key; the rest do not.
	if a, b := n.Explain(cfg("NCCL_CROSS_NIC=1", "NCCL_MAX_CTAS=8")).Key, n.Explain(cfg()).Key; a != b {
		t.Errorf("keys differ: %q %q", a, b)
	}
	if a, b := n.Explain(cfg("NCCL_MAX_CTAS=1", "NCCL_CROSS_NIC=1")).Key, n.Explain(cfg("NCCL_MAX_CTAS=1")).Key; a != b {
		t.Errorf("a no-op beside a cap: keys differ: %q %q", a, b)
	}
	if a, b := n.Explain(cfg("NCCL_MAX_CTAS=1", "NCCL_ALGO=Ring")).Key, n.Explain(cfg("NCCL_MAX_CTAS=1")).Key; a == b {
		t.Errorf("an algorithm list beside a cap is not proved a no-op: %q", a)
	}
	if r := n.Explain(cfg("NCCL_MAX_CTAS=1", "NCCL_ALGO=Ring")); len(r.Conditional) != 1 || r.Conditional[0].Knob != "NCCL_ALGO" {
		t.Errorf("NCCL_ALGO=Ring beside a cap: conditional %v", r.Conditional)
	}
	// LL128 is off by default here: leaving it out is a no-op beside anything.
	if a, b := n.Explain(cfg("NCCL_MAX_CTAS=1", "NCCL_PROTO=^LL128")).Key, n.Explain(cfg("NCCL_MAX_CTAS=1")).Key; a != b {
		t.Errorf("^LL128 beside a cap: keys differ: %q %q", a, b)
	}
	// Since NCCL 2.17 both caps limit the same channels.
	if a, b := n.Explain(cfg("NCCL_MAX_NCHANNELS=1")).Key, n.Explain(cfg("NCCL_MAX_CTAS=1")).Key; a != b {
		t.Errorf("MAX_NCHANNELS=1 and MAX_CTAS=1: keys differ: %q %q", a, b)
	}
	old := n
	old.Version = "2.16.5"
	if a, b := old.Explain(cfg("NCCL_MAX_NCHANNELS=1")).Key, old.Explain(cfg("NCCL_MAX_CTAS=1")).Key; a == b {
		t.Errorf("NCCL 2.16 has no NCCL_MAX_CTAS, yet the keys agree: %q", a)
	}
}

// A 2-GPU NVLink host (x2_mpirun_p2p_debug): LL128 enabled by NCCL's
// defaults, LL up to 1M on up to 24 channels, Simple above.
func TestResolveNVLink2(t *testing.T) {
	n := nativeOf(t, "../benchfmt/testdata/fixtures/x2_mpirun_p2p_debug.txt", nccl.PowersOfTwo(32<<10, 4<<20))
	tests := []struct {
		cfg     nccl.Config
		certain bool
		enables bool
	}{
		{cfg("NCCL_PROTO=^LL128"), true, false},
		{cfg("NCCL_PROTO=^LL"), false, false}, // LL is chosen: excluding it changes the plan
		{cfg("NCCL_PROTO=LL128"), false, false},
		{cfg("NCCL_MAX_NCHANNELS=24"), true, false},
		{cfg("NCCL_MAX_NCHANNELS=16"), false, false},
		{cfg("NCCL_ALGO=NVLS"), false, false}, // no NVLink SHARP here: NCCL cannot run it, whatever the env
		{cfg("NCCL_ALGO=^NVLS"), true, false},
		{cfg("NCCL_CROSS_NIC=1"), true, false},
	}
	for _, tt := range tests {
		r := n.Explain(tt.cfg)
		if r.Certain != tt.certain || (len(r.Enables) > 0) != tt.enables {
			t.Errorf("%s: certain %v enables %v, want %v %v", tt.cfg, r.Certain, r.Enables, tt.certain, tt.enables)
		}
	}
}

// Without the defaults' TUNING table nothing says LL128 is on: switching it
// on is not proved safe.
func TestResolveWithoutTable(t *testing.T) {
	n := nccl.Native{Plan: nccl.Plan{1 << 20: {Algo: "RING", Proto: "SIMPLE", Channels: 4}}, Channels: 4}
	if r := n.Explain(cfg("NCCL_PROTO=^LL")); len(r.Enables) == 0 || r.Certain {
		t.Errorf("^LL without a table: %+v", r)
	}
	if r := n.Explain(cfg("NCCL_PROTO=^LL128")); len(r.Enables) != 0 || !r.Certain {
		t.Errorf("^LL128 without a table: %+v", r)
	}
	if r := n.Explain(cfg("NCCL_CROSS_NIC=0")); r.Certain {
		t.Errorf("CROSS_NIC with unknown NICs: certain")
	}
}

// A plan read under a config with knobs that act beside the plan (threads,
// rings across several NICs) proves that config's plan, not that it runs
// like the defaults.
func TestKnobsBesideThePlan(t *testing.T) {
	n := nativeOf(t, "../benchfmt/testdata/real/ar4_explain_tuning.txt", nccl.PowersOfTwo(512<<10, 4<<20))
	threads := n
	threads.Config = cfg("NCCL_NTHREADS=256")
	r := threads.Explain(cfg("NCCL_NTHREADS=256"))
	if !r.Certain || r.Key == n.Explain(cfg()).Key || !strings.Contains(r.Key, "NCCL_NTHREADS=256") {
		t.Errorf("NTHREADS=256 on NCCL's plan: certain %v key %q; want its own key", r.Certain, r.Key)
	}
	if r := threads.Explain(cfg("NCCL_NTHREADS=256", "NCCL_MAX_CTAS=8")); !r.Certain || !strings.Contains(r.Key, "NCCL_NTHREADS=256") || strings.Contains(r.Key, "MAX_CTAS") {
		t.Errorf("a no-op cap beside NTHREADS: certain %v key %q", r.Certain, r.Key)
	}
}

// No NCCL_ALGO or NCCL_PROTO list reaches an op NCCL runs as send/recv
// (not even one that would switch on a disabled protocol elsewhere); a
// cap reaches it through the channels.
func TestSendRecvRules(t *testing.T) {
	sizes := []int64{1 << 20, 8 << 20}
	n := nccl.Native{Collective: "AlltoAll", SendRecv: true, Channels: 2, Plan: nccl.SendRecvPlan(sizes, 2)}
	for _, tc := range []struct {
		cfg     nccl.Config
		certain bool
		rule    string
	}{
		{nccl.Config{"NCCL_ALGO": "Tree"}, true, nccl.RuleSendRecv},
		{nccl.Config{"NCCL_PROTO": "LL128"}, true, nccl.RuleSendRecv},
		{nccl.Config{"NCCL_MAX_NCHANNELS": "8"}, true, nccl.RuleCapAbove},
		{nccl.Config{"NCCL_MAX_CTAS": "1"}, false, ""},
	} {
		r := n.Explain(tc.cfg)
		if r.Certain != tc.certain || len(r.Enables) > 0 || tc.rule != "" && (len(r.Dropped) != 1 || r.Dropped[0].Rule != tc.rule) {
			t.Errorf("%s: certain %v dropped %+v enables %v; want certain %v by %q", tc.cfg, r.Certain, r.Dropped, r.Enables, tc.certain, tc.rule)
		}
	}
	if nccl.SendRecvPlan(sizes, 0) != nil {
		t.Error("a send/recv plan without a channel count")
	}
}

// The size nccl-tests ran for a call is one rule: of one ladder's sizes
// (search, LadderSize) it is the one in (b/2, b]; of several ladders'
// (the export, RanFor with the op's grain) the one less than a grain
// below b. Where nccl-tests rounds a ladder's sizes down to whole
// elements, both name the same size, and a ladder's size of another
// call (further below) is never b's.
func TestLadderSizeIsRanForsRule(t *testing.T) {
	for _, op := range []nccl.Op{nccl.AllReduce, nccl.AllGather, nccl.Broadcast} {
		grain := op.MinBytes(8)
		for _, b0 := range []int64{10240, 10243, 49152, 9701523, 3 * grain, 5*grain + 1} {
			var ladder []int64
			for k := range 5 {
				b := b0 << k
				ladder = append(ladder, b-b%grain) // nccl-tests' whole elements
			}
			for k, want := range ladder {
				b := b0 << k
				x, ok := nccl.LadderSize(ladder, b)
				y, ok2 := nccl.RanFor(ladder, b, grain)
				if !ok || !ok2 || x != want || y != want {
					t.Errorf("%s call %d of ladder %v: LadderSize %d %v, RanFor %d %v, want %d", op, b, ladder, x, ok, y, ok2, want)
				}
			}
			// A size between two of the ladder's calls: the ladder's size
			// below is another call's. LadderSize takes the one in (b/2,
			// b]; RanFor, of any ladder's sizes, none.
			b := b0*3/2 + grain
			if x, ok := nccl.LadderSize(ladder, b); !ok || x != ladder[0] {
				t.Errorf("%s: LadderSize(%v, %d) = %d %v, want %d (in (b/2, b])", op, ladder, b, x, ok, ladder[0])
			}
			if x, ok := nccl.RanFor(ladder, b, grain); ok {
				t.Errorf("%s: RanFor(%v, %d) = %d: another call's size", op, ladder, b, x)
			}
		}
	}
}

// Forbids: a list that leaves a choice's protocol or algorithm out for the
// collective forbids it whatever else the config sets (a cap beside it);
// a list for other collectives, or none, forbids nothing, nor does any
// list for an op NCCL runs as send/recv.
func TestForbids(t *testing.T) {
	n := nccl.Native{Collective: "AllGather", Channels: 2}
	ll := nccl.Choice{Algo: "RING", Proto: "LL", Channels: 1}
	for _, tc := range []struct {
		cfg  nccl.Config
		want bool
	}{
		{nccl.Config{"NCCL_MAX_NCHANNELS": "1", "NCCL_PROTO": "allgather:Simple"}, true},
		{nccl.Config{"NCCL_PROTO": "Simple"}, true},
		{nccl.Config{"NCCL_PROTO": "^LL"}, true},
		{nccl.Config{"NCCL_ALGO": "Tree"}, true},
		{nccl.Config{"NCCL_PROTO": "allreduce:Simple"}, false},
		{nccl.Config{"NCCL_PROTO": "LL,Simple"}, false},
		{nccl.Config{"NCCL_MAX_NCHANNELS": "1"}, false},
	} {
		if got := n.Forbids(tc.cfg, ll); got != tc.want {
			t.Errorf("Forbids(%s, %s) = %v, want %v", tc.cfg, ll, got, tc.want)
		}
	}
	sr := nccl.Native{Collective: "AlltoAll", SendRecv: true, Channels: 2}
	if sr.Forbids(nccl.Config{"NCCL_PROTO": "Simple"}, ll) {
		t.Error("Forbids on a send/recv op: no list reaches it")
	}
}
