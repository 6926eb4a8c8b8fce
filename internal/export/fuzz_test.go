package export

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/nccltune/nccltune/internal/benchfmt"
	"github.com/nccltune/nccltune/internal/nccl"
	"github.com/nccltune/nccltune/internal/workload"
)

// fuzzBytes hands out a fuzzer's bytes as the parts of a tuner export.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return c
}

// size is mostly a power of two or a number near one, sometimes any int64.
func (b *fuzzBytes) size() int64 {
	switch k := b.next(); k % 4 {
	case 0:
		return int64(1) << (b.next() % 63)
	case 1:
		return int64(1)<<(b.next()%40) + int64(int8(b.next()))
	case 2:
		var raw [8]byte
		for i := range raw {
			raw[i] = b.next()
		}
		return int64(binary.LittleEndian.Uint64(raw[:]))
	default:
		return int64(b.next())
	}
}

func (b *fuzzBytes) pick(list ...string) string { return list[int(b.next())%len(list)] }

// choices are mostly what NCCL logs (known names, 1..64 channels), now
// and then not: those inputs must be refused.
func (b *fuzzBytes) choices() []benchfmt.Choice {
	n := 1 + int(b.next()%12)
	if b.next()%16 == 0 {
		n = 0
	}
	out := make([]benchfmt.Choice, n)
	for i := range out {
		ch := int(b.next())
		if ch < 4 {
			ch = -ch // 0 and negative counts
		} else {
			ch = 1 + ch%64
		}
		out[i] = benchfmt.Choice{
			Collective: b.pick("AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllGather", "Broadcast", "AllToAll"),
			Bytes:      b.size(),
			Algo:       b.pick("RING", "TREE", "Ring", "Tree", "NVLS", "COLLNET_DIRECT", "PAT", "RING", "TREE", "RING", "TREE", "RING", "TREE", "RING", "TREE", "UNDEF"),
			Proto:      b.pick("SIMPLE", "LL", "LL128", "Simple", "SIMPLE", "LL", "LL128", "LL256"),
			Channels:   ch,
		}
	}
	return out
}

// fuzzBands builds one to three studies' bands from the fuzzer's bytes.
func fuzzBands(data []byte) []*Recommendation {
	b := fuzzBytes(data)
	n := 1 + int(b.next()%3)
	// Shapes are all known or all unknown (0: matched as any): a file
	// with both is right (known shapes come first) but checkCoverage
	// refuses groups that can match one call.
	shapes := []int{2, 4}
	if b.next()%4 == 0 {
		shapes = []int{0}
	}
	var bands []*Recommendation
	for i := 0; i < n; i++ {
		lo, hi := b.size(), b.size()
		s := spark4Study(uint64(i+1), "1M", map[string]string{"NCCL_PROTO": "^LL128"})
		s.Name = fmt.Sprintf("s%d-fuzz", i+1)
		s.Band, s.BandMin, s.BandMax = nccl.FormatSize(lo)+"-"+nccl.FormatSize(hi), lo, hi
		s.Collective = b.pick("all_reduce", "all_reduce", "all_reduce", "all_reduce", "all_reduce", "", "AllGather", "alltoall")
		s.Platform.Nodes, s.Platform.Ranks = shapes[int(b.next())%len(shapes)], shapes[int(b.next())%len(shapes)]
		s.Simulated = b.next()%32 != 0
		bands = append(bands, &Recommendation{Study: s, Env: nccl.Config{"NCCL_PROTO": "^LL128"},
			Defaults: b.choices(), Recommended: b.choices()})
	}
	return bands
}

