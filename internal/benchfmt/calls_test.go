package benchfmt

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nccltune/nccltune/internal/nccl"
)

// COLL lines as NCCL 2.28.3's enqueue.cc writes them; the size is
// nccl-tests' (the whole buffer), so all-gather, reduce-scatter and
// all-to-all multiply NCCL's per-rank count by the rank count.
func TestParseCollLine(t *testing.T) {
	const tail = " op 0 root 0 comm 0x55a4c8e000 [nranks=4] stream 0x55a4d1f000"
	for _, tc := range []struct {
		name, msg string
		ok        bool
		fn        string
		op        nccl.Op
		count     int64
		dt        nccl.Datatype
		bytes     int64
	}{
		{"all-reduce bf16", "AllReduce: opCount 0 sendbuff 0x7f3a40000000 recvbuff 0x7f3a50000000 count 1024000 datatype 9" + tail, true, "AllReduce", nccl.AllReduce, 1024000, 9, 2048000},
		{"all-gather per rank", "AllGather: opCount 1a sendbuff 0x1 recvbuff 0x2 count 1000 datatype 9" + tail, true, "AllGather", nccl.AllGather, 1000, 9, 8000},
		{"reduce-scatter per rank", "ReduceScatter: opCount 2 sendbuff 0x1 recvbuff 0x2 count 1000 datatype 7" + tail, true, "ReduceScatter", nccl.ReduceScatter, 1000, 7, 16000},
		{"all-to-all per peer", "AlltoAll: opCount 2 sendbuff 0x1 recvbuff 0x2 count 256 datatype 10" + tail, true, "AlltoAll", nccl.AllToAll, 256, 10, 1024},
		{"broadcast", "Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 4" + tail, true, "Broadcast", nccl.Broadcast, 1, 4, 8},
		{"send is sendrecv", "Send: opCount 0 sendbuff (nil) recvbuff 0x1 count 4096 datatype 6" + tail, true, "Send", nccl.SendRecv, 4096, 6, 8192},
		{"recv not counted", "Recv: opCount 0 sendbuff (nil) recvbuff 0x1 count 4096 datatype 6" + tail, true, "Recv", "", 4096, 6, 8192},
		{"gather has no op", "Gather: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 0" + tail, true, "Gather", "", 10, 0, 10},
		{"hex opCount", "AllReduce: opCount 1f sendbuff 0x1 recvbuff 0x2 count 10 datatype 7" + tail, true, "AllReduce", nccl.AllReduce, 10, 7, 40},
		{"fp8 e5m2", "AllReduce: opCount a sendbuff 0x1 recvbuff 0x2 count 10 datatype 11" + tail, true, "AllReduce", nccl.AllReduce, 10, 11, 10},
		// Every NCCL since 2.3.7 ends the line with "[nranks=%d] stream %p":
		// a line without them was cut short, in a number or the comm
		// pointer that names its communicator.
		{"no nranks: cut short", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 7 op 0 root 0 comm 0x55 stream 0x56", false, "", "", 0, 0, 0},
		{"cut in the comm pointer", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 7 op 0 root 0 comm 0x55a4", false, "", "", 0, 0, 0},
		{"cut in the rank count", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 7 op 0 root 0 comm 0x55a4c8e000 [nranks=1", false, "", "", 0, 0, 0},
		{"cut before the stream", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 7 op 0 root 0 comm 0x55a4c8e000 [nranks=16]", false, "", "", 0, 0, 0},
		{"cut in the stream", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 7 op 0 root 0 comm 0x55a4c8e000 [nranks=16] stream 0x5", true, "AllReduce", nccl.AllReduce, 10, 7, 40},
		{"datatype past the enum", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 10 datatype 12" + tail, false, "", "", 0, 0, 0},
		{"no count", "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 datatype 7" + tail, false, "", "", 0, 0, 0},
		{"not a call", "AllReduce: 2048000 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}", false, "", "", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseCollLine(tc.msg)
			if err == nil {
				if bad := checkCall(&c); bad != nil {
					err = bad
				}
			}
			if ok := err == nil; ok != tc.ok {
				t.Fatalf("ok = %v (%v), want %v (%+v)", ok, err, tc.ok, c)
			}
			if err != nil {
				return
			}
			got := c.Bytes
			if c.Function != tc.fn || c.Op != tc.op || c.Count != tc.count || c.Datatype != tc.dt || (c.Op != "" && got != tc.bytes) {
				t.Errorf("got %s %q count %d datatype %d bytes %d; want %s %q %d %d %d", c.Function, c.Op, c.Count, c.Datatype, got, tc.fn, tc.op, tc.count, tc.dt, tc.bytes)
			}
			if c.CommPtr == "" {
				t.Error("no comm pointer")
			}
		})
	}
}

// One file per process: every call of rank 0 with its communicator's
// identity from the INIT line and NCCL's choice from its TUNING line.
func TestParseCallsPerProcess(t *testing.T) {
	cl, err := ParseCalls(readTestdata(t, "calls/nccl.gpu0.1001"))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Format != FormatNCCLLog || len(cl.Calls) != 116 {
		t.Fatalf("format %s, %d calls; want nccl-log, 116", cl.Format, len(cl.Calls))
	}
	if cl.Facts == nil || cl.Facts.NCCLVersion != "2.28.3" {
		t.Errorf("facts %+v: want NCCL 2.28.3", cl.Facts)
	}
	counts := map[nccl.Op]int{}
	for i, c := range cl.Calls {
		counts[c.Op]++
		if c.CommID != "0x8d3c1f5e2a7b9c01" || c.Rank != 0 || c.NRanks != 4 || c.Process != "gpu0:1001" || c.Seq != int64(i) {
			t.Fatalf("call %d: %+v", i, c)
		}
		if c.Algo != "RING" || c.Proto == "" {
			t.Fatalf("call %d has no TUNING choice: %+v", i, c)
		}
	}
	if counts[nccl.AllReduce] != 92 || counts[nccl.AllGather] != 23 || counts[nccl.Broadcast] != 1 {
		t.Errorf("counts %v", counts)
	}
	// The decode all-gather: 16 tokens × 8000 bf16 per rank, 4 ranks.
	if c := cl.Calls[len(cl.Calls)-1]; c.Op != nccl.AllGather || c.Bytes != 4*16*8000*2 {
		t.Errorf("last call %+v", c)
	}
	other, err := ParseCalls(readTestdata(t, "calls/nccl.gpu0.1002"))
	if err != nil {
		t.Fatal(err)
	}
	if c := other.Calls[0]; c.Rank != 1 || c.Algo != "" || c.CommID != cl.Calls[0].CommID {
		t.Errorf("rank 1's first call %+v: rank 1, no TUNING line, the same commId", c)
	}
}

// NCCL lines mixed into a server's output: the calls between its "Capture
// cuda graph begin" and "end" lines are marked captured.
func TestParseCallsGraphCapture(t *testing.T) {
	cl, err := ParseCalls(readTestdata(t, "calls/mixed-graphs.log"))
	if err != nil {
		t.Fatal(err)
	}
	captured := 0
	procs := map[string]bool{}
	for _, c := range cl.Calls {
		procs[c.Process] = true
		if c.Captured {
			captured++
			if c.Bytes > 16*4096*2 {
				t.Errorf("a prefill call marked captured: %+v", c)
			}
		}
	}
	if len(cl.Calls) != 128 || captured != 80 || len(procs) != 4 {
		t.Errorf("%d calls, %d captured, %d processes; want 128, 80, 4", len(cl.Calls), captured, len(procs))
	}
	if len(cl.GraphCapture) != 2 || !strings.Contains(cl.GraphCapture[0], "Capture cuda graph begin") {
		t.Errorf("graph capture lines %q", cl.GraphCapture)
	}
}

// Inspector's JSON: bytes per rank made nccl-tests' size, times kept, and
// the coll_sn gap said to be a sample.
func TestParseCallsInspector(t *testing.T) {
	cl, err := ParseCalls(readTestdata(t, "calls/inspector-gpu0-pid2001.log"))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Format != FormatInspector || len(cl.Calls) != 21 {
		t.Fatalf("format %s, %d calls; want inspector, 21", cl.Format, len(cl.Calls))
	}
	c := cl.Calls[0]
	if c.Op != nccl.AllGather || c.Bytes != 4*256000 || c.TimeUS != 95 || c.CommID != "0x7f8c496ae9f661" || c.Process != "gpu0:2001" {
		t.Errorf("first record %+v", c)
	}
	if len(cl.Notes) != 1 || !strings.Contains(cl.Notes[0], "recorded 7 of communicator 0x7f8c496ae9f661's 8 AllReduce calls") {
		t.Errorf("notes %q: want the sample said (7 of 8 all-reduce coll_sn)", cl.Notes)
	}
	// Cut short: what came before the damage is kept.
	data := readTestdata(t, "calls/inspector-gpu0-pid2001.log")
	cut, err := ParseCalls(data[:len(data)/2])
	if err != nil || len(cut.Calls) == 0 || !strings.Contains(strings.Join(cut.Notes, " "), "unreadable") {
		t.Errorf("cut Inspector output: %v, %+v", err, cut)
	}
}

// TUNING lines alone: rank 0's calls, all-gather sized with the INIT
// line's rank count.
func TestParseCallsTuningOnly(t *testing.T) {
	cl, err := ParseCalls(readTestdata(t, "calls/tuning-only.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !cl.FromTuning || len(cl.Calls) != 10 {
		t.Fatalf("from tuning %v, %d calls; want true, 10", cl.FromTuning, len(cl.Calls))
	}
	if c := cl.Calls[3]; c.Op != nccl.AllGather || c.Bytes != 4*64000 || c.NRanks != 4 {
		t.Errorf("all-gather %+v", c)
	}
}

func TestParseCallsNoCalls(t *testing.T) {
	for _, in := range []string{"", "hello\n", string(readTestdata(t, "fixtures/ag3.txt")), `{"a": 1}`,
		"gpu0:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0x2 - Init COMPLETE\n"} {
		if _, err := ParseCalls([]byte(in)); !errors.Is(err, ErrNoCalls) {
			t.Errorf("%.40q: err %v, want ErrNoCalls", in, err)
		}
	}
}

// A split communicator is named by its parent's identity, split count and
// colour, the same in every process.
func TestParseCallsSplit(t *testing.T) {
	var b strings.Builder
	for r := range 2 {
		p := "h:" + string(rune('1'+r)) + ":1 [0] NCCL INFO "
		b.WriteString(p + "ncclCommInitRankConfig comm 0xa" + string(rune('0'+r)) + " rank " + string(rune('0'+r)) + " nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xfeed - Init COMPLETE\n")
		b.WriteString(p + "ncclCommSplit comm 0xb" + string(rune('0'+r)) + " rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 1 parent 0xa" + string(rune('0'+r)) + " splitCount 1 color " + string(rune('0'+r)) + " key 0 - Init COMPLETE\n")
		b.WriteString(p + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xb" + string(rune('0'+r)) + " [nranks=1] stream 0x3\n")
	}
	cl, err := ParseCalls([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{cl.Calls[0].CommID, cl.Calls[1].CommID}; got[0] != "0xfeed split 1 color 0" || got[1] != "0xfeed split 1 color 1" {
		t.Errorf("split identities %q", got)
	}
}

// FuzzParseCalls: any input gives calls or ErrNoCalls, never a panic, and
// every call keeps the reader's promises.
func FuzzParseCalls(f *testing.F) {
	for _, name := range []string{"nccl.gpu0.1001", "mixed-graphs.log", "inspector-gpu0-pid2001.log", "tuning-only.log"} {
		data := readTestdata(f, "calls/"+name)
		if len(data) > 4096 {
			data = data[:4096]
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cl, err := ParseCalls(data)
		if err != nil {
			if !errors.Is(err, ErrNoCalls) || cl != nil {
				t.Fatalf("err %v with %+v", err, cl)
			}
			return
		}
		if len(cl.Calls) == 0 {
			t.Fatal("no calls and no error")
		}
		for _, c := range cl.Calls {
			if c.Bytes < 0 || c.Bytes > MaxCallBytes || c.Count < 0 || c.NRanks < 0 || c.NRanks > MaxRanks ||
				c.Rank < -1 || c.NRanks > 0 && c.Rank >= c.NRanks || !c.Datatype.Valid() || c.TimeUS < 0 {
				t.Fatalf("call %+v", c)
			}
		}
	})
}

// inspectorLine is one Inspector record with the numbers given as text.
func inspectorLine(rank, nranks, coll, sn, bytes, us string) string {
	return `{"header":{"id":"0xc0","rank":` + rank + `,"n_ranks":` + nranks + `,"nnodes":1},` +
		`"metadata":{"hostname":"h","pid":1},"coll_perf":{"coll":"` + coll + `","coll_sn":` + sn +
		`,"coll_msg_size_bytes":` + bytes + `,"coll_exec_time_us":` + us + `}}` + "\n"
}

// Numbers out of bounds, in every format: the record is skipped and
// counted with its reason, never used (a rank count of 2^44+1 times 1 MiB
// wrapped to 1 MiB; -4 ranks were proposed; 16 TiB became a part search
// refuses). The good record beside it is read.
func TestParseCallsOutOfBounds(t *testing.T) {
	const init = "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xfeed - Init COMPLETE\n"
	coll := func(fn, count, datatype, nranks string) string {
		return "h:1:1 [0] NCCL INFO " + fn + ": opCount 0 sendbuff 0x1 recvbuff 0x2 count " + count + " datatype " + datatype + " op 0 root 0 comm 0xa [nranks=" + nranks + "] stream 0x3\n"
	}
	good := coll("AllReduce", "1024", "7", "4")
	goodInsp := inspectorLine("0", "4", "AllReduce", "0", "4096", "10")
	for _, tc := range []struct {
		name, log, reason string
	}{
		{"Inspector 2^44+1 ranks", goodInsp + inspectorLine("0", "17592186044417", "AllGather", "1", "1048576", "10"), "rank count outside 1..1048576"},
		{"Inspector negative ranks", goodInsp + inspectorLine("0", "-4", "AllReduce", "1", "1048576", "10"), "rank count outside 1..1048576"},
		{"Inspector ranks past int64", goodInsp + inspectorLine("0", "1e30", "AllReduce", "1", "1048576", "10"), "a number that does not read as one"},
		{"Inspector rank outside", goodInsp + inspectorLine("7", "4", "AllReduce", "1", "1048576", "10"), "rank outside its communicator"},
		{"Inspector 16 TiB", goodInsp + inspectorLine("0", "4", "AllReduce", "1", "17592186044416", "10"), "size above 64G, the largest band a search takes"},
		{"Inspector all-gather past 64G over its ranks", goodInsp + inspectorLine("0", "4", "AllGather", "1", "17179869185", "10"), "size above 64G, the largest band a search takes"},
		{"Inspector negative size", goodInsp + inspectorLine("0", "4", "AllReduce", "1", "-1", "10"), "negative count"},
		{"Inspector negative coll_sn", goodInsp + inspectorLine("0", "4", "AllReduce", "-1", "8", "10"), "negative sequence number"},
		{"Inspector time past 1000 s", goodInsp + inspectorLine("0", "4", "AllReduce", "1", "8", "1e12"), "execution time outside 0..1000 s"},
		{"COLL 2^44+1 ranks", init + good + coll("AllGather", "262144", "9", "17592186044417"), "rank count outside 1..1048576"},
		{"COLL negative ranks", init + good + coll("AllReduce", "262144", "9", "-4"), "rank count outside 1..1048576"},
		{"COLL 16 TiB", init + good + coll("AllReduce", "8796093022208", "9", "4"), "size above 64G, the largest band a search takes"},
		{"COLL count past int64", init + good + coll("AllReduce", "99999999999999999999", "9", "4"), "a number that does not read as one"},
		{"COLL datatype past the enum", init + good + coll("AllReduce", "8", "12", "4"), "not one of NCCL's data types"},
		{"COLL last line cut in its comm pointer", init + good + strings.TrimSuffix(coll("AllReduce", "8", "7", "4"), "xa [nranks=4] stream 0x3\n"), "a COLL line cut short"},
		{"INIT rank outside", init + good + "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xb rank 5 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xbeef - Init COMPLETE\n", "rank outside its communicator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := ParseCalls([]byte(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			if len(cl.Calls) != 1 || cl.Calls[0].Bytes != 4096 {
				t.Errorf("%d calls %+v; want the good one of 4096 bytes only", len(cl.Calls), cl.Calls)
			}
			if len(cl.Skipped) != 1 || cl.Skipped[0].Reason != tc.reason || cl.Skipped[0].Records != 1 || cl.Skipped[0].Example == "" {
				t.Errorf("skipped %+v; want 1 record: %s", cl.Skipped, tc.reason)
			}
		})
	}
	// Nothing left: ErrNoCalls says what was skipped and why.
	_, err := ParseCalls([]byte(inspectorLine("0", "-4", "AllReduce", "1", "8", "1")))
	if !errors.Is(err, ErrNoCalls) || !strings.Contains(err.Error(), "1 skipped: rank count outside 1..1048576, e.g. nranks -4") {
		t.Errorf("all skipped: %v", err)
	}
}

// The calls read from a log do not keep the log alive: a run reads one
// file after another and keeps only their calls, so what a CallLog holds
// must be its own (a directory of 348 MB of logs held 2.8 GB while every
// call kept a piece of its file's text, and with it the whole text).
func TestParseCallsKeepsNotTheInput(t *testing.T) {
	const calls = 4000
	size := 0
	parse := func() *CallLog {
		var b strings.Builder
		pad := strings.Repeat("0", 2000) // long lines: the text is much larger than its calls
		b.WriteString("h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n")
		b.WriteString("h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xfeed - Init COMPLETE\n")
		for i := range calls {
			fmt.Fprintf(&b, "h:1:1 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x%s recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xa [nranks=4] stream 0x3\n", i, pad)
		}
		size = b.Len()
		cl, err := ParseCalls([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cl := parse()
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if len(cl.Calls) != calls || cl.Facts == nil || cl.Facts.NCCLVersion != "2.28.9" {
		t.Fatalf("%d calls, facts %+v", len(cl.Calls), cl.Facts)
	}
	// The calls are about 1 MB (4000 of 216 bytes); the text is 8.5 MB.
	if kept > int64(size)/4 {
		t.Errorf("the calls of a %d-byte log keep %d bytes alive: more than the calls themselves", size, kept)
	}
	runtime.KeepAlive(cl)
}

// NCCL logs a TUNING line on rank 0 of a communicator only: in a process
// that is rank 2 of its tensor-parallel group and rank 0 of its
// data-parallel one, a TUNING line is the data-parallel call's, even when
// a tensor-parallel call of the same function and size waits before it.
func TestParseCallsTuningOfRankZeroOnly(t *testing.T) {
	const p = "h:1:1 [2] NCCL INFO "
	log := p + "ncclCommInitRank comm 0xt rank 2 nranks 4 cudaDev 2 nvmlDev 2 busId 1 commId 0xtp - Init COMPLETE\n" +
		p + "ncclCommInitRank comm 0xd rank 0 nranks 2 cudaDev 2 nvmlDev 2 busId 1 commId 0xdp - Init COMPLETE\n" +
		p + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xt [nranks=4] stream 0x3\n" +
		p + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xd [nranks=2] stream 0x3\n" +
		p + "AllReduce: 4096 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n"
	cl, err := ParseCalls([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Calls) != 2 {
		t.Fatalf("%d calls; want 2", len(cl.Calls))
	}
	for _, c := range cl.Calls {
		want := ""
		if c.CommID == "0xdp" {
			want = "TREE LL"
		}
		if got := strings.TrimSpace(c.Algo + " " + c.Proto); got != want {
			t.Errorf("call on %s (rank %d): chose %q; want %q", c.CommID, c.Rank, got, want)
		}
	}
}

// One process's calls stay one process's, numbered in order, whatever its
// lines carry in front: a timestamp format without a trailing space
// (NCCL_DEBUG_TIMESTAMP_FORMAT="[%F %T.%3f]"), a log collector's colours.
func TestParseCallsPrefixedLines(t *testing.T) {
	coll := func(op int) string {
		return fmt.Sprintf("h:1:1 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xa [nranks=4] stream 0x3", op)
	}
	log := "[2026-12-05 10:00:00.120]" + coll(0) + "\n" +
		"[2026-12-05 10:00:01.310]" + coll(1) + "\r\n" +
		"\x1b[36m" + coll(2) + "\x1b[0m\n" +
		"\x1b[1;32mh:1:1\x1b[0m [0] \x1b[33mNCCL INFO\x1b[0m" + strings.TrimPrefix(coll(3), "h:1:1 [0] NCCL INFO") + "\n" +
		coll(4) + "\n"
	cl, err := ParseCalls([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Calls) != 5 {
		t.Fatalf("%d calls; want 5", len(cl.Calls))
	}
	for i, c := range cl.Calls {
		if c.Process != "h:1" || c.Seq != int64(i) || c.Stream != "0x3" {
			t.Errorf("call %d: process %q seq %d stream %q; want h:1, %d, 0x3", i, c.Process, c.Seq, c.Stream, i)
		}
	}
}

// Processes that share one stdout write it in blocks (stdio buffers a
// pipe or a file), so one process's line can be cut and the next
// process's whole line follow it on the same line: the whole line is that
// process's call, the cut one is skipped and said.
func TestParseCallsLineCutByAnother(t *testing.T) {
	coll := func(p, comm string, count int) string {
		return fmt.Sprintf("h:%s:%s [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x2 count %d datatype 7 op 0 root 0 comm %s [nranks=2] stream 0x3", p, p, count, comm)
	}
	for _, cut := range []int{60, 100, 118} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			log := coll("1", "0xa", 1024)[:cut] + coll("2", "0xb", 4096) + "\n"
			cl, err := ParseCalls([]byte(log))
			if err != nil {
				t.Fatal(err)
			}
			if len(cl.Calls) != 1 {
				t.Fatalf("%d calls %+v; want process 2's", len(cl.Calls), cl.Calls)
			}
			if c := cl.Calls[0]; c.Process != "h:2" || c.CommPtr != "0xb" || c.Count != 4096 {
				t.Errorf("call %+v; want h:2's on 0xb, count 4096", c)
			}
			if len(cl.Skipped) != 1 || cl.Skipped[0].Reason != "a COLL line cut short" {
				t.Errorf("skipped %+v; want the cut line", cl.Skipped)
			}
		})
	}
}

// TUNING lines alone do not say their communicator: when the INIT lines
// name communicators of several rank counts (a tensor-parallel group of 4
// beside a data-parallel one of 2), the calls of all of them are pooled,
// and that is said with the rank counts.
func TestParseCallsTuningOnlySeveralRankCounts(t *testing.T) {
	const p = "h:1:1 [0] NCCL INFO "
	log := p + "ncclCommInitRank comm 0xt rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xtp - Init COMPLETE\n" +
		p + "ncclCommInitRank comm 0xd rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xdp - Init COMPLETE\n" +
		p + "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n" +
		p + "AllReduce: 8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
	cl, err := ParseCalls([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if !cl.FromTuning || len(cl.Calls) != 2 || cl.Calls[0].NRanks != 0 {
		t.Fatalf("from tuning %v, calls %+v; want 2 of no known rank count", cl.FromTuning, cl.Calls)
	}
	if notes := strings.Join(cl.Notes, "\n"); !strings.Contains(notes, "communicators of 2, 4 ranks") {
		t.Errorf("notes %q: want the rank counts pooled said", notes)
	}
}
