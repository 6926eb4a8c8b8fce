package workload

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"go.yaml.in/yaml/v3"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/golden"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/vocab"
)

func readLog(t *testing.T, name string) Input {
	t.Helper()
	data, err := os.ReadFile("../benchfmt/testdata/calls/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return parseLog(t, name, data)
}

func parseLog(t *testing.T, name string, data []byte) Input {
	t.Helper()
	cl, err := benchfmt.ParseCalls(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Input{Name: name, Log: cl}
}

func perProcess(t *testing.T) []Input {
	var ins []Input
	for r := range 4 {
		ins = append(ins, readLog(t, "nccl.gpu0.100"+string(rune('1'+r))))
	}
	return ins
}

func TestBinOf(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{0, 1}, {1, 1}, {2, 2}, {3, 4}, {5, 4}, {6, 8}, {512000, 512 << 10}, {524288, 512 << 10},
		{741455, 512 << 10}, {741456, 1 << 20}, {2048000, 2 << 20}, {1 << 40, 1 << 40},
	} {
		if got := BinOf(tc.size); got != tc.want {
			t.Errorf("BinOf(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}

// BinRange is BinOf's inverse: every size of the range, and none beside
// it, counts at the bin (the decode trace's 327680 bytes at 256K, 512000
// at 512K).
func TestBinRange(t *testing.T) {
	for _, tc := range []struct{ bin, lo, hi int64 }{
		{1, 0, 1}, {2, 2, 2}, {4, 3, 5}, {256 << 10, 185364, 370727}, {512 << 10, 370728, 741455},
		{1 << 62, 3260954456333195521, math.MaxInt64},
	} {
		lo, hi := BinRange(tc.bin)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("BinRange(%d) = %d-%d, want %d-%d", tc.bin, lo, hi, tc.lo, tc.hi)
		}
		if BinOf(lo) != tc.bin || BinOf(hi) != tc.bin || lo > 0 && BinOf(lo-1) == tc.bin || hi < math.MaxInt64 && BinOf(hi+1) == tc.bin {
			t.Errorf("BinRange(%d) = %d-%d is not exactly the sizes BinOf counts there", tc.bin, lo, hi)
		}
	}
	for _, size := range []int64{10240, 81920, 327680, 512000, 2048000} {
		if lo, hi := BinRange(BinOf(size)); size < lo || size > hi {
			t.Errorf("%d bytes: not in its bin's range %d-%d", size, lo, hi)
		}
	}
}

// Four ranks' files: one communicator, each call once, the proposal's
// parts hold ≥ 90 % of the calls.
func TestSummarizePerProcess(t *testing.T) {
	s, err := Summarize(perProcess(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Communicators) != 1 {
		t.Fatalf("%d communicators, want 1", len(s.Communicators))
	}
	c := s.Communicators[0]
	if c.ID != "0x8d3c1f5e2a7b9c01" || c.NRanks != 4 || !slices.Equal(c.Ranks, []int{0, 1, 2, 3}) || len(c.Processes) != 4 || c.Calls != 116 {
		t.Errorf("communicator %+v", c)
	}
	got := map[nccl.Op]int64{}
	for _, o := range c.Ops {
		got[o.Op] = o.Calls
	}
	if want := map[nccl.Op]int64{nccl.AllReduce: 92, nccl.AllGather: 23, nccl.Broadcast: 1}; !mapsEqual(got, want) {
		t.Errorf("calls per op %v, want %v", got, want)
	}
	if ar := c.Ops[0]; ar.Histogram[0].Size != 128<<10 || ar.Histogram[0].Calls != 80 || ar.Histogram[0].Proto != "LL" || ar.Histogram[1].Proto != "SIMPLE" {
		t.Errorf("all-reduce histogram %+v", ar.Histogram)
	}
	p := s.Proposal
	if p.NRanks != 4 || p.By != "calls" || p.Coverage != 1 || s.TimeKnown || s.GraphCaptured {
		t.Errorf("proposal %+v", p)
	}
	if got := p.Workload().String(); got != "all_reduce:131072:80 all_reduce:2097152:12 all_gather:256000:3 all_gather:1024000:20 broadcast:8:1" {
		t.Errorf("workload %s", got)
	}
	if err := p.Workload().Validate(); err != nil {
		t.Error(err)
	}
	golden.Check(t, "testdata/per-process.yaml", s.ConfigYAML(time.Date(2026, 6, 11, 10, 0, 0, 0, time.UTC), "workload.yaml"))
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The YAML is what search --config reads: a "calls" list that
// nccl.ParseCall reads back as the calls the log gave, and a "chose"
// list that nccl.ParseLoggedChoice reads back, one per call.
func TestConfigYAMLReadsBack(t *testing.T) {
	s, err := Summarize(perProcess(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(s.ConfigYAML(time.Now(), ""), &doc); err != nil {
		t.Fatal(err)
	}
	calls, _ := doc["calls"].([]any)
	chose, _ := doc["chose"].([]any)
	if len(chose) != len(calls) {
		t.Errorf("chose: %v, want one choice per call %v (the log has a TUNING line for each)", chose, calls)
	}
	for i, item := range chose {
		spec, _ := item.(string)
		ch, err := nccl.ParseLoggedChoice(spec)
		if err != nil || ch.Bytes != s.Proposal.Calls[i].Bytes || ch.Op != s.Proposal.Calls[i].Op {
			t.Errorf("chose[%d] = %q (%v), want a choice of %s", i, spec, err, s.Proposal.Calls[i].Spec)
		}
	}
	if len(doc) != 3 || doc[vocab.GeneratedKey] != vocab.GeneratedWorkload || len(calls) != len(s.Proposal.Calls) {
		t.Fatalf("YAML keys %v", doc)
	}
	var parts []nccl.Part
	for _, item := range calls {
		spec, _ := item.(string)
		p, err := nccl.ParseCall(spec)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	w := nccl.MergeCalls(parts)
	if err := w.Validate(); err != nil || w.String() != s.Proposal.Workload().String() {
		t.Errorf("read back %s (%v), want %s", w, err, s.Proposal.Workload())
	}
	// All of it, as logged.
	if got := w.CallsText(); got != "all_reduce 131072×80, 2097152×12; all_gather 256000×3, 1024000×20; broadcast 8×1" {
		t.Errorf("full workload %s", got)
	}
}

// Without INIT lines the ranks' streams are joined by their calls.
func TestSummarizeWithoutInit(t *testing.T) {
	var ins []Input
	initLine := regexp.MustCompile(`(?m)^.*Init (START|COMPLETE)\n`)
	for _, in := range perProcess(t) {
		data, _ := os.ReadFile("../benchfmt/testdata/calls/" + in.Name)
		ins = append(ins, parseLog(t, in.Name, initLine.ReplaceAll(data, nil)))
	}
	s, err := Summarize(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Communicators) != 1 || s.Communicators[0].ID != "unnamed-1" || s.Communicators[0].Calls != 116 || len(s.Communicators[0].Processes) != 4 || s.Communicators[0].Ranks != nil {
		t.Fatalf("communicators %+v", s.Communicators)
	}
	if !strings.Contains(strings.Join(s.Notes, " "), "no INIT lines") {
		t.Errorf("notes %q", s.Notes)
	}
}

// A server's output announcing CUDA-graph capture: the counts are flagged
// and the YAML says why.
func TestSummarizeGraphCapture(t *testing.T) {
	s, err := Summarize([]Input{readLog(t, "mixed-graphs.log")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Communicators[0]
	if !s.GraphCaptured || c.Calls != 32 || c.Captured != 20 {
		t.Errorf("graph captured %v, calls %d, captured %d; want true, 32, 20", s.GraphCaptured, c.Calls, c.Captured)
	}
	if y := string(s.ConfigYAML(time.Now(), "")); !strings.Contains(y, "CAUTION: CUDA graphs") {
		t.Errorf("YAML without the graph caution:\n%s", y)
	}
	// Said by the user: every count is a capture.
	s, err = Summarize(perProcess(t), Options{GraphCaptured: true})
	if err != nil || !s.GraphCaptured || s.Communicators[0].Captured != 116 {
		t.Errorf("--graph-captured: %v, %+v", err, s)
	}
}

// Inspector's records: each coll_sn once over the ranks, at the slowest
// rank's time; the proposal weighs time.
func TestSummarizeInspector(t *testing.T) {
	s, err := Summarize([]Input{readLog(t, "inspector-gpu0-pid2001.log")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Communicators[0]
	if c.Calls != 11 || !s.TimeKnown || s.Proposal.By != "time" {
		t.Fatalf("calls %d, time known %v, by %s", c.Calls, s.TimeKnown, s.Proposal.By)
	}
	// sn 1,2,4,5,8,10,11 are all-reduces (181 µs on rank 1), sn 0,3,6,9
	// all-gathers (95 µs).
	if got := c.TimeUS; got != 7*181+4*95 {
		t.Errorf("time %g µs", got)
	}
	if got := s.Proposal.Workload().String(); got != "all_reduce:2048000:7 all_gather:1024000:4" {
		t.Errorf("workload %s", got)
	}
	if !strings.Contains(strings.Join(s.Notes, " "), "sample") {
		t.Errorf("notes %q: the sample must be said", s.Notes)
	}
	// The logged times are said per op and size, as information.
	y := string(s.ConfigYAML(time.Now(), ""))
	for _, want := range []string{"# logged time per op and size (informative: the study measures its own):", "#   all_reduce 2048000 B 7 calls 1267 µs", "#   all_gather 1024000 B 4 calls 380 µs"} {
		if !strings.Contains(y, want) {
			t.Errorf("the header lacks %q:\n%s", want, y)
		}
	}
}

// Communicators of several rank counts: the busiest is proposed, the rest
// are named as left out; --ranks picks another; sends count once each.
func TestSummarizeRankCounts(t *testing.T) {
	pp := strings.Join([]string{
		"h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xpp - Init COMPLETE",
		"h:2:2 [1] NCCL INFO ncclCommInitRank comm 0xb rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2 commId 0xpp - Init COMPLETE",
		"h:1:1 [0] NCCL INFO Send: opCount 0 sendbuff (nil) recvbuff 0x1 count 1048576 datatype 9 op 0 root 1 comm 0xa [nranks=2] stream 0x2",
		"h:2:2 [1] NCCL INFO Recv: opCount 0 sendbuff (nil) recvbuff 0x1 count 1048576 datatype 9 op 0 root 0 comm 0xb [nranks=2] stream 0x2",
		"h:2:2 [1] NCCL INFO Send: opCount 0 sendbuff (nil) recvbuff 0x1 count 1048576 datatype 9 op 0 root 0 comm 0xb [nranks=2] stream 0x2",
		"h:1:1 [0] NCCL INFO Gather: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0x2",
	}, "\n")
	ins := append(perProcess(t), parseLog(t, "pp.log", []byte(pp)))
	s, err := Summarize(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Communicators) != 2 || s.Proposal.NRanks != 4 || len(s.Proposal.Left) != 1 || !strings.HasPrefix(s.Proposal.Left[0], "0xpp (2 ranks") {
		t.Fatalf("proposal %+v", s.Proposal)
	}
	pipe := s.Communicators[1]
	if pipe.Calls != 2 || pipe.Ops[0].Op != nccl.SendRecv || pipe.Other["Gather"] != 1 {
		t.Errorf("pipeline communicator %+v", pipe)
	}
	s, err = Summarize(ins, Options{Ranks: 2})
	if err != nil || s.Proposal.Workload().String() != "sendrecv:2097152:2" || s.Proposal.UnmeasuredText() != "Gather 1 call" {
		t.Errorf("--ranks 2: %v, %v", err, s.Proposal.Workload())
	}
	if _, err := Summarize(ins, Options{Ranks: 8}); err == nil || !strings.Contains(err.Error(), "2, 4 ranks") {
		t.Errorf("--ranks 8: %v", err)
	}
}

// readDir reads every file of a directory of real captures.
func readDir(t *testing.T, dir string) []Input {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for _, e := range entries {
		data, err := os.ReadFile(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, parseLog(t, e.Name(), data))
	}
	return ins
}

// The real captures (benchfmt/testdata/workload: torch.distributed on the
// 4-rank loopback, scripts/serving_mix.py, NCCL 2.28.9): the COLL log and
// Inspector's records of the same mix give one 4-rank communicator, the
// ops with their counts (385 all-reduces, 24 all-gathers, 1 broadcast),
// and bands that hold ≥ 90 % of the calls (of the time, for Inspector).
func TestSummarizeRealCaptures(t *testing.T) {
	for _, tc := range []struct {
		dir, by, id, parts string
		ranks              []int
	}{
		{"torch-coll", "calls", "unnamed-1", "all_reduce:4:1 all_reduce:262144:336 all_reduce:4194304:48 all_gather:2048000:24 broadcast:1048576:1", nil},
		{"inspector", "time", "0x4be5247749b942", "all_reduce:4:1 all_reduce:262144:336 all_reduce:4194304:48 all_gather:2048000:24 broadcast:1048576:1", []int{0, 1, 2, 3}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s, err := Summarize(readDir(t, "../benchfmt/testdata/workload/"+tc.dir), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Communicators) != 1 {
				t.Fatalf("%d communicators, want 1", len(s.Communicators))
			}
			c := s.Communicators[0]
			if c.NRanks != 4 || c.ID != tc.id || !slices.Equal(c.Ranks, tc.ranks) || len(c.Processes) != 4 || c.Calls != 410 {
				t.Errorf("communicator %s: %d ranks %v, %d processes, %d calls", c.ID, c.NRanks, c.Ranks, len(c.Processes), c.Calls)
			}
			got := map[nccl.Op]int64{}
			for _, o := range c.Ops {
				got[o.Op] = o.Calls
			}
			if want := map[nccl.Op]int64{nccl.AllReduce: 385, nccl.AllGather: 24, nccl.Broadcast: 1}; !mapsEqual(got, want) {
				t.Errorf("calls per op %v, want %v", got, want)
			}
			p := s.Proposal
			if p.By != tc.by || p.Coverage < 1-1e-9 || p.NRanks != 4 || p.Workload().String() != tc.parts {
				t.Errorf("proposal by %s holds %.3f: %s; want by %s, all of it, %s", p.By, p.Coverage, p.Workload(), tc.by, tc.parts)
			}
			if err := p.Workload().Validate(); err != nil {
				t.Error(err)
			}
			if s.GraphCaptured {
				t.Error("an eager run flagged as CUDA graphs")
			}
		})
	}
}

// inspectorRecord is one line of NCCL Inspector's output (its v4 schema:
// header, metadata, coll_perf).
func inspectorRecord(id string, rank, nranks int, host string, pid int, coll string, sn, bytes int64, us float64) string {
	return fmt.Sprintf(`{"header":{"id":%q,"comm_name":"unknown","rank":%d,"n_ranks":%d,"nnodes":1},`+
		`"metadata":{"inspector_output_format_version":"v4.0","hostname":%q,"pid":%d},`+
		`"coll_perf":{"coll":%q,"coll_sn":%d,"coll_msg_size_bytes":%d,"coll_exec_time_us":%g,"coll_timing_source":"kernel_gpu"}}`+"\n",
		id, rank, nranks, host, pid, coll, sn, bytes, us)
}

// A 4-rank world communicator and a 2-rank TP group beside it in the same
// processes, 10 calls each with the same coll_sn: Inspector records have
// no comm pointer, so a communicator is its record's id and rank count in
// its process. Two communicators of 10 calls each, and the 4-rank
// proposal holds none of the 2-rank group's all-gathers.
func TestSummarizeInspectorCommunicators(t *testing.T) {
	var ins []Input
	for p := range 4 {
		var b strings.Builder
		for sn := range int64(10) {
			b.WriteString(inspectorRecord("0xworld", p, 4, "gpu", 100+p, "AllReduce", sn, 1<<20, 50))
			if p < 2 {
				b.WriteString(inspectorRecord("0xtp", p, 2, "gpu", 100+p, "AllGather", sn, 64<<10, 20))
			}
		}
		ins = append(ins, parseLog(t, fmt.Sprintf("rank%d.log", p), []byte(b.String())))
	}
	s, err := Summarize(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range s.Communicators {
		got[c.ID] = fmt.Sprintf("%d ranks %v, %d calls", c.NRanks, c.Ranks, c.Calls)
	}
	want := map[string]string{"0xworld": "4 ranks [0 1 2 3], 10 calls", "0xtp": "2 ranks [0 1], 10 calls"}
	if !mapsEqual(got, want) {
		t.Errorf("communicators %v, want %v", got, want)
	}
	p := s.Proposal
	if p.NRanks != 4 || p.Workload().String() != "all_reduce:1048576:10" || !slices.Equal(p.Communicators, []string{"0xworld"}) {
		t.Errorf("proposal for %d ranks of %v: %s; want 4 ranks of [0xworld]: all_reduce:1048576:10", p.NRanks, p.Communicators, p.Workload())
	}
	if s, err := Summarize(ins, Options{Ranks: 2}); err != nil {
		t.Errorf("--ranks 2: %v", err)
	} else if got := s.Proposal.Workload().String(); got != "all_gather:131072:10" {
		t.Errorf("--ranks 2: %s; want all_gather:131072:10", got)
	}
}

// A record out of bounds is skipped and said, per file, never proposed:
// not "-4-rank communicators", not a 16 TiB part search refuses.
func TestSummarizeSaysSkipped(t *testing.T) {
	log := inspectorRecord("0xa", 0, 4, "gpu", 1, "AllReduce", 0, 1<<20, 50) +
		inspectorRecord("0xb", 0, -4, "gpu", 1, "AllReduce", 0, 1<<20, 50) +
		inspectorRecord("0xa", 0, 4, "gpu", 1, "AllReduce", 1, 1<<44, 50)
	s, err := Summarize([]Input{parseLog(t, "r0.log", []byte(log))}, Options{Ranks: 0})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Proposal; p.NRanks != 4 || p.Workload().String() != "all_reduce:1048576:1" {
		t.Errorf("proposal for %d ranks: %s; want 4 ranks, all_reduce:1048576:1", p.NRanks, p.Workload())
	}
	if n := len(s.Sources[0].Skipped); n != 2 {
		t.Errorf("source's skipped %+v, want 2 reasons", s.Sources[0].Skipped)
	}
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"r0.log: 1 record skipped, rank count outside 1..1048576 (e.g. nranks -4)", "r0.log: 1 record skipped, size above 64G"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A call of 0 bytes moves nothing: it is counted and said, never proposed
// (it became a one-byte part).
func TestSummarizeZeroByteCalls(t *testing.T) {
	var b strings.Builder
	for sn := range int64(15) {
		size := int64(1 << 20)
		if sn < 10 {
			size = 0
		}
		b.WriteString(inspectorRecord("0xa", 0, 2, "gpu", 1, "AllReduce", sn, size, 5))
	}
	s, err := Summarize([]Input{parseLog(t, "r0.log", []byte(b.String()))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Communicators[0]
	if c.Calls != 5 || c.ZeroBytes != 10 {
		t.Errorf("calls %d, of 0 bytes %d; want 5, 10", c.Calls, c.ZeroBytes)
	}
	if got := s.Proposal.Workload().String(); got != "all_reduce:1048576:5" {
		t.Errorf("proposal %s; want all_reduce:1048576:5", got)
	}
	if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "communicator 0xa: 10 calls of 0 bytes") {
		t.Errorf("notes do not say the 0-byte calls:\n%s", notes)
	}
}

// Summarize reads the inputs' calls where they are: a run's calls are
// most of its memory, and a copy of them all into one slice doubled it
// (a directory of 3,000 logs peaked at 1.9 GB).
func TestSummarizeCopiesNotTheCalls(t *testing.T) {
	var ins []Input
	for p := range 50 {
		calls := make([]benchfmt.Call, 2000)
		for i := range calls {
			calls[i] = benchfmt.Call{Process: fmt.Sprintf("h:%d", p), CommID: "0xa", Rank: p % 4, NRanks: 4, Function: "AllReduce",
				Op: nccl.AllReduce, Count: 1 << 18, Datatype: 7, Bytes: 1 << 20, Seq: int64(i)}
		}
		ins = append(ins, Input{Name: fmt.Sprintf("r%d", p), Log: &benchfmt.CallLog{Format: benchfmt.FormatNCCLLog, Calls: calls}})
	}
	held := int64(50*2000) * int64(unsafe.Sizeof(benchfmt.Call{}))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := Summarize(ins, Options{})
	runtime.ReadMemStats(&after)
	if err != nil || s.Calls != 2000 {
		t.Fatalf("%v, %d calls; want 2000", err, s.Calls)
	}
	if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > held/4 {
		t.Errorf("Summarize allocated %d bytes over inputs whose calls hold %d", alloc, held)
	}
}

// hostileBreaks are the line terminators some reader of a generated file
// honours (YAML: U+0085, U+2028, U+2029; others: \v, \f), each followed by
// the key a red team used to run a program in front of every launch.
var hostileBreaks = []string{"\n", "\r", "\v", "\f", "\u0085", "\u2028", "\u2029", "\x00", "\x1b"}

// inspectorLines are Inspector records of one communicator: calls
// all-reduces of 1 MiB on each of its ranks.
func inspectorLines(id string, ranks, calls int) string {
	var b strings.Builder
	for sn := range calls {
		for r := range ranks {
			rec := map[string]any{
				"header":    map[string]any{"id": id, "rank": r, "n_ranks": ranks, "nnodes": 1},
				"metadata":  map[string]any{"inspector_output_format_version": "v4.0", "hostname": "gpu0", "pid": 1000*ranks + r},
				"coll_perf": map[string]any{"coll": "AllReduce", "coll_sn": sn, "coll_msg_size_bytes": 1 << 20, "coll_exec_time_us": 100, "coll_timing_source": "kernel_gpu"},
			}
			line, _ := json.Marshal(rec)
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestConfigYAMLHoldsOnlyTheWorkload (issue 38): a communicator id or a
// file name holding a line break followed by "wrapper: …" stays in its
// comment: the YAML has the generated-by mark and calls, nothing else
// (was: a U+2028 in an Inspector comm id made a top-level wrapper: key,
// and search --config ran that program in front of every launch).
func TestConfigYAMLHoldsOnlyTheWorkload(t *testing.T) {
	for _, brk := range hostileBreaks {
		evil := "x" + brk + "wrapper: /tmp/evil.sh" + brk + "budget: 7"
		for _, tc := range []struct {
			name string
			in   []Input
		}{
			// The evil communicator has fewer ranks: the header names it
			// among those left out.
			{"comm id", []Input{parseLog(t, "inspector.json", []byte(inspectorLines("0xgood", 4, 8)+inspectorLines(evil, 2, 2)))}},
			{"file name", []Input{parseLog(t, evil, []byte(inspectorLines("0xgood", 4, 8)))}},
		} {
			s, err := Summarize(tc.in, Options{})
			if err != nil {
				t.Fatalf("%s %q: %v", tc.name, brk, err)
			}
			y := s.ConfigYAML(time.Date(2026, 6, 11, 10, 0, 0, 0, time.UTC), evil)
			if !strings.HasPrefix(string(y), vocab.GeneratedKey+": "+vocab.GeneratedWorkload+"\n") {
				t.Errorf("%s %q: the YAML does not open with the mark:\n%s", tc.name, brk, y)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(y, &doc); err != nil {
				t.Errorf("%s %q: %v\n%s", tc.name, brk, err, y)
				continue
			}
			keys := slices.Sorted(maps.Keys(doc))
			if !slices.Equal(keys, []string{"calls", vocab.GeneratedKey}) {
				t.Errorf("%s %q: YAML keys %q, want the mark and calls only:\n%s", tc.name, brk, keys, y)
			}
			// Every line is the mark, a comment or the calls list.
			for _, l := range strings.Split(strings.TrimSuffix(string(y), "\n"), "\n") {
				if !strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "calls: [") && !strings.HasPrefix(l, vocab.GeneratedKey+": ") {
					t.Errorf("%s %q: line %q", tc.name, brk, l)
				}
			}
		}
	}
}

// callsOf are benchfmt calls of one 4-rank communicator: n calls of op
// (NCCL's function name) at bytes, numbered on from seq.
func callsOf(function string, op nccl.Op, bytes int64, n int, seq *int64) []benchfmt.Call {
	out := make([]benchfmt.Call, n)
	for i := range out {
		out[i] = benchfmt.Call{Process: "h:1", CommID: "0xtp", Rank: 0, NRanks: 4, Function: function, Op: op,
			Count: bytes / 2, Datatype: 9, Bytes: bytes, Seq: *seq}
		*seq++
	}
	return out
}

// TestProposalIsTheCalls (issue 40): the proposal is every (op, logged
// size) the process calls with its calls, as the log gave them. The TP-4
// decode mix of the issue: the 80 all-reduces of 2048000 bytes, 7.6 % of
// the calls but about a quarter of the all-reduce time, were cut by the
// 90 % coverage of calls (was: all_reduce:64K-512K:0.75
// all_reduce:8K:0.25). alltoall is measured as nccl-tests runs it;
// Gather has no nccl-tests benchmark and is named as left out.
func TestProposalIsTheCalls(t *testing.T) {
	type logged struct {
		function string
		op       nccl.Op
		bytes    int64
		n        int
	}
	for _, tc := range []struct {
		name       string
		log        []logged
		want       string
		unmeasured string
	}{
		{"the issue's decode mix", []logged{
			{"AllReduce", nccl.AllReduce, 10240, 760}, {"AllReduce", nccl.AllReduce, 81920, 120}, {"AllReduce", nccl.AllReduce, 327680, 40},
			{"AllReduce", nccl.AllReduce, 512000, 41}, {"AllReduce", nccl.AllReduce, 2048000, 80},
			{"AllGather", nccl.AllGather, 1024000, 13}, {"Broadcast", nccl.Broadcast, 2097152, 1},
		}, "all_reduce 10240×760, 81920×120, 327680×40, 512000×41, 2048000×80; all_gather 1024000×13; broadcast 2097152×1", ""},
		{"two sizes on one power of two stay apart", []logged{
			{"AllReduce", nccl.AllReduce, 10240, 760}, {"AllReduce", nccl.AllReduce, 9000, 3},
		}, "all_reduce 9000×3, 10240×760", ""},
		{"alltoall kept, Gather named", []logged{
			{"AllReduce", nccl.AllReduce, 10240, 100}, {"AlltoAll", nccl.AllToAll, 65536, 4}, {"Gather", "", 4096, 2},
		}, "all_reduce 10240×100; alltoall 65536×4", "Gather 2 calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []benchfmt.Call
			var seq int64
			for _, l := range tc.log {
				calls = append(calls, callsOf(l.function, l.op, l.bytes, l.n, &seq)...)
			}
			s, err := Summarize([]Input{{Name: "r0", Log: &benchfmt.CallLog{Format: benchfmt.FormatNCCLLog, Calls: calls}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := s.Proposal
			if got := p.Workload().CallsText(); got != tc.want {
				t.Errorf("proposed %s\nwant     %s", got, tc.want)
			}
			if p.Coverage < 1-1e-9 {
				t.Errorf("the calls hold %.3f of the calls, want all", p.Coverage)
			}
			if got := p.UnmeasuredText(); got != tc.unmeasured {
				t.Errorf("not measured %q, want %q", got, tc.unmeasured)
			}
			y := string(s.ConfigYAML(time.Date(2026, 6, 11, 10, 0, 0, 0, time.UTC), "w.yaml"))
			if tc.unmeasured != "" && !strings.Contains(y, "# left out: "+tc.unmeasured+": no nccl-tests benchmark runs them") {
				t.Errorf("the header does not name what it left out:\n%s", y)
			}
			if !strings.Contains(y, "the study weights each size by its calls × the time the defaults take there") {
				t.Errorf("the header does not say how the study weighs the calls:\n%s", y)
			}
		})
	}
}

// The decode capture (benchfmt/testdata/workload/torch-decode, 2026-12-05:
// serving_mix.py with hidden 2560, 40 layers, one 400-token prefill and
// decode batches of 2, 16, 64 and 100 tokens): sizes that are no powers
// of two, each proposed as the process called it.
func TestSummarizeRealDecodeCapture(t *testing.T) {
	s, err := Summarize(readDir(t, "../benchfmt/testdata/workload/torch-decode"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Communicators) != 1 || s.Communicators[0].NRanks != 4 || s.Communicators[0].Calls != 1055 {
		t.Fatalf("communicators %+v, want one of 4 ranks and 1055 calls", s.Communicators)
	}
	got := map[nccl.Op]int64{}
	for _, o := range s.Communicators[0].Ops {
		got[o.Op] = o.Calls
	}
	if want := map[nccl.Op]int64{nccl.AllReduce: 1041, nccl.AllGather: 13, nccl.Broadcast: 1}; !mapsEqual(got, want) {
		t.Errorf("calls per op %v, want %v", got, want)
	}
	want := "all_reduce:4:1 all_reduce:10240:240 all_reduce:81920:240 all_reduce:327680:240 all_reduce:512000:240 all_reduce:2048000:80 all_gather:2048000:13 broadcast:1048576:1"
	if p := s.Proposal; p.Workload().String() != want || p.By != "calls" {
		t.Errorf("proposal by %s: %s; want by calls, %s", p.By, p.Workload(), want)
	}
	// Issue 41: the process's own NCCL ran its 81920-byte all-reduces
	// Ring/Simple, where nccl-tests' NCCL chose Ring/LL at 64K; the
	// config keeps the log's choice at each size it calls.
	wantChose := `chose: ["all_reduce:4:tree:ll", "all_reduce:10240:ring:ll", "all_reduce:81920:ring:simple", "all_reduce:327680:ring:simple", "all_reduce:512000:ring:simple", "all_reduce:2048000:ring:simple", "all_gather:2048000:ring:simple", "broadcast:1048576:ring:simple"]` + "\n"
	if y := string(s.ConfigYAML(time.Unix(0, 0), "w.yaml")); !strings.HasSuffix(y, wantChose) {
		t.Errorf("config does not end with the log's choices %q:\n%s", wantChose, y)
	}
}

// A size whose calls NCCL ran two ways has no one choice to keep: the
// config leaves it out of chose:, and keeps the others; a log without
// TUNING lines writes no chose: at all.
func TestConfigChoseOnlyWhatTheLogSays(t *testing.T) {
	const dir = "../benchfmt/testdata/workload/torch-decode"
	ins := readDir(t, dir)
	data, err := os.ReadFile(dir + "/nccl.fakehost0.1057")
	if err != nil {
		t.Fatal(err)
	}
	const line = "AllReduce: 81920 Bytes -> Algo RING proto SIMPLE"
	i := strings.LastIndex(string(data), line)
	if i < 0 {
		t.Fatalf("the capture has no line %q", line)
	}
	mixed := string(data[:i]) + "AllReduce: 81920 Bytes -> Algo RING proto LL" + string(data[i+len(line):])
	tuningless := regexp.MustCompile(`(?m)^.* Bytes -> Algo .*\n`).ReplaceAllString(string(data), "")
	// A name no NCCL we know (a newer NCCL's algorithm) keeps no choice at
	// that size, and the size's calls still count once.
	unknown := strings.ReplaceAll(string(data), "AllReduce: 2048000 Bytes -> Algo RING", "AllReduce: 2048000 Bytes -> Algo RINGX")
	// Choices the environment or a tuner plugin forced are not NCCL's own.
	const at = "fakehost0:1057:1057 [0] NCCL INFO "
	protoEnv := at + "NCCL_PROTO set by environment to LL\n" + string(data)
	notLoaded := at + "NCCL_TUNER_PLUGIN set by environment to /opt/none.so\n" + at + "TUNER/Plugin: Could not find: /opt/none.so. Using internal tuner plugin.\n" + string(data)
	plugin := at + "TUNER/ExamplePlugin: Applied config for collType=allreduce, bytes=81920, pipeOps=1, regBuff=0: algo=ring, proto=ll, channels=default (nodes=4, ranks=4)\n" + string(data)
	for _, tc := range []struct {
		name, log string
		want      []string
		absent    []string
	}{
		{"mixed", mixed, []string{`"all_reduce:10240:ring:ll"`, `"all_reduce:327680:ring:simple"`}, []string{"all_reduce:81920:ring"}},
		{"no TUNING lines", tuningless, nil, []string{"chose:"}},
		{"unknown algorithm", unknown, []string{`"all_reduce:81920:ring:simple"`}, []string{"all_reduce:2048000:ring"}},
		{"NCCL_PROTO from the environment", protoEnv, nil, []string{"chose:"}},
		{"a tuner plugin applied rows", plugin, nil, []string{"chose:"}},
		// NCCL fell back to its own tuner: the choices are its own.
		{"a tuner plugin not loaded", notLoaded, []string{`"all_reduce:81920:ring:simple"`}, nil},
	} {
		var in []Input
		for _, x := range ins {
			if x.Name == "nccl.fakehost0.1057" {
				x = parseLog(t, x.Name, []byte(tc.log))
			}
			in = append(in, x)
		}
		s, err := Summarize(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		y := string(s.ConfigYAML(time.Unix(0, 0), "w.yaml"))
		if c := s.Proposal.Coverage; c > 1+1e-9 || c < 1-1e-9 {
			t.Errorf("%s: the proposal holds %.3f of the calls, want all of them once", tc.name, c)
		}
		if !strings.Contains(y, "all_reduce:81920:240") {
			t.Errorf("%s: the config lost the 81920-byte calls:\n%s", tc.name, y)
		}
		for _, w := range tc.want {
			if !strings.Contains(y, w) {
				t.Errorf("%s: config lacks %s:\n%s", tc.name, w, y)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(y, a) {
				t.Errorf("%s: config holds %s:\n%s", tc.name, a, y)
			}
		}
	}
}

// NCCL 2.29's one-sided calls (ncclPutSignal, ncclSignal, ncclWaitSignal)
// log COLL lines as a Send does: each rank makes its own, so they are not
// in the communicator's sequence of collectives. Rank 0 signals twice and
// rank 1 waits once; the three all-reduces after them are the same three
// calls on both ranks, with INIT lines or without.
func TestSummarizeOneSidedCalls(t *testing.T) {
	coll := func(r int, fn string, count, datatype int) string {
		return fmt.Sprintf("h:%d:%d [%d] NCCL INFO %s: opCount 0 sendbuff 0x1 recvbuff (nil) count %d datatype %d op 0 root %d comm 0xc%d [nranks=2] stream 0x2", r+1, r+1, r, fn, count, datatype, 1-r, r)
	}
	rank := func(r int, init bool, oneSided ...string) string {
		var lines []string
		if init {
			lines = append(lines, fmt.Sprintf("h:%d:%d [%d] NCCL INFO ncclCommInitRank comm 0xc%d rank %d nranks 2 cudaDev %d nvmlDev %d busId 1 commId 0xrma - Init COMPLETE", r+1, r+1, r, r, r, r, r))
		}
		for _, fn := range oneSided {
			lines = append(lines, coll(r, fn, 1024, 7))
		}
		for range 3 {
			lines = append(lines, coll(r, "AllReduce", 262144, 7))
		}
		return strings.Join(lines, "\n") + "\n"
	}
	for _, init := range []bool{true, false} {
		t.Run(fmt.Sprintf("init %v", init), func(t *testing.T) {
			ins := []Input{
				parseLog(t, "rank0", []byte(rank(0, init, "PutSignal", "PutSignal"))),
				parseLog(t, "rank1", []byte(rank(1, init, "WaitSignal"))),
			}
			s, err := Summarize(ins, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Communicators) != 1 {
				t.Fatalf("%d communicators %+v; want 1", len(s.Communicators), s.Communicators)
			}
			c := s.Communicators[0]
			if c.Calls != 3 || c.Other["PutSignal"] != 2 || c.Other["WaitSignal"] != 1 {
				t.Errorf("%d calls, other %v; want the 3 all-reduces, PutSignal 2, WaitSignal 1", c.Calls, c.Other)
			}
			if got := s.Proposal.Workload().String(); got != "all_reduce:1048576:3" {
				t.Errorf("proposal %s; want all_reduce:1048576:3", got)
			}
		})
	}
}

// NCCL 2.21 to 2.23 name a split communicator by its parent and colour
// only (no splitCount): a tensor-parallel and a pipeline group split from
// the world with the same colour carry the same name. In one process,
// two communicators of one name and one rank are two communicators, not
// one: each keeps its calls.
func TestSummarizeSplitsOfOneColour(t *testing.T) {
	var ins []Input
	for r := range 2 {
		p := fmt.Sprintf("h:%d:%d [%d] NCCL INFO ", r+1, r+1, r)
		log := p + fmt.Sprintf("ncclCommInitRank comm 0xw%d rank %d nranks 2 cudaDev %d nvmlDev %d busId 1 commId 0xfeed - Init COMPLETE\n", r, r, r, r) +
			p + fmt.Sprintf("ncclCommSplit comm 0xt%d rank %d nranks 2 cudaDev %d nvmlDev %d busId 1 parent 0xw%d color 0 key %d - Init COMPLETE\n", r, r, r, r, r, r) +
			p + fmt.Sprintf("ncclCommSplit comm 0xp%d rank %d nranks 2 cudaDev %d nvmlDev %d busId 1 parent 0xw%d color 0 key %d - Init COMPLETE\n", r, r, r, r, r, r) +
			p + fmt.Sprintf("AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xt%d [nranks=2] stream 0x3\n", r) +
			p + fmt.Sprintf("AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 2048 datatype 7 op 0 root 0 comm 0xp%d [nranks=2] stream 0x3\n", r)
		ins = append(ins, parseLog(t, fmt.Sprintf("rank%d", r), []byte(log)))
	}
	s, err := Summarize(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Communicators) != 2 || s.Calls != 2 {
		t.Fatalf("%d communicators, %d calls %+v; want 2, 2", len(s.Communicators), s.Calls, s.Communicators)
	}
	if got := s.Proposal.Workload().String(); got != "all_reduce:4096:1 all_reduce:8192:1" {
		t.Errorf("proposal %s", got)
	}
}

// TestProposalCoverageIsDeterministic: the same summary gives the same
// coverage to the last bit, whatever order the pooled calls come in.
func TestProposalCoverageIsDeterministic(t *testing.T) {
	var sizes []Size
	for i, n := range []int64{3, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43} {
		sizes = append(sizes, Size{Bytes: int64(1024 << i), Calls: n})
	}
	s := &Summary{Communicators: []Communicator{{ID: "c", NRanks: 4, Calls: 274,
		Ops: []Op{{Op: nccl.AllReduce, Calls: 274, Histogram: []Bin{{Sizes: sizes}}}}}}}
	var first uint64
	for i := range 20 {
		p, err := propose(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if bits := math.Float64bits(p.Coverage); i == 0 {
			first = bits
		} else if bits != first {
			t.Fatalf("run %d: coverage %v, run 0: %v", i, p.Coverage, math.Float64frombits(first))
		}
	}
}