// oraclePick is what the plugin must answer for an all-reduce of x bytes
// on a communicator of nodes × ranks: when x counts (workload.BinOf) at a
// power of two inside the band of a study of that shape that did not keep
// NCCL's defaults (the first listed wins), the choice NCCL made at that
// size with the recommendation, its channels as recorded; elsewhere the
// algorithm and protocol NCCL chose with its defaults in x's bin, or in
// the recorded bin nearest to it (the smaller on a tie), with channels 0
// (NCCL's own count), from the first band of that shape that recorded
// all-reduce defaults.
func oraclePick(bands []*Recommendation, nodes, ranks int, x uint64) (benchfmt.Pick, bool) {
	allReduce := func(cs []benchfmt.Choice) []benchfmt.Choice {
		var out []benchfmt.Choice
		for _, c := range cs {
			if pc, _ := PluginCollective(c.Collective); pc == "allreduce" {
				out = append(out, c)
			}
		}
		return out
	}
	var members []*Recommendation
	for _, b := range bands {
		if orAny(b.Study.Platform.Nodes) == orAny(nodes) && orAny(b.Study.Platform.Ranks) == orAny(ranks) {
			members = append(members, b)
		}
	}
	bin := workload.BinOf(int64(min(x, math.MaxInt64)))
	for _, b := range members {
		c, _ := bandCollective(b)
		if c != "allreduce" || b.KeepDefaults || bin < b.Study.BandMin || bin > b.Study.BandMax {
			continue
		}
		for _, r := range allReduce(b.Recommended) {
			if r.Bytes == bin {
				return benchfmt.Pick{Algo: nccl.AlgoName(r.Algo), Proto: nccl.ProtoName(r.Proto), Channels: r.Channels}, true
			}
		}
	}
	for _, b := range members {
		d := allReduce(b.Defaults)
		if len(d) == 0 {
			continue
		}
		best, bestD := -1, 0
		for i, c := range d {
			cb := workload.BinOf(c.Bytes)
			dist := bits.Len64(uint64(cb)) - bits.Len64(uint64(bin))
			if dist < 0 {
				dist = -dist
			}
			bb := workload.BinOf(d[max(best, 0)].Bytes)
			if best < 0 || dist < bestD || dist == bestD && (cb < bb || cb == bb && c.Bytes < d[best].Bytes) {
				best, bestD = i, dist
			}
		}
		c := d[best]
		return benchfmt.Pick{Algo: nccl.AlgoName(c.Algo), Proto: nccl.ProtoName(c.Proto)}, true
	}
	return benchfmt.Pick{}, false
}

// FuzzPlanTuner: whatever bands and recorded choices come in, a tuner
// file that is written covers every size from 0 to 2^64−1 without gap or
// overlap for each collective and shape it names, passes the plugin's
// parsing rules, and answers every probe size with the oracle's choice.
// Inputs it cannot place (unknown names, no choices, bad bands, mixed
// simulated and real) are refused with an error, never a panic.
func FuzzPlanTuner(f *testing.F) {
	f.Add([]byte{0, 0, 20, 0, 22, 0, 1, 1, 1, 3, 0, 0, 0, 0, 0, 15, 0, 0, 0, 0, 3, 0, 0, 0, 0, 20, 1, 2, 8})
	f.Add([]byte{1, 0, 19, 0, 21, 0, 1, 1, 1, 4, 0, 0, 0, 0, 0, 10, 0, 1, 1, 0, 3, 0, 0, 0, 0, 20, 0, 2, 4, 0, 18, 0, 25, 2, 2, 2, 1, 2, 0, 0, 0, 0, 0, 15, 0, 0, 1, 2, 0, 0, 0, 0, 22, 1, 1, 64})
	f.Add([]byte("\x02\x02\xff\xff\xff\xff\xff\xff\xff\xff\x00\x01"))
	// A band whose lower edge is negative (-4 to 1 MiB): refused, not
	// read as an empty band.
	f.Add([]byte{0, 1, 1, 0, 251, 0, 20, 0, 0, 0, 1, 3, 1, 8, 0, 0, 15, 0, 0, 8, 0, 0, 17, 0, 0, 8, 0, 0, 20, 0, 0, 8, 0, 0, 22, 0, 0, 1, 1, 4, 0, 0, 15, 0, 0, 4, 0, 0, 20, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		bands := fuzzBands(data)
		var out bytes.Buffer
		if err := Write(&out, FormatTuner, bands, Options{Now: fixedNow}); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		rows, err := parsePluginCSV(out.Bytes())
		if err != nil {
			t.Fatalf("%v\n%s", err, out.Bytes())
		}
		if err := checkCoverage(rows); err != nil {
			t.Fatalf("%v\n%s", err, out.Bytes())
		}
		for _, b := range bands {
			nodes, ranks := b.Study.Platform.Nodes, b.Study.Platform.Ranks
			for _, x := range probeSizes(bands) {
				want, ok := oraclePick(bands, nodes, ranks, x)
				r, matched := pluginMatch(rows, "allreduce", x, nodes, ranks, 1, 0)
				if ok != matched {
					t.Fatalf("%d bytes on %dx%d: a row matches: %v, the oracle has a choice: %v\n%s", x, nodes, ranks, matched, ok, out.Bytes())
				}
				if ok && rowPick(r) != want {
					t.Fatalf("%d bytes on %dx%d: row %d gives %v, want %v\n%s", x, nodes, ranks, r.line, rowPick(r), want, out.Bytes())
				}
			}
		}
	})
}
