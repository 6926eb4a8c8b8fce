package nccl

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseCall: a call is measured at the power of two nearest its size
// on a log scale (the rule `nccltune workload` counts a call by), its
// calls are the part's weight, and String writes it back as read.
func TestParseCall(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Part
		str  string
	}{
		{"all_reduce:10240:760", Part{Op: AllReduce, Band: Band{8 << 10, 8 << 10}, Weight: 760, Calls: 760, Logged: []int64{10240}, LoggedCalls: []float64{760}}, "all_reduce:10240:760"},
		// 2048000 ≥ 1M·√2: nearer 2M than 1M on a log scale.
		{"all_reduce:2048000:80", Part{Op: AllReduce, Band: Band{2 << 20, 2 << 20}, Weight: 80, Calls: 80, Logged: []int64{2048000}, LoggedCalls: []float64{80}}, "all_reduce:2048000:80"},
		{"AllGather:8K:13", Part{Op: AllGather, Band: Band{8 << 10, 8 << 10}, Weight: 13, Calls: 13, Logged: []int64{8192}, LoggedCalls: []float64{13}}, "all_gather:8192:13"},
		// 11585 < 8K·√2 ≤ 11586: the boundary goes up.
		{"broadcast:11585:1", Part{Op: Broadcast, Band: Band{8 << 10, 8 << 10}, Weight: 1, Calls: 1, Logged: []int64{11585}, LoggedCalls: []float64{1}}, "broadcast:11585:1"},
		{"broadcast:11586:0.5", Part{Op: Broadcast, Band: Band{16 << 10, 16 << 10}, Weight: 0.5, Calls: 0.5, Logged: []int64{11586}, LoggedCalls: []float64{0.5}}, "broadcast:11586:0.5"},
	} {
		got, err := ParseCall(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCall(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if got.String() != c.str || !got.Timed() {
			t.Errorf("ParseCall(%q).String() = %q (timed %v), want %q", c.in, got.String(), got.Timed(), c.str)
		}
		if back, err := ParseCall(got.String()); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("ParseCall(%q) read back as %+v, %v", got.String(), back, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"all_reduce:10240", "write OP:BYTES:CALLS"},
		{"all_reduce:10K-20K:3", "not a number of bytes"},
		{"all_reduce:0:3", "must be from 1 byte"},
		{"all_reduce:1024:0", "must be a positive number"},
		{"all_reduce:1024:x", "must be a positive number"},
		{"allreduse:1024:3", "did you mean all_reduce"},
	} {
		if _, err := ParseCall(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCall(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// TestMergeCalls: calls of one op on one power of two are one part, their
// calls summed and their sizes kept; another op or size stays apart.
func TestMergeCalls(t *testing.T) {
	var parts []Part
	for _, s := range []string{"all_reduce:10240:760", "all_gather:8192:13", "all_reduce:9000:40", "all_reduce:2048000:80"} {
		p, err := ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	w := MergeCalls(parts)
	want := Workload{
		{Op: AllReduce, Band: Band{8 << 10, 8 << 10}, Weight: 800, Calls: 800, Logged: []int64{9000, 10240}, LoggedCalls: []float64{40, 760}},
		{Op: AllGather, Band: Band{8 << 10, 8 << 10}, Weight: 13, Calls: 13, Logged: []int64{8192}, LoggedCalls: []float64{13}},
		{Op: AllReduce, Band: Band{2 << 20, 2 << 20}, Weight: 80, Calls: 80, Logged: []int64{2048000}, LoggedCalls: []float64{80}},
	}
	if !reflect.DeepEqual(w, want) {
		t.Fatalf("MergeCalls = %+v\nwant %+v", w, want)
	}
	if err := w.Validate(); err != nil || !w.Timed() {
		t.Errorf("merged workload: Validate %v, Timed %v", err, w.Timed())
	}
	if got := w[0].String(); got != "all_reduce:8K:800" {
		t.Errorf("a merged part writes %q, want all_reduce:8K:800", got)
	}
	if parts[0].Logged[0] != 10240 || len(parts[0].Logged) != 1 {
		t.Errorf("MergeCalls changed its input: %+v", parts[0])
	}
}

// TestWorkloadRefusesCallsBesideParts: a workload is calls or parts.
func TestWorkloadRefusesCallsBesideParts(t *testing.T) {
	call, _ := ParseCall("all_reduce:10240:760")
	part, _ := ParsePart("all_gather:1M-8M:0.2")
	for _, w := range []Workload{{call, part}, {part, call}} {
		err := w.Validate()
		if err == nil || !strings.Contains(err.Error(), "all_gather:1M-8M:0.2 is a part") || !strings.Contains(err.Error(), "all_reduce:10240:760 a call") {
			t.Errorf("Validate(%s) = %v, want a refusal naming the part and the call", w, err)
		}
	}
}

// TestCallsText: a timed workload reads back as the process called it,
// per op and size with its calls, never as the band it is measured over
// (show and history said "8K-2M" of a study that measured 8K, 64K, 2M).
func TestCallsText(t *testing.T) {
	calls := func(specs ...string) Workload {
		var parts []Part
		for _, s := range specs {
			p, err := ParseCall(s)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		return MergeCalls(parts)
	}
	for _, c := range []struct {
		name string
		w    Workload
		want string
	}{
		{"one call", calls("all_reduce:10240:760"), "all_reduce 10240×760"},
		{"ops apart, sizes ascending", calls("all_reduce:2048000:80", "all_gather:1048576:13", "all_reduce:10240:760", "all_reduce:81920:120"),
			"all_reduce 10240×760, 81920×120, 2048000×80; all_gather 1048576×13"},
		{"two sizes on one power of two", calls("all_reduce:10240:760", "all_reduce:9000:40", "all_reduce:10240:5"), "all_reduce 9000×40, 10240×765"},
		{"stored without per-size calls", Workload{{Op: AllReduce, Band: Band{8 << 10, 8 << 10}, Weight: 800, Calls: 800, Logged: []int64{9000, 10240}}},
			"all_reduce 9000+10240×800"},
	} {
		if got := c.w.CallsText(); got != c.want {
			t.Errorf("%s: CallsText() = %q, want %q", c.name, got, c.want)
		}
		// A part alone says its calls in the same words, without its op:
		// the name a per-part line gives it.
		if len(c.w) == 1 {
			if got, want := c.w[0].CallsText(), strings.TrimPrefix(c.want, "all_reduce "); got != want {
				t.Errorf("%s: Part.CallsText() = %q, want %q", c.name, got, want)
			}
		}
	}
}

func TestParseLoggedChoice(t *testing.T) {
	for _, c := range []struct {
		in   string
		want LoggedChoice
		str  string
	}{
		{"all_reduce:81920:ring:simple", LoggedChoice{Op: AllReduce, Bytes: 81920, Algo: "RING", Proto: "SIMPLE"}, "all_reduce:81920:ring:simple"},
		{"AllGather:8K:RING:LL128", LoggedChoice{Op: AllGather, Bytes: 8192, Algo: "RING", Proto: "LL128"}, "all_gather:8192:ring:ll128"},
		{"broadcast:4:collnet_direct:ll", LoggedChoice{Op: Broadcast, Bytes: 4, Algo: "COLLNETDIRECT", Proto: "LL"}, "broadcast:4:collnetdirect:ll"},
	} {
		got, err := ParseLoggedChoice(c.in)
		if err != nil || got != c.want || got.String() != c.str {
			t.Errorf("ParseLoggedChoice(%q) = %+v (%q), %v; want %+v (%q)", c.in, got, got.String(), err, c.want, c.str)
			continue
		}
		if back, err := ParseLoggedChoice(got.String()); err != nil || back != got {
			t.Errorf("ParseLoggedChoice(%q) read back as %+v, %v", got.String(), back, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"all_reduce:81920:ring", "write OP:BYTES:ALGO:PROTO"},
		{"all_reduce:0:ring:simple", "must be from 1 byte"},
		{"all_reduce:81920:star:simple", `algorithm "star"`},
		{"all_reduce:81920:ring:fast", `protocol "fast"`},
		{"gather:81920:ring:simple", "gather"},
	} {
		if _, err := ParseLoggedChoice(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseLoggedChoice(%q) = %v; want an error saying %q", c.in, err, c.want)
		}
	}
}
